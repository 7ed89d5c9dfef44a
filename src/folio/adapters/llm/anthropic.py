"""The Anthropic chat provider: the Messages API through the official ``anthropic`` SDK.

Invariant: SDK types stay in this module. Callers see ``PromptMessage``/``ChatResponse`` in and out,
and every SDK failure arrives as an ``LLMError`` (the SDK retries 429/5xx itself, honouring
``retry-after``, up to ``max_retries`` times).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import anthropic

from folio.adapters.llm._common import (
    PartialToolCall,
    bad_response,
    check_credentials,
    invocation,
    split_system,
    status_error,
    text_or_none,
    timeout_error,
)
from folio.domain.errors import LLMError, LLMErrorCode
from folio.domain.llm import (
    ChatResponse,
    PromptMessage,
    PromptRole,
    StreamEvent,
    TokenUsage,
    ToolDefinition,
)

DEFAULT_MODEL = "claude-sonnet-4-6"
PROVIDER = "anthropic"
_AUTH_HINT = "check ANTHROPIC_API_KEY"
# An error event inside a stream arrives with the stream's HTTP 200: its type says what happened.
_STATUS_OF_ERROR_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


class AnthropicProvider:
    """``ChatProvider`` for Claude models with native tool use."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        max_tokens: int = 1024,
        http_client: Any = None,
    ) -> None:
        """``http_client``: an ``httpx2.Client`` for the SDK (tests pass a mock transport)."""
        check_credentials(PROVIDER, api_key)
        self._model = model or DEFAULT_MODEL
        self._timeout = timeout
        self._max_tokens = max_tokens
        self._max_retries = max_retries
        self._client = anthropic.Anthropic(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client,
        )

    @property
    def provider_name(self) -> str:
        return PROVIDER

    @property
    def model_name(self) -> str:
        return self._model

    @property
    def supports_tools(self) -> bool:
        return True

    # --- ChatProvider ----------------------------------------------------------------------------
    def chat(self, messages: Sequence[PromptMessage]) -> ChatResponse:
        return self._complete(self._params(messages, ()))

    def chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> ChatResponse:
        return self._complete(self._params(messages, tools))

    def stream_chat(self, messages: Sequence[PromptMessage]) -> Iterator[StreamEvent]:
        return self._stream(self._params(messages, ()))

    def stream_chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamEvent]:
        return self._stream(self._params(messages, tools))

    # --- requests --------------------------------------------------------------------------------
    def _params(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> dict[str, Any]:
        system, rest = split_system(messages)
        params: dict[str, Any] = {
            "model": self._model,
            "max_tokens": self._max_tokens,
            "messages": mark_cache_breakpoint(to_anthropic_messages(rest)),
        }
        if system:
            # tools come before the system prompt in the cached prefix: one breakpoint here
            # caches both (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching)
            params["system"] = [{"type": "text", "text": system, "cache_control": _EPHEMERAL}]
        if tools:
            params["tools"] = [to_anthropic_tool(t) for t in tools]
        return params

    def _complete(self, params: dict[str, Any]) -> ChatResponse:
        try:
            return from_anthropic_message(self._client.messages.create(**params))
        except anthropic.AnthropicError as e:
            raise self._translate(e) from e
        except (AttributeError, TypeError, KeyError, ValueError) as e:  # not a message
            raise bad_response(PROVIDER, e) from e

    def _stream(self, params: dict[str, Any]) -> Iterator[StreamEvent]:
        assembler = _StreamAssembler()
        try:
            with self._client.messages.create(**params, stream=True) as events:
                for event in events:
                    text = assembler.feed(event)
                    if text:
                        yield StreamEvent.delta(text)
            response = assembler.response()
        except anthropic.AnthropicError as e:
            raise self._translate(e) from e
        except (AttributeError, TypeError, KeyError, ValueError, IndexError) as e:
            raise bad_response(PROVIDER, e) from e
        yield StreamEvent.done(response)

    def _translate(self, e: anthropic.AnthropicError) -> LLMError:
        if isinstance(e, anthropic.APITimeoutError):
            return timeout_error(PROVIDER, self._timeout)
        if isinstance(e, anthropic.APIConnectionError):
            return LLMError(
                f"Cannot reach Anthropic at {self._client.base_url}: {e}",
                code=LLMErrorCode.UNAVAILABLE,
                provider=PROVIDER,
            )
        if isinstance(e, anthropic.APIStatusError):
            return status_error(
                _status(e),
                _detail(e),
                provider=PROVIDER,
                model=self._model,
                auth_hint=_AUTH_HINT,
                retries=self._max_retries,
            )
        if isinstance(e, anthropic.APIResponseValidationError):
            return bad_response(PROVIDER, e)
        return LLMError(f"Anthropic request failed: {e}", code=LLMErrorCode.UNAVAILABLE)


# --- wire format: requests ----------------------------------------------------------------------
_EPHEMERAL = {"type": "ephemeral"}


def mark_cache_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mark the reader's latest question (the end of the conversation so far) as a prompt-cache
    breakpoint: the turn's later calls (after tool results) and the next turn, whose history
    starts with this prefix, read it from the cache at a tenth of the price (the API looks back
    from each breakpoint for the longest prefix it has cached). The turn's own tool traffic is
    not written to the cache: later turns see it reduced to the passages the answer used, so
    paying the cache-write premium on it would buy nothing. ``messages`` is changed in place."""
    question = next(
        (m for m in reversed(messages) if m["role"] == "user" and isinstance(m["content"], str)),
        None,
    )
    if question is None or not question["content"]:
        return messages  # the API rejects empty text blocks; nothing worth caching ends here
    question["content"] = [
        {"type": "text", "text": question["content"], "cache_control": _EPHEMERAL}
    ]
    return messages


def to_anthropic_tool(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": dict(tool.parameters),
    }


def to_anthropic_messages(messages: Sequence[PromptMessage]) -> list[dict[str, Any]]:
    """Messages API turns. Consecutive tool results become one user turn of ``tool_result`` blocks,
    answering the ``tool_use`` blocks of the assistant turn before it."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role is PromptRole.TOOL_RESULT:
            block = {
                "type": "tool_result",
                "tool_use_id": m.tool_use_id,
                "content": m.content,
                "is_error": m.is_error,
            }
            if out and out[-1].get("_tool_results"):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block], "_tool_results": True})
        elif m.role is PromptRole.ASSISTANT and m.tool_invocations:
            out.append({"role": "assistant", "content": _assistant_blocks(m)})
        else:
            out.append({"role": m.role.value, "content": m.content})
    for turn in out:
        turn.pop("_tool_results", None)
    return out


def _assistant_blocks(message: PromptMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if message.content:  # the API rejects empty text blocks
        blocks.append({"type": "text", "text": message.content})
    blocks.extend(
        {
            "type": "tool_use",
            "id": inv.tool_use_id,
            "name": inv.tool_name,
            "input": dict(inv.arguments),
        }
        for inv in message.tool_invocations
    )
    return blocks


# --- wire format: responses ---------------------------------------------------------------------
def from_anthropic_message(message: Any) -> ChatResponse:
    texts: list[str] = []
    invocations = []
    for block in message.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            invocations.append(invocation(block.name, block.id, block.input))
    usage = anthropic_usage(message.usage)
    return ChatResponse(
        text=text_or_none(texts),
        tool_invocations=tuple(invocations),
        usage=usage,
        model=message.model,
        stop_reason=message.stop_reason,
    )


def anthropic_usage(usage: Any, *, output_tokens: int | None = None) -> TokenUsage:
    """Anthropic counts uncached input (``input_tokens``, after the last cache breakpoint), cache
    writes and cache reads separately; folio's ``input_tokens`` is their sum."""
    fresh = getattr(usage, "input_tokens", 0) or 0
    written = getattr(usage, "cache_creation_input_tokens", 0) or 0
    read = getattr(usage, "cache_read_input_tokens", 0) or 0
    out = output_tokens if output_tokens is not None else getattr(usage, "output_tokens", 0) or 0
    return TokenUsage(fresh + written + read, out, read, written)


class _StreamAssembler:
    """Builds the final response from raw stream events; tool inputs come as partial JSON pieces
    (``input_json_delta``) that are only decoded once complete."""

    def __init__(self) -> None:
        self._texts: dict[int, list[str]] = {}
        self._tools: dict[int, PartialToolCall] = {}
        self._order: list[int] = []
        self._usage = TokenUsage()
        self._output_tokens = 0
        self._model: str | None = None
        self._stop_reason: str | None = None

    def feed(self, event: Any) -> str:
        """Record one event; returns the text it adds ("" for none)."""
        kind = event.type
        if kind == "message_start":
            self._model = event.message.model
            self._usage = anthropic_usage(event.message.usage)
            self._output_tokens = event.message.usage.output_tokens or 0
        elif kind == "content_block_start":
            self._start_block(event.index, event.content_block)
        elif kind == "content_block_delta":
            return self._delta(event.index, event.delta)
        elif kind == "message_delta":
            self._stop_reason = event.delta.stop_reason
            self._output_tokens = event.usage.output_tokens or self._output_tokens
            if getattr(event.usage, "input_tokens", None):
                self._usage = anthropic_usage(event.usage)
        return ""

    def _start_block(self, index: int, block: Any) -> None:
        self._order.append(index)
        if block.type == "tool_use":
            self._tools[index] = PartialToolCall(block.id, block.name)
        elif block.type == "text":
            self._texts[index] = [block.text] if block.text else []

    def _delta(self, index: int, delta: Any) -> str:
        if delta.type == "text_delta":
            self._texts.setdefault(index, []).append(delta.text)
            return str(delta.text)
        if delta.type == "input_json_delta" and index in self._tools:
            self._tools[index].json_parts.append(delta.partial_json)
        return ""

    def response(self) -> ChatResponse:
        """The whole reply; ``ValueError`` for a stream cut before its ``message_delta`` (no stop
        reason), so a fragment is never taken for an answer."""
        if self._stop_reason is None:
            raise ValueError("the stream ended before the model finished its reply")
        texts = [t for i in self._order if i in self._texts for t in self._texts[i]]
        has_text = any(i in self._texts for i in self._order)
        return ChatResponse(
            text="".join(texts) if has_text else None,
            tool_invocations=tuple(
                self._tools[i].finish() for i in self._order if i in self._tools
            ),
            usage=TokenUsage(
                self._usage.input_tokens,
                self._output_tokens,
                self._usage.cache_read_tokens,
                self._usage.cache_write_tokens,
            ),
            model=self._model,
            stop_reason=self._stop_reason,
        )


def _status(e: anthropic.APIStatusError) -> int:
    if e.status_code >= 400:
        return e.status_code
    error = e.body.get("error") if isinstance(e.body, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return _STATUS_OF_ERROR_TYPE.get(str(kind), 500)


def _detail(e: anthropic.APIStatusError) -> str:
    body = e.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(e.message)
