"""Conversation context: which stored messages go into the prompt, and how they are rendered.

Invariant: the window is made of whole turns, so a tool call is never separated from its result and
the window never starts in the middle of a turn. Older turns' tool results are shortened (the query
and the start of each passage stay, so the model knows what it already looked up); the most recent
turn is kept whole so follow-ups ("what happened to him?") can use its passages.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from itertools import groupby
from typing import Any

from folio.domain.conversations import ChatMessage, MessageRole
from folio.domain.llm import PromptMessage, PromptRole

_ROLES = {
    MessageRole.USER: PromptRole.USER,
    MessageRole.ASSISTANT: PromptRole.ASSISTANT,
    MessageRole.TOOL_RESULT: PromptRole.TOOL_RESULT,
}
MESSAGE_OVERHEAD_TOKENS = 4


def to_prompt_message(message: ChatMessage) -> PromptMessage:
    """A stored message as the model sees it (tool calls and tool_use ids kept)."""
    return PromptMessage(
        _ROLES[message.role],
        message.content,
        tool_use_id=message.tool_use_id,
        tool_invocations=message.tool_invocations,
        is_error=message.is_error,
    )


def estimate_tokens(messages: Sequence[PromptMessage]) -> int:
    """A cheap token estimate (about four characters per token)."""
    chars = 0
    for m in messages:
        chars += len(m.content)
        chars += sum(
            len(i.tool_name) + len(json.dumps(dict(i.arguments), default=str))
            for i in m.tool_invocations
        )
    return chars // 4 + MESSAGE_OVERHEAD_TOKENS * len(messages)


def shorten_tool_result(content: str, *, passage_chars: int = 300) -> str:
    """A tool result reduced to what a later turn needs: the query, where each passage is, and the
    first ``passage_chars`` characters of its text."""
    try:
        envelope = json.loads(content)
    except ValueError:
        return _clip(content, passage_chars * 2)
    data = envelope.get("data") if isinstance(envelope, dict) else None
    if not isinstance(data, dict):
        return content if len(content) <= passage_chars * 2 else _clip(content, passage_chars * 2)
    short = dict(data)
    if isinstance(data.get("results"), list):
        short["results"] = [_short_passage(r, passage_chars) for r in data["results"]]
    if isinstance(data.get("text"), str):
        short["text"] = _clip(data["text"], passage_chars * 2)
    short["shortened"] = True
    return json.dumps({**envelope, "data": short}, ensure_ascii=False)


def _short_passage(result: Any, passage_chars: int) -> Any:
    if not isinstance(result, dict):
        return result
    keep = {k: result[k] for k in ("chunk_id", "chapter", "pages") if k in result}
    keep["text"] = _clip(str(result.get("text", "")), passage_chars)
    return keep


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


class FullHistoryStrategy:
    """Implements ``ConversationContextStrategy``: the most recent whole turns, at most
    ``max_messages`` messages and about ``token_budget`` tokens (oldest turns dropped first).

    ``max_messages`` counts the conversation as the reader sees it (questions and answers); the
    tool calls and results of a kept turn come with it and are paid for by the token budget, so a
    turn that searched costs no more of the message cap than one that did not."""

    def __init__(
        self,
        *,
        max_messages: int = 20,
        token_budget: int = 8000,
        keep_full_turns: int = 1,
        passage_chars: int = 160,
    ) -> None:
        self.max_messages = max_messages
        self.token_budget = token_budget
        self.keep_full_turns = keep_full_turns
        self.passage_chars = passage_chars

    def build_context(self, history: Sequence[ChatMessage]) -> list[PromptMessage]:
        turns = [list(group) for _, group in groupby(history, key=lambda m: m.turn_number)]
        turns = self._last_turns(turns)
        rendered = [
            self._render(turn, full=i >= len(turns) - self.keep_full_turns)
            for i, turn in enumerate(turns)
        ]
        while len(rendered) > 1 and estimate_tokens(_flat(rendered)) > self.token_budget:
            rendered.pop(0)
        if rendered and estimate_tokens(_flat(rendered)) > self.token_budget:
            rendered = [self._render(turns[-1], full=False)]
        return _flat(rendered)

    def _last_turns(self, turns: list[list[ChatMessage]]) -> list[list[ChatMessage]]:
        kept: list[list[ChatMessage]] = []
        count = 0
        for turn in reversed(turns):
            visible = sum(1 for m in turn if _conversational(m))
            if kept and count + visible > self.max_messages:
                break
            kept.insert(0, turn)
            count += visible
        return kept

    def _render(self, turn: list[ChatMessage], *, full: bool) -> list[PromptMessage]:
        out = []
        for message in turn:
            prompt = to_prompt_message(message)
            if not full and prompt.role is PromptRole.TOOL_RESULT:
                short = shorten_tool_result(prompt.content, passage_chars=self.passage_chars)
                prompt = replace(prompt, content=short)
            out.append(prompt)
        return out


def _conversational(message: ChatMessage) -> bool:
    """A question or an answer, as opposed to tool plumbing (calls and their results)."""
    if message.role is MessageRole.USER:
        return True
    return message.role is MessageRole.ASSISTANT and not message.tool_invocations


def _flat(turns: list[list[PromptMessage]]) -> list[PromptMessage]:
    return [m for turn in turns for m in turn]
