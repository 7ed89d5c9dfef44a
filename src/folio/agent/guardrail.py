"""The out-of-scope guardrail: is a message about the book at all?

Modes: ``none`` (every message passes), ``retrieval`` (score = the best cosine similarity of the
question to the book's passages, or the share of the question's content words found in them when
that is higher or the index gives no similarity; scope is the whole book, not the part read; a
question in the first person with a word the book never uses, close to no passage, is about the
reader's own life: "How do I reset my router password?"),
``llm`` (the provider rates relevance from 0 to 1). Below the threshold the turn gets a short
redirect instead of an answer.

Invariant: follow-ups, small talk and questions about the book itself ("what is this chapter
about?") are never blocked; only a message that stands alone and has nothing to do with the book is.
In a conversation, a question that names nothing takes its topic from it ("What was the weather
like?" at turn 11 asks about the scene, whatever words the book uses); only one about the reader's
own life ("How do I bake bread?") stands alone there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from folio.agent.followup import FollowUpDetector, content_words, is_small_talk, proper_nouns
from folio.domain.books import Book, ReadingPosition, SearchHit
from folio.domain.errors import ConfigError
from folio.domain.llm import PromptMessage, TokenUsage
from folio.domain.ports import BookSearcher, ChatProvider, Exchange

# Words that make a question about the book whatever the passages say.
_BOOK_WORDS_TEXT = """
book novel story chapter chapters page pages author writer wrote written character characters
protagonist narrator plot theme themes ending beginning scene scenes title reading summary summarise
summarize
"""
BOOK_WORDS = frozenset(_BOOK_WORDS_TEXT.split())
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
DEFAULT_THRESHOLDS = {"retrieval": 0.2, "llm": 0.5}
MAX_WORDS_CHECKED = 8  # content words searched one by one before a refusal
# The reader as subject or owner: "How do I...", "Can you help with my taxes?" ("tell me",
# "remind me" ask the companion for anything, the book included)
_FIRST_PERSON = re.compile(r"\b(?:I|my|mine|myself)\b", re.I)
# A passage at least this close (cosine) to a question makes it the book's, whatever its words
CLOSE_SIMILARITY = 0.4
_CANNOT_STAND_ALONE = FollowUpDetector(nameless=False)
_NAMES_NOTHING = FollowUpDetector()


class GuardrailMode(StrEnum):
    NONE = "none"
    RETRIEVAL = "retrieval"
    LLM = "llm"


@dataclass(frozen=True, slots=True)
class GuardrailVerdict:
    allowed: bool
    score: float | None  # None when not scored (mode none, follow-up, small talk)
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
        is_follow_up: Callable[[str, Sequence[Exchange]], bool] | None = None,
        is_small_talk: Callable[[str], bool] = is_small_talk,
        k: int = 3,
    ) -> None:
        self.mode = GuardrailMode(mode)
        if self.mode is GuardrailMode.RETRIEVAL and searcher is None:
            raise ConfigError("The retrieval guardrail needs a book searcher")
        self._searcher = searcher
        self.threshold = threshold if threshold is not None else DEFAULT_THRESHOLDS.get(mode, 0.0)
        self._is_follow_up = is_follow_up or continues_the_conversation
        self._is_small_talk = is_small_talk
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
        its agent will use, so the question is searched once for both)."""
        if self.mode is GuardrailMode.NONE:
            return GuardrailVerdict(True, None, "guardrail off")
        if self._is_small_talk(question):
            return GuardrailVerdict(True, None, "small talk")
        if self._is_follow_up(question, history):
            return GuardrailVerdict(True, None, "follow-up")
        if _about_the_book(book, question):
            return GuardrailVerdict(True, None, "mentions the book")
        if self.mode is GuardrailMode.LLM:
            if provider is None:
                raise ConfigError("The llm guardrail needs a chat provider")
            return self._llm_verdict(book, question, provider)
        return self._retrieval_verdict(book, question, searcher or self._searcher)

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

    def _retrieval_verdict(
        self, book: Book, question: str, searcher: BookSearcher | None
    ) -> GuardrailVerdict:
        assert searcher is not None
        whole = book.with_position(ReadingPosition())
        if _FIRST_PERSON.search(question):
            own = self._own_life(whole, question, searcher)
            if own is not None:
                return own
        verdict = self._scored(searcher.search(book, question, k=self._k), question)
        if verdict.allowed:
            return verdict
        # Scope is judged on the whole book: a name met only later ("Who is Justine?" early in
        # the novel) is about the book, and gets an honest "not yet" from the answer, never a
        # refusal. Only the score leaves this method; no passage past the position is shown.
        if not book.position.is_unlimited:
            verdict = self._scored(searcher.search(whole, question, k=self._k), question)
            if verdict.allowed:
                return verdict
        # A name the book uses anywhere is about the book, whatever else the question asks
        # ("What did Mr. Mason stop?"): one search for the names alone, only before a refusal.
        if self._names_the_book(whole, question, searcher):
            return self._verdict(1.0, "a name the book uses")
        # Every word the question asks with is the book's own, in some form its index matches
        # ("disappeared" / "disappearance"): a short question about the story ("Who died?",
        # "Who wins?") close to no passage as a whole. One search per word, stopping at the first
        # word the book never uses ("sourdough", "python"), only before a refusal, and only for
        # a short question (a longer message is judged by its score above).
        words = list(dict.fromkeys(content_words(question)))
        if 0 < len(words) <= MAX_WORDS_CHECKED and all(
            _used_by_the_book(searcher, whole, word) for word in words
        ):
            return self._verdict(1.0, "every word is the book's")
        return verdict

    def _own_life(
        self, whole: Book, question: str, searcher: BookSearcher
    ) -> GuardrailVerdict | None:
        """The refusal of a question about the reader's own life ("How do I reset my router
        password?"): in the first person, with a word the book never uses, naming nothing the
        book names, and close to no passage. ``None`` when the question may be the book's ("Why
        do I pity the creature?", "I don't get why Victor left")."""
        if self._names_the_book(whole, question, searcher):
            return None
        similarities = [
            h.similarity
            for h in searcher.search(whole, question, k=self._k)
            if h.similarity is not None
        ]
        if similarities and max(similarities) >= CLOSE_SIMILARITY:
            return None
        words = list(dict.fromkeys(content_words(question)))
        foreign = next(
            (w for w in words[:MAX_WORDS_CHECKED] if not _used_by_the_book(searcher, whole, w)),
            None,
        )
        if foreign is None:
            return None
        score = max(similarities, default=0.0)
        reason = f"the reader's own question: the book never uses {foreign!r}"
        return GuardrailVerdict(False, round(score, 4), reason)

    def _names_the_book(self, whole: Book, question: str, searcher: BookSearcher) -> bool:
        """``question`` names someone or something the book names somewhere (one search for the
        names alone)."""
        names = [n for n in proper_nouns(question) if len(n) > 2]
        return bool(names) and _named_in(names, searcher.search(whole, " ".join(names), k=self._k))

    def _scored(self, hits: Sequence[SearchHit], question: str) -> GuardrailVerdict:
        lexical = lexical_overlap(question, hits)
        similarities = [h.similarity for h in hits if h.similarity is not None]
        if not similarities:
            return self._verdict(lexical, "lexical overlap")
        # A name the passages share is evidence even when the embedding is unsure.
        return self._verdict(max(0.0, max(similarities), lexical), "similarity/overlap")

    def _llm_verdict(self, book: Book, question: str, provider: ChatProvider) -> GuardrailVerdict:
        response = provider.chat(_rating_prompt(book, question))
        match = _NUMBER.search(response.text or "")
        if match is None:
            return GuardrailVerdict(True, None, "unreadable rating: allowed", 1, response.usage)
        score = min(1.0, max(0.0, float(match.group())))
        return self._verdict(score, "llm", llm_calls=1, usage=response.usage)


def continues_the_conversation(question: str, history: Sequence[Exchange]) -> bool:
    """Does ``question`` take its topic from the conversation before it? When it cannot be read
    alone ("what happened to him?", "Why?"), and when it names nothing it is about ("Who were
    pitted against each other?") - unless it speaks of the reader in the first person: "How do I
    bake bread?" late in a conversation is the reader's own question, judged on its own."""
    if _CANNOT_STAND_ALONE.is_follow_up(question, history):
        return True
    return not _FIRST_PERSON.search(question) and _NAMES_NOTHING.is_follow_up(question, history)


def lexical_overlap(question: str, hits: Sequence[SearchHit]) -> float:
    """The share of the question's content words found in the passages (0 when none match)."""
    terms = set(content_words(question))
    if not terms:
        return 1.0
    found: set[str] = set()
    for hit in hits:
        found |= terms & set(content_words(hit.chunk.text))
    return len(found) / len(terms)


def _named_in(names: Sequence[str], hits: Sequence[SearchHit]) -> bool:
    return any(
        re.search(rf"\b{re.escape(word)}\b", hit.chunk.text)
        for name in names
        for word in name.split()
        if len(word) > 2
        for hit in hits
    )


def _used_by_the_book(searcher: BookSearcher, book: Book, word: str) -> bool:
    """The lexical index matches ``word`` somewhere in ``book`` (a passage it ranks)."""
    return any(hit.lexical_rank is not None for hit in searcher.search(book, word, k=5))


def _about_the_book(book: Book, question: str) -> bool:
    words = set(content_words(question))
    own = set(content_words(f"{book.title} {book.author or ''}"))
    return bool(words & (BOOK_WORDS | own))


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
