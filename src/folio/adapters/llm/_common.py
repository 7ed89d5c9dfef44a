"""Helpers shared by the HTTP chat providers (Anthropic, OpenAI-compatible, Ollama).

Invariant: nothing here knows a vendor's wire format; it turns raw pieces (status codes, JSON
argument strings, streamed fragments) into domain values and domain errors, the same way for every
provider.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from folio.domain.errors import LLMError, LLMErrorCode
from folio.domain.llm import PromptMessage, PromptRole, ToolInvocation

# Phrases servers use when a model or server cannot do tool calling (Ollama: "... does not support
# tools"; vLLM without a tool parser: '"auto" tool choice requires --enable-auto-tool-choice').
_NO_TOOLS_MARKERS = ("does not support tools", "tool choice requires", "tools are not supported")


def split_system(messages: Sequence[PromptMessage]) -> tuple[str | None, list[PromptMessage]]:
    """The system prompt (all system messages joined) and the other messages, in order."""
    system = [m.content for m in messages if m.role is PromptRole.SYSTEM and m.content]
    rest = [m for m in messages if m.role is not PromptRole.SYSTEM]
    return ("\n\n".join(system) or None), rest


def tool_names_by_id(messages: Iterable[PromptMessage]) -> dict[str, str]:
    """``tool_use_id -> tool_name`` for every invocation made by an assistant message."""
    return {
        inv.tool_use_id: inv.tool_name
        for m in messages
        if m.role is PromptRole.ASSISTANT
        for inv in m.tool_invocations
    }


def parse_arguments(raw: str | None) -> tuple[dict[str, Any], str | None]:
    """Decode a model's JSON argument string: ``(arguments, None)`` or ``({}, parse_error)``.

    Invalid arguments are not an exception: the tool registry answers the model with an
    INVALID_ARGUMENTS error so that it can try again.
    """
    if raw is None or not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError as e:
        return {}, f"arguments are not valid JSON ({e}): {raw[:200]}"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {type(value).__name__}: {raw[:200]}"
    return value, None


def invocation(name: str, tool_use_id: str, arguments: object) -> ToolInvocation:
    """A ``ToolInvocation`` from arguments that are already decoded (or a JSON string)."""
    if isinstance(arguments, str):
        args, error = parse_arguments(arguments)
        return ToolInvocation(name, tool_use_id, args, parse_error=error)
    if isinstance(arguments, Mapping):
        return ToolInvocation(name, tool_use_id, dict(arguments))
    if arguments is None:
        return ToolInvocation(name, tool_use_id, {})
    error = f"arguments must be a JSON object, got {type(arguments).__name__}"
    return ToolInvocation(name, tool_use_id, {}, parse_error=error)


@dataclass
class PartialToolCall:
    """A tool call being assembled from streamed fragments (id and name first, then JSON pieces)."""

    tool_use_id: str = ""
    name: str = ""
    json_parts: list[str] = field(default_factory=list)

    def finish(self) -> ToolInvocation:
        return invocation(self.name, self.tool_use_id, "".join(self.json_parts))


def text_or_none(parts: Iterable[str]) -> str | None:
    """Joined text, or None when the model produced no text at all."""
    collected = list(parts)
    return "".join(collected) if collected else None


def says_no_tools(detail: str) -> bool:
    lowered = detail.lower()
    return any(marker in lowered for marker in _NO_TOOLS_MARKERS)


def status_error(
    status: int, detail: str, *, provider: str, model: str, auth_hint: str, retries: int
) -> LLMError:
    """The domain error for an HTTP error status from a provider (after its retries were spent)."""
    where = f"{provider} (model {model})"
    if status in (401, 403):
        return LLMError(
            f"{provider} rejected the credentials (HTTP {status}): {auth_hint}. {detail}".strip(),
            code=LLMErrorCode.AUTH,
            provider=provider,
            status=status,
        )
    if status == 429:
        return LLMError(
            f"{where} is rate limiting requests (still HTTP 429 after {retries} retries); "
            f"wait a moment and try again. {detail}".strip(),
            code=LLMErrorCode.RATE_LIMITED,
            provider=provider,
            status=status,
        )
    if status == 408:
        return LLMError(
            f"{where} timed out (HTTP 408). {detail}".strip(),
            code=LLMErrorCode.TIMEOUT,
            provider=provider,
            status=status,
        )
    if status >= 500:
        return LLMError(
            f"{where} is unavailable (HTTP {status}). {detail}".strip(),
            code=LLMErrorCode.UNAVAILABLE,
            provider=provider,
            status=status,
        )
    if says_no_tools(detail):
        return LLMError(
            f"{where} does not support tool calling: {detail}",
            code=LLMErrorCode.UNSUPPORTED_FEATURE,
            provider=provider,
            status=status,
        )
    if status == 404:
        return LLMError(
            f"{where} was not found (HTTP 404): check the model name. {detail}".strip(),
            code=LLMErrorCode.UNAVAILABLE,
            provider=provider,
            status=status,
        )
    return LLMError(
        f"{where} rejected the request (HTTP {status}). {detail}".strip(),
        code=LLMErrorCode.BAD_RESPONSE,
        provider=provider,
        status=status,
    )


def bad_response(provider: str, problem: object) -> LLMError:
    return LLMError(
        f"{provider} sent a response folio cannot read: {problem}",
        code=LLMErrorCode.BAD_RESPONSE,
        provider=provider,
    )


def timeout_error(provider: str, timeout: float) -> LLMError:
    return LLMError(
        f"{provider} did not answer within {timeout:g} s (set FOLIO_LLM_TIMEOUT to wait longer)",
        code=LLMErrorCode.TIMEOUT,
        provider=provider,
    )


def unsupported_tools(provider: str, model: str) -> LLMError:
    return LLMError(
        f"{provider} model {model} does not support tool calling",
        code=LLMErrorCode.UNSUPPORTED_FEATURE,
        provider=provider,
    )


def check_credentials(provider: str, api_key: str | None, base_url: str | None = None) -> None:
    """Raise the ``AUTH`` error a provider without its key would raise, before its SDK (about a
    second to import) is loaded: ``anthropic`` needs a key, ``openai`` a key or a compatible
    server's URL."""
    if api_key or (provider == "openai" and base_url):
        return
    message = {
        "anthropic": "No Anthropic API key: set ANTHROPIC_API_KEY (or choose another provider)",
        "openai": (
            "No OpenAI API key: set OPENAI_API_KEY, or OPENAI_BASE_URL for a compatible server"
        ),
    }[provider]
    raise LLMError(message, code=LLMErrorCode.AUTH, provider=provider)
