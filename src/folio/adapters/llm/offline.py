"""The offline provider: the ``ChatProvider`` of the zero-configuration mode, which has no model.

Offline answers are not produced here: the composition root pairs this provider with the agent's
``ExtractiveStrategy`` (``folio.agent.offline``), which searches the book through the tool registry
and quotes it, working on typed passages. This adapter only names the mode (provider "offline",
model "extractive") and answers honestly when something asks it for a model's reply: it has none
(``LLMError(UNSUPPORTED_FEATURE)``, so an LLM query rewriter falls back to its heuristic).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from folio.domain.errors import LLMError, LLMErrorCode
from folio.domain.llm import ChatResponse, PromptMessage, StreamEvent, ToolDefinition

NO_MODEL = (
    "Offline mode has no language model: folio answers by quoting the book. Configure a provider "
    "(ANTHROPIC_API_KEY, OPENAI_API_KEY or an Ollama host) for generated answers."
)


class OfflineChatProvider:
    """A ``ChatProvider`` without a model (see the module docstring)."""

    @property
    def provider_name(self) -> str:
        return "offline"

    @property
    def model_name(self) -> str:
        return "extractive"

    @property
    def supports_tools(self) -> bool:
        return False

    def chat(self, messages: Sequence[PromptMessage]) -> ChatResponse:
        raise LLMError(NO_MODEL, code=LLMErrorCode.UNSUPPORTED_FEATURE)

    def chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> ChatResponse:
        raise LLMError(NO_MODEL, code=LLMErrorCode.UNSUPPORTED_FEATURE)

    def stream_chat(self, messages: Sequence[PromptMessage]) -> Iterator[StreamEvent]:
        raise LLMError(NO_MODEL, code=LLMErrorCode.UNSUPPORTED_FEATURE)

    def stream_chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamEvent]:
        raise LLMError(NO_MODEL, code=LLMErrorCode.UNSUPPORTED_FEATURE)
