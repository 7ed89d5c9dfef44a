"""The Ollama chat provider: ``POST {host}/api/chat`` over ``httpx`` (JSON, or NDJSON streamed).

Invariant: every failure arrives as an ``LLMError``: a model without tool calling (HTTP 400 "...
does not support tools") is ``UNSUPPORTED_FEATURE`` so the chat falls back to retrieval without
tools, and from then on ``supports_tools`` is False. 429 and 5xx answers are retried up to
``max_retries`` times, waiting what ``retry-after`` asks (else a short exponential backoff).
Ollama's tool calls carry no ids; ids are derived from the request and the call, so the same
request always gets the same ids and different turns of a conversation get different ones.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from folio.adapters.llm._common import (
    bad_response,
    invocation,
    says_no_tools,
    status_error,
    timeout_error,
    tool_names_by_id,
    unsupported_tools,
)
from folio.domain.errors import LLMError, LLMErrorCode
from folio.domain.llm import (
    ChatResponse,
    PromptMessage,
    PromptRole,
    StreamEvent,
    TokenUsage,
    ToolDefinition,
    ToolInvocation,
)

DEFAULT_MODEL = "llama3.1"
DEFAULT_HOST = "http://localhost:11434"
PROVIDER = "ollama"
_AUTH_HINT = "check OLLAMA_HOST and the credentials of any proxy in front of Ollama"
_MAX_WAIT = 60.0  # never sleep longer than this for one retry, whatever retry-after says


class _RetryableStatus(Exception):
    """A 429/5xx answer, raised inside the retry loop only."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


class OllamaProvider:
    """``ChatProvider`` for models served by Ollama."""

    def __init__(
        self,
        *,
        host: str | None = None,
        model: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        supports_tools: bool = True,
    ) -> None:
        self._host = normalise_host(host or DEFAULT_HOST)
        self._model = model or DEFAULT_MODEL
        self._timeout = timeout
        self._max_retries = max_retries
        self._supports_tools = supports_tools
        self._client = httpx.Client(base_url=self._host, timeout=timeout)

    @property
    def provider_name(self) -> str:
        return PROVIDER

    @property
    def model_name(self) -> str:
        return self._model

    @property
    def supports_tools(self) -> bool:
        return self._supports_tools

    @property
    def host(self) -> str:
        return self._host

    def close(self) -> None:
        self._client.close()

    # --- ChatProvider ---------------------------------------------------------------------------
    def chat(self, messages: Sequence[PromptMessage]) -> ChatResponse:
        return self._complete(self._payload(messages, (), stream=False))

    def chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> ChatResponse:
        self._require_tools()
        return self._complete(self._payload(messages, tools, stream=False))

    def stream_chat(self, messages: Sequence[PromptMessage]) -> Iterator[StreamEvent]:
        return self._stream(self._payload(messages, (), stream=True))

    def stream_chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamEvent]:
        self._require_tools()
        return self._stream(self._payload(messages, tools, stream=True))

    # --- requests -------------------------------------------------------------------------------
    def _require_tools(self) -> None:
        if not self._supports_tools:
            raise unsupported_tools(PROVIDER, self._model)

    def _payload(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition], *, stream: bool
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self._model,
            "messages": to_ollama_messages(messages),
            "stream": stream,
        }
        if tools:
            payload["tools"] = [to_ollama_tool(t) for t in tools]
        return payload

    def _complete(self, payload: dict[str, Any]) -> ChatResponse:
        response = self._send(payload, stream=False)
        try:
            data = response.json()
            return from_ollama_reply(data, call_ids=CallIds(payload))
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            raise bad_response(PROVIDER, e) from e

    def _stream(self, payload: dict[str, Any]) -> Iterator[StreamEvent]:
        response = self._send(payload, stream=True)
        assembler = _StreamAssembler(CallIds(payload))
        try:
            for line in response.iter_lines():
                if not line.strip():
                    continue
                chunk = json.loads(line)
                if "error" in chunk:
                    raise self._error(400 if says_no_tools(str(chunk["error"])) else 500, chunk)
                text = assembler.feed(chunk)
                if text:
                    yield StreamEvent.delta(text)
        except httpx.TimeoutException as e:
            raise timeout_error(PROVIDER, self._timeout) from e
        except httpx.TransportError as e:
            raise self._unreachable(e) from e
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            raise bad_response(PROVIDER, e) from e
        finally:
            response.close()
        yield StreamEvent.done(assembler.response())

    # --- HTTP with retries ----------------------------------------------------------------------
    def _send(self, payload: dict[str, Any], *, stream: bool) -> httpx.Response:
        retrying = Retrying(
            stop=stop_after_attempt(self._max_retries + 1),
            wait=_retry_wait,
            retry=retry_if_exception_type(_RetryableStatus),
            reraise=True,
        )
        try:
            return retrying(self._attempt, payload, stream)
        except _RetryableStatus as e:
            raise self._error(e.response.status_code, _body(e.response)) from e
        except httpx.TimeoutException as e:
            raise timeout_error(PROVIDER, self._timeout) from e
        except httpx.TransportError as e:
            raise self._unreachable(e) from e

    def _attempt(self, payload: dict[str, Any], stream: bool) -> httpx.Response:
        request = self._client.build_request("POST", "/api/chat", json=payload)
        response = self._client.send(request, stream=stream)
        if response.is_success:
            return response
        response.read()
        response.close()
        if response.status_code == 429 or response.status_code >= 500:
            raise _RetryableStatus(response)
        raise self._error(response.status_code, _body(response))

    def _error(self, status: int, body: object) -> LLMError:
        detail = str(body.get("error", body)) if isinstance(body, dict) else str(body)
        if status == 404 and "not found" in detail:
            return LLMError(
                f"Ollama has no model {self._model!r} ({detail}): run `ollama pull {self._model}`",
                code=LLMErrorCode.UNAVAILABLE,
                provider=PROVIDER,
                status=status,
            )
        return status_error(
            status,
            detail,
            provider=PROVIDER,
            model=self._model,
            auth_hint=_AUTH_HINT,
            retries=self._max_retries,
        )

    def _unreachable(self, e: httpx.TransportError) -> LLMError:
        return LLMError(
            f"Cannot connect to Ollama at {self._host} ({e}): Ollama must be running there "
            "(start it with `ollama serve`, or set OLLAMA_HOST)",
            code=LLMErrorCode.UNAVAILABLE,
            provider=PROVIDER,
        )


def normalise_host(host: str) -> str:
    """``localhost:11434`` -> ``http://localhost:11434`` (OLLAMA_HOST is often written bare)."""
    host = host.strip().rstrip("/")
    return host if "://" in host else f"http://{host}"


def retry_delay(retry_after: str | None, attempt: int) -> float:
    """Seconds to wait before retry ``attempt`` (1-based): what ``retry-after`` asks for (seconds
    or an HTTP date, capped at a minute), else 0.5 s doubling up to 8 s."""
    if retry_after:
        try:
            return min(max(float(retry_after), 0.0), _MAX_WAIT)
        except ValueError:
            when = email.utils.parsedate_tz(retry_after)
            if when is not None:
                return min(max(email.utils.mktime_tz(when) - time.time(), 0.0), _MAX_WAIT)
    return float(min(0.5 * 2 ** (attempt - 1), 8.0))


def _retry_wait(state: RetryCallState) -> float:
    error = state.outcome.exception() if state.outcome else None
    headers = error.response.headers if isinstance(error, _RetryableStatus) else {}
    return retry_delay(headers.get("retry-after"), state.attempt_number)


def _body(response: httpx.Response) -> object:
    try:
        return response.json()
    except ValueError:
        return response.text


# --- wire format: requests ----------------------------------------------------------------------
def to_ollama_tool(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": dict(tool.parameters),
        },
    }


def to_ollama_messages(messages: Sequence[PromptMessage]) -> list[dict[str, Any]]:
    """Ollama pairs a tool result with its call by the tool's name (``tool_name``), not by id."""
    names = tool_names_by_id(messages)
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role is PromptRole.TOOL_RESULT:
            message = {"role": "tool", "content": m.content}
            name = names.get(m.tool_use_id or "")
            if name:
                message["tool_name"] = name
            out.append(message)
        elif m.role is PromptRole.ASSISTANT and m.tool_invocations:
            calls = [
                {"function": {"name": inv.tool_name, "arguments": dict(inv.arguments)}}
                for inv in m.tool_invocations
            ]
            out.append({"role": "assistant", "content": m.content, "tool_calls": calls})
        else:
            out.append({"role": m.role.value, "content": m.content})
    return out


# --- wire format: responses ---------------------------------------------------------------------
class CallIds:
    """Ids for Ollama's id-less tool calls: a digest of the request plus the call's position, so
    they are reproducible for a given request and distinct across the turns of a conversation."""

    def __init__(self, payload: dict[str, Any]) -> None:
        encoded = json.dumps(payload["messages"], sort_keys=True, ensure_ascii=False)
        self._seed = hashlib.sha256(encoded.encode()).hexdigest()[:12]

    def make(self, index: int, call: dict[str, Any]) -> ToolInvocation:
        function = call["function"]
        call_id = call.get("id") or f"call_{self._seed}_{index}"
        return invocation(function["name"], str(call_id), function.get("arguments"))


def from_ollama_reply(data: dict[str, Any], *, call_ids: CallIds) -> ChatResponse:
    message = data["message"]
    calls = tuple(call_ids.make(i, c) for i, c in enumerate(message.get("tool_calls") or ()))
    content = message.get("content") or ""
    return ChatResponse(
        text=content if content or not calls else None,
        tool_invocations=calls,
        usage=_usage(data),
        model=data.get("model"),
        stop_reason=data.get("done_reason"),
    )


def _usage(data: dict[str, Any]) -> TokenUsage:
    return TokenUsage(int(data.get("prompt_eval_count") or 0), int(data.get("eval_count") or 0))


class _StreamAssembler:
    """Builds the final response from NDJSON chunks: content pieces, complete tool calls (Ollama
    sends each call whole in one chunk), and the counts of the final ``done`` chunk."""

    def __init__(self, call_ids: CallIds) -> None:
        self._call_ids = call_ids
        self._texts: list[str] = []
        self._calls: list[ToolInvocation] = []
        self._final: dict[str, Any] = {}

    def feed(self, chunk: dict[str, Any]) -> str:
        message = chunk.get("message") or {}
        for call in message.get("tool_calls") or ():
            self._calls.append(self._call_ids.make(len(self._calls), call))
        if chunk.get("done"):
            self._final = chunk
        text = str(message.get("content") or "")
        if text:
            self._texts.append(text)
        return text

    def response(self) -> ChatResponse:
        if not self._final:
            raise bad_response(PROVIDER, "the stream ended before its final chunk")
        content = "".join(self._texts)
        return ChatResponse(
            text=content if content or not self._calls else None,
            tool_invocations=tuple(self._calls),
            usage=_usage(self._final),
            model=self._final.get("model"),
            stop_reason=self._final.get("done_reason"),
        )
