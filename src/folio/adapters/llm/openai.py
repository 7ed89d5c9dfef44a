"""The OpenAI chat provider: Chat Completions through the official ``openai`` SDK.

With ``base_url`` it talks to any OpenAI-compatible server (vLLM, llama.cpp server, LM Studio, ...);
those usually need no key, so a placeholder is sent. Invariant: SDK types stay in this module, and
every SDK failure arrives as an ``LLMError`` (the SDK retries 429/5xx itself, honouring
``retry-after``, up to ``max_retries`` times). Tool arguments that are not valid JSON become a
``ToolInvocation`` with ``parse_error`` set, never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import openai

from folio.adapters.llm._common import (
    PartialToolCall,
    bad_response,
    check_credentials,
    invocation,
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

DEFAULT_MODEL = "gpt-4o-mini"
PROVIDER = "openai"
_AUTH_HINT = "check OPENAI_API_KEY (and OPENAI_BASE_URL if you use a compatible server)"
_PLACEHOLDER_KEY = "not-needed"  # local OpenAI-compatible servers ignore the key
_READ_ERRORS = (AttributeError, TypeError, KeyError, ValueError, IndexError)


class OpenAIProvider:
    """``ChatProvider`` for OpenAI models and OpenAI-compatible servers."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        max_tokens: int | None = None,
        supports_tools: bool = True,
        http_client: Any = None,
    ) -> None:
        """``supports_tools=False`` for a compatible server without tool calling;
        ``http_client``: an ``httpx2.Client`` for the SDK (tests pass a mock transport)."""
        check_credentials(PROVIDER, api_key, base_url)
        self._model = model or DEFAULT_MODEL
        self._timeout = timeout
        self._max_retries = max_retries
        self._max_tokens = max_tokens
        self._supports_tools = supports_tools
        self._client = openai.OpenAI(
            api_key=api_key or _PLACEHOLDER_KEY,
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
        return self._supports_tools

    # --- ChatProvider ---------------------------------------------------------------------------
    def chat(self, messages: Sequence[PromptMessage]) -> ChatResponse:
        return self._complete(self._params(messages, ()))

    def chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> ChatResponse:
        return self._complete(self._params(messages, self._checked(tools)))

    def stream_chat(self, messages: Sequence[PromptMessage]) -> Iterator[StreamEvent]:
        return self._stream(self._params(messages, ()))

    def stream_chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamEvent]:
        return self._stream(self._params(messages, self._checked(tools)))

    # --- requests -------------------------------------------------------------------------------
    def _checked(self, tools: Sequence[ToolDefinition]) -> Sequence[ToolDefinition]:
        if not self._supports_tools:
            raise LLMError(
                f"{PROVIDER} model {self._model} is configured without tool calling",
                code=LLMErrorCode.UNSUPPORTED_FEATURE,
                provider=PROVIDER,
            )
        return tools

    def _params(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self._model,
            "messages": to_openai_messages(messages),
        }
        if tools:
            params["tools"] = [to_openai_tool(t) for t in tools]
        if self._max_tokens is not None:
            params["max_tokens"] = self._max_tokens
        return params

    def _complete(self, params: dict[str, Any]) -> ChatResponse:
        try:
            completion = self._client.chat.completions.create(**params)
            return from_openai_completion(completion)
        except openai.OpenAIError as e:
            raise self._translate(e) from e
        except _READ_ERRORS as e:  # a body that is not a completion (bad JSON, no choices)
            raise bad_response(PROVIDER, e) from e

    def _stream(self, params: dict[str, Any]) -> Iterator[StreamEvent]:
        assembler = _StreamAssembler()
        try:
            chunks = self._client.chat.completions.create(
                **params, stream=True, stream_options={"include_usage": True}
            )
            with chunks:
                for chunk in chunks:
                    text = assembler.feed(chunk)
                    if text:
                        yield StreamEvent.delta(text)
            response = assembler.response()
        except openai.OpenAIError as e:
            raise self._translate(e) from e
        except _READ_ERRORS as e:  # bad JSON, no choices, or a stream cut before it finished
            raise bad_response(PROVIDER, e) from e
        yield StreamEvent.done(response)

    def _translate(self, e: openai.OpenAIError) -> LLMError:
        if isinstance(e, openai.APITimeoutError):
            return timeout_error(PROVIDER, self._timeout)
        if isinstance(e, openai.APIConnectionError):
            return LLMError(
                f"Cannot reach the OpenAI API at {self._client.base_url}: {e}",
                code=LLMErrorCode.UNAVAILABLE,
                provider=PROVIDER,
            )
        if isinstance(e, openai.APIStatusError):
            error = status_error(
                e.status_code,
                _detail(e),
                provider=PROVIDER,
                model=self._model,
                auth_hint=_AUTH_HINT,
                retries=self._max_retries,
            )
            return error
        if isinstance(e, openai.APIResponseValidationError):
            return bad_response(PROVIDER, e)
        return LLMError(f"OpenAI request failed: {e}", code=LLMErrorCode.UNAVAILABLE)


# --- wire format: requests ----------------------------------------------------------------------
def to_openai_tool(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": dict(tool.parameters),
        },
    }


def to_openai_messages(messages: Sequence[PromptMessage]) -> list[dict[str, Any]]:
    return [_to_openai_message(m) for m in messages]


def _to_openai_message(m: PromptMessage) -> dict[str, Any]:
    if m.role is PromptRole.TOOL_RESULT:
        return {"role": "tool", "tool_call_id": m.tool_use_id, "content": m.content}
    if m.role is PromptRole.ASSISTANT and m.tool_invocations:
        return {
            "role": "assistant",
            "content": m.content or None,
            "tool_calls": [
                {
                    "id": inv.tool_use_id,
                    "type": "function",
                    "function": {
                        "name": inv.tool_name,
                        "arguments": json.dumps(dict(inv.arguments)),
                    },
                }
                for inv in m.tool_invocations
            ],
        }
    return {"role": m.role.value, "content": m.content}


# --- wire format: responses ---------------------------------------------------------------------
def from_openai_completion(completion: Any) -> ChatResponse:
    if not completion.choices:
        raise ValueError("the completion has no choices")
    choice = completion.choices[0]
    message = choice.message
    calls = tuple(
        invocation(call.function.name, call.id, call.function.arguments)
        for call in message.tool_calls or ()
    )
    usage = completion.usage
    return ChatResponse(
        text=message.content if message.content or not calls else None,
        tool_invocations=calls,
        usage=openai_usage(usage) if usage else TokenUsage(),
        model=completion.model,
        stop_reason=choice.finish_reason,
    )


def openai_usage(usage: Any) -> TokenUsage:
    """``prompt_tokens`` counts every input token; the automatically cached prefix is reported in
    ``prompt_tokens_details.cached_tokens`` (https://platform.openai.com/docs/guides/prompt-caching);
    OpenAI bills no cache writes."""
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", 0) or 0 if details is not None else 0
    return TokenUsage(usage.prompt_tokens or 0, usage.completion_tokens or 0, cached, 0)


class _StreamAssembler:
    """Builds the final response from chunks: text deltas in order, tool calls merged by their
    ``index`` (id and name arrive first, the JSON arguments in pieces), usage from the last chunk
    (``stream_options.include_usage``)."""

    def __init__(self) -> None:
        self._texts: list[str] = []
        self._calls: dict[int, PartialToolCall] = {}
        self._usage = TokenUsage()
        self._model: str | None = None
        self._finish: str | None = None

    def feed(self, chunk: Any) -> str:
        self._model = chunk.model or self._model
        if chunk.usage:
            self._usage = openai_usage(chunk.usage)
        added: list[str] = []
        for choice in chunk.choices or ():
            delta = choice.delta
            if delta.content:
                added.append(delta.content)
            for piece in delta.tool_calls or ():
                self._merge(piece)
            self._finish = choice.finish_reason or self._finish
        self._texts.extend(added)
        return "".join(added)

    def _merge(self, piece: Any) -> None:
        call = self._calls.setdefault(piece.index, PartialToolCall())
        if piece.id:
            call.tool_use_id = piece.id
        if piece.function is not None:
            if piece.function.name and not call.name:  # sent once, complete, with the id
                call.name = piece.function.name
            if piece.function.arguments:
                call.json_parts.append(piece.function.arguments)

    def response(self) -> ChatResponse:
        """The whole reply. Raises ``ValueError`` for a stream that never finished (no
        ``finish_reason``: cut, or a server that sent no choices), so a fragment is never taken
        for an answer."""
        if self._finish is None:
            raise ValueError("the stream ended before the model finished its reply")
        return ChatResponse(
            text=text_or_none(self._texts),
            tool_invocations=tuple(self._calls[i].finish() for i in sorted(self._calls)),
            usage=self._usage,
            model=self._model,
            stop_reason=self._finish,
        )


def _detail(e: openai.APIStatusError) -> str:
    """The server's error message: OpenAI ``{"error": {"message"}}`` (the SDK unwraps ``error``),
    vLLM ``{"message"}``, or a plain ``{"error": "..."}``."""
    body = e.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
        if body.get("message"):
            return str(body["message"])
    return str(e.message)
