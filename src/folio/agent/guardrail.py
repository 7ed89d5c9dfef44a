"""The optional out-of-scope guardrail: is a message about the book at all?

Off by default: with a model, scope is the model's (the system prompt keeps it on the book), and
offline the extractive answer says honestly when nothing read answers. The setting keeps it
available:

- ``none``: every message passes;
- ``retrieval``: score = the best cosine similarity of the question to the passages read (then,
  below the threshold, of the whole book: a name met later is not refused), or the share of the
  question's words the passages hold when that is higher or the index gives no similarity;
- ``llm``: the provider rates relevance from 0 to 1.

Below the threshold the turn gets a short redirect instead of an answer.

Invariant: only the opening message of a conversation is judged; a later one takes its topic from
the conversation, and no hand-written rule reads its words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from folio.domain.books import Book, SearchHit
from folio.domain.errors import ConfigError
from folio.domain.llm import PromptMessage, TokenUsage
from folio.domain.ports import BookSearcher, ChatProvider, Exchange
from folio.domain.search import query_terms
from folio.domain.window import ReadingWindow

_NUMBER = re.compile(r"\d+(?:\.\d+)?")
DEFAULT_THRESHOLDS = {"retrieval": 0.2, "llm": 0.5}


class GuardrailMode(StrEnum):
    NONE = "none"
    RETRIEVAL = "retrieval"
    LLM = "llm"


@dataclass(frozen=True, slots=True)
class GuardrailVerdict:
    allowed: bool
    score: float | None  # None when not scored (mode none, a message in a conversation)
    reason: str
    llm_calls: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)


class Guardrail:
    """Scores a message's relevance to the book and decides whether to answer it."""

    def __init__(
        self,
        mode: str = GuardrailMode.RETRIEVAL,
        *,
        searcher: BookSearcher | None = None,
        threshold: float | None = None,
        k: int = 3,
    ) -> None:
        self.mode = GuardrailMode(mode)
        if self.mode is GuardrailMode.RETRIEVAL and searcher is None:
            raise ConfigError("The retrieval guardrail needs a book searcher")
        self._searcher = searcher
        self.threshold = threshold if threshold is not None else DEFAULT_THRESHOLDS.get(mode, 0.0)
        self._k = k

    def check(
        self,
        book: Book,
        question: str,
        history: Sequence[Exchange],
        provider: ChatProvider | None = None,
        *,
        searcher: BookSearcher | None = None,
    ) -> GuardrailVerdict:
        """``searcher`` overrides the guardrail's own for this check (a turn passes the searcher
        its agent will use, so a question searched twice in a turn runs once)."""
        if self.mode is GuardrailMode.NONE:
            return GuardrailVerdict(True, None, "guardrail off")
        if history:
            return GuardrailVerdict(True, None, "in a conversation")
        if self.mode is GuardrailMode.LLM:
            if provider is None:
                raise ConfigError("The llm guardrail needs a chat provider")
            return self._llm_verdict(book, question, provider)
        active = searcher or self._searcher
        assert active is not None
        verdict = self._scored(active.search(book, question, k=self._k), question)
        if verdict.allowed or book.position.is_unlimited:
            return verdict
        # Scope is the whole book, an explicit window of it: a name met only later is about the
        # book (its answer then says honestly "not yet"). Only the score leaves here; no passage
        # past the position is shown.
        whole = ReadingWindow.whole_book(book)
        return self._scored(active.search(book, question, k=self._k, window=whole), question)

    def redirect(self, book: Book) -> str:
        """The reply to an out-of-scope message."""
        return (
            f"I can only help with questions about {book.title}. Ask me about its story, its "
            "characters or its ideas, for example what happens in a chapter you have read."
        )

    def _verdict(
        self, score: float, how: str, *, llm_calls: int = 0, usage: TokenUsage | None = None
    ) -> GuardrailVerdict:
        allowed = score >= self.threshold
        reason = f"{how} score {score:.2f} {'>=' if allowed else '<'} {self.threshold:.2f}"
        return GuardrailVerdict(allowed, round(score, 4), reason, llm_calls, usage or TokenUsage())

    def _scored(self, hits: Sequence[SearchHit], question: str) -> GuardrailVerdict:
        lexical = lexical_overlap(question, hits)
        similarities = [h.similarity for h in hits if h.similarity is not None]
        if not similarities:
            return self._verdict(lexical, "lexical overlap")
        return self._verdict(max(0.0, max(similarities), lexical), "similarity/overlap")

    def _llm_verdict(self, book: Book, question: str, provider: ChatProvider) -> GuardrailVerdict:
        response = provider.chat(_rating_prompt(book, question))
        match = _NUMBER.search(response.text or "")
        if match is None:
            return GuardrailVerdict(True, None, "unreadable rating: allowed", 1, response.usage)
        score = min(1.0, max(0.0, float(match.group())))
        return self._verdict(score, "llm", llm_calls=1, usage=response.usage)


def lexical_overlap(question: str, hits: Sequence[SearchHit]) -> float:
    """The share of the question's words (stopwords aside) found in the passages."""
    terms = set(query_terms(question))
    if not terms:
        return 1.0
    found: set[str] = set()
    for hit in hits:
        found |= terms & set(query_terms(hit.chunk.text))
    return len(found) / len(terms)


def _rating_prompt(book: Book, question: str) -> list[PromptMessage]:
    author = f" by {book.author}" if book.author else ""
    return [
        PromptMessage.system(
            f"You check whether a reader's message belongs in a conversation about the book "
            f"{book.title!r}{author}: its story, characters, places, ideas, style or the reading "
            "itself. Reply with one number between 0 and 1 and nothing else: 1 means clearly "
            "about the book, 0 means unrelated (coding help, news, other books, general trivia)."
        ),
        PromptMessage.user(question),
    ]
