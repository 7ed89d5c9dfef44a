"""Query rewriting with a model (the ``QueryRewriter`` port), for providers without tool use.

``LLMQueryRewriter`` asks the chat model with ``prompts/reformulation_prompt.md`` to turn the
reader's message into a self-contained search query. When the model fails, the query is the
question with the reader's earlier questions after it, most recent first (``with_earlier``): no
hand-written rule guesses what a pronoun means.

Invariant: a question with no history comes back unchanged, and no model call is made for it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from folio.agent.context import clip
from folio.agent.prompt_builder import PromptBuilder
from folio.domain.errors import LLMError
from folio.domain.llm import PromptMessage
from folio.domain.ports import ChatProvider, Exchange

log = logging.getLogger(__name__)

REFORMULATION_PROMPT = "reformulation_prompt.md"


def with_earlier(question: str, history: Sequence[Exchange]) -> str:
    """``question`` followed by the reader's earlier questions, most recent first."""
    return " ".join([question, *(q for q, _ in reversed(history))])


class LLMQueryRewriter:
    """Rewrites with a chat model (``prompts/reformulation_prompt.md``); ``with_earlier`` when the
    model fails or says nothing."""

    def __init__(
        self,
        provider: ChatProvider,
        *,
        history_turns: int = 6,
    ) -> None:
        self._provider = provider
        self._turns = history_turns

    def rewrite(self, question: str, history: Sequence[Exchange]) -> str:
        if not history:
            return question
        prompt = build_reformulation_prompt(question, history[-self._turns :])
        try:
            response = self._provider.chat([PromptMessage.user(prompt)])
        except LLMError as e:
            log.warning(
                "query rewriting by %s failed (%s); searching with the earlier questions",
                self._name(),
                e,
            )
            return with_earlier(question, history[-self._turns :])
        rewritten = _clean_model_output(response.text or "")
        return rewritten or with_earlier(question, history[-self._turns :])

    def _name(self) -> str:
        return f"{self._provider.provider_name}/{self._provider.model_name}"


def build_reformulation_prompt(question: str, history: Sequence[Exchange]) -> str:
    """The template with ``$history`` and ``$question`` filled in."""
    lines = []
    for earlier, answer in history:
        lines.append(f"User: {earlier.strip()}")
        if answer:
            lines.append(f"Assistant: {clip(answer, 399)}")
    conversation = "\n".join(lines) or "(no earlier messages)"
    return PromptBuilder.from_template(
        REFORMULATION_PROMPT, history=conversation, question=question.strip()
    ).build()


def _clean_model_output(text: str) -> str:
    """First non-empty line, without a "Rewritten question:" label or surrounding quotes."""
    for line in text.strip().splitlines():
        line = (
            re.sub(
                r"^\s*(rewritten( question)?|standalone( question)?|question)\s*:\s*",
                "",
                line,
                flags=re.IGNORECASE,
            )
            .strip()
            .strip('"“”')
            .strip()
        )
        if line:
            return line
    return ""
