"""Conversation context: which stored messages go into the prompt, and how they are rendered.

Invariants:
- the window is made of whole turns, and the window never starts in the middle of a turn;
- an earlier turn is its question and its answer, nothing else: the answer already says what it
  found and cites where ("(Chapter 5, p. 41)"); its tool calls and their results are left out (a
  follow-up's own searches bring fresh passages), so history costs what the conversation says
  (the offline policy, which sends no model anything, keeps them: ``keep_calls``);
- nothing outside the reading window reaches the model from history: a turn whose tool results
  held text past it (the reader has since moved the position back) keeps only its question and a
  note in place of its answer.

Prompt caching (Anthropic ``cache_control``, OpenAI's automatic prefix cache) serves a request's
longest prefix seen before, so the prefix must stay byte-identical from call to call:
- a turn is rendered the same way wherever it sits in the window, and the window's first turn moves
  in blocks of ``block_turns``, never one turn at a time: turn N+1's request starts with turn N's
  (system, tools, the turns before N, turn N's question and answer) except at a block boundary;
- the system prompt depends only on the book, its reading position and its series
  (``prompt_builder``), and the tools offered only on the book's state (``tools.offered``): both
  change within a conversation only when the reader moves or imports highlights.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from itertools import groupby

from folio.domain.conversations import ChatMessage
from folio.domain.llm import PromptMessage, PromptRole
from folio.domain.passages import (
    Passage,
    PassageText,
    SearchResults,
    ToolOutcome,
    decode_tool_result,
)
from folio.domain.window import ReadingWindow

MESSAGE_OVERHEAD_TOKENS = 4


def to_prompt_message(message: ChatMessage) -> PromptMessage:
    """A stored message as the model sees it (tool calls and tool_use ids kept)."""
    return message.message


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
    """A tool result in the codec's brief form: the query, where each passage is, and the first
    ``passage_chars`` characters of its text (what folio's window sent of earlier turns until it
    kept only their questions and answers; ``benchmarks/bench_turn.py`` replays it)."""
    outcome = decode_tool_result(content)
    if outcome.payload is None:
        return content if len(content) <= passage_chars * 2 else clip(content, passage_chars * 2)
    return _brief(outcome, outcome.passages, passage_chars)


def _brief(outcome: ToolOutcome, passages: Sequence[Passage], passage_chars: int) -> str:
    """``outcome`` keeping only ``passages``, their text cut at ``passage_chars``, in the brief
    form of the one codec."""
    short = tuple(replace(p, text=clip(p.text, passage_chars)) for p in passages)
    payload = outcome.payload
    if isinstance(payload, SearchResults):
        payload = replace(payload, passages=short)
    elif isinstance(payload, PassageText) and short:
        payload = replace(payload, passage=short[0])
    return replace(outcome, payload=payload).to_json(brief=True)


def clip(text: str, limit: int) -> str:
    """``text`` on one line (white space collapsed), cut after ``limit`` characters with "…"."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


class RecentTurnsStrategy:
    """Implements ``ConversationContextStrategy``: the most recent whole turns, at most
    ``max_messages`` messages and about ``token_budget`` tokens, each earlier turn reduced to its
    question and answer.

    When the conversation outgrows either cap, the oldest turns are dropped ``block_turns`` at a
    time, so the window's start, and with it the cached prompt prefix, changes only every few
    turns.

    ``keep_calls``: each earlier turn also keeps its tool calls and their results, between its
    question and its answer, for a policy that reads what it searched and found before (the
    offline one, which sends no model anything: where the current subject started, which passage
    the last answer came from first). They count in neither cap: the caps measure the
    conversation."""

    def __init__(
        self,
        *,
        max_messages: int = 20,
        token_budget: int = 8000,
        block_turns: int = 5,
        message_chars: int = 8000,
        keep_calls: bool = False,
    ) -> None:
        self.max_messages = max_messages
        self.token_budget = token_budget
        self.block_turns = max(1, block_turns)
        # Any stored question or answer longer than a new message may be (an import, an older
        # version) is cut to this, so what follows the window reads a bounded history.
        self.message_chars = message_chars
        self.keep_calls = keep_calls

    def build_context(
        self, history: Sequence[ChatMessage], *, window: ReadingWindow | None = None
    ) -> list[PromptMessage]:
        turns = [list(group) for _, group in groupby(history, key=lambda m: m.turn_number)]
        turns = [_withheld(turn) if _reaches_past(turn, window) else turn for turn in turns]
        rendered = [self._render(turn) for turn in turns]
        return _flat(rendered[self._first_kept(rendered) :])

    def _first_kept(self, rendered: list[list[PromptMessage]]) -> int:
        """The first turn of the window: a multiple of ``block_turns`` (so it moves in blocks),
        the earliest one that fits both caps; the last turn is always kept."""
        said = [[m for m in r if _conversational(m)] for r in rendered]
        visible = [len(r) for r in said]
        tokens = [estimate_tokens(r) for r in said]
        last = max(0, len(rendered) - 1)
        start = 0
        while start < last and (
            sum(visible[start:]) > self.max_messages or sum(tokens[start:]) > self.token_budget
        ):
            start = min(start + self.block_turns, last)
        return start

    def _render(self, turn: list[ChatMessage]) -> list[PromptMessage]:
        """The turn as later turns see it: its question and its answer."""
        out: list[PromptMessage] = []
        for message in turn:
            if self.keep_calls and message.tool_invocations:
                out.append(to_prompt_message(message).with_content(""))
                continue
            if self.keep_calls and message.role is PromptRole.TOOL_RESULT:
                out.append(to_prompt_message(message))
                continue
            if not _conversational(message) or not message.content:
                continue
            prompt = to_prompt_message(message)
            if len(prompt.content) > self.message_chars:
                prompt = prompt.with_content(prompt.content[: self.message_chars] + "…")
            out.append(prompt)
        return out


WITHHELD_ANSWER = (
    "[This answer is withheld: it drew on pages past where the reader is now. Do not guess at it.]"
)


def _reaches_past(turn: list[ChatMessage], window: ReadingWindow | None) -> bool:
    """Did any tool result of ``turn`` hold text outside ``window`` (past the position, in
    matter that counts as unread again, in a volume no longer in it)?"""
    if window is None:
        return False
    return not window.allows_all(
        (p.book_id or window.book.id, p.char_start, p.char_end)
        for message in turn
        if message.role is PromptRole.TOOL_RESULT
        for p in decode_tool_result(message.content).passages
    )


def _withheld(turn: list[ChatMessage]) -> list[ChatMessage]:
    """The turn's question, and a note instead of its tool traffic and answer."""
    question = [m for m in turn if m.role is PromptRole.USER]
    answers = [m for m in turn if m.role is PromptRole.ASSISTANT and not m.tool_invocations]
    if not answers:
        return question
    return [*question, answers[-1].with_content(WITHHELD_ANSWER)]


def _conversational(message: ChatMessage | PromptMessage) -> bool:
    """A question or an answer, as opposed to tool plumbing (calls and their results)."""
    if message.role is PromptRole.USER:
        return True
    return message.role is PromptRole.ASSISTANT and not message.tool_invocations


def _flat(turns: list[list[PromptMessage]]) -> list[PromptMessage]:
    return [m for turn in turns for m in turn]
