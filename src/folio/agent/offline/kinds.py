"""What kind of message the reader sent, told by the embedder: a few generic examples per kind,
and the message is of the kind whose example it is closest to, when that is close enough. Anything
else is a question about the book.

No phrasing is listed as a rule: "cheers, that was useful" is small talk because the embedder
puts it near "thank you, that helps", whatever its words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from folio.domain.passages import PEOPLE, RECAP, SEARCH_HIGHLIGHTS
from folio.domain.ports import Embedder

BOOK = "book"
GREETING, THANKS, GOODBYE = "greeting", "thanks", "goodbye"
ABOUT_FOLIO = "about_folio"  # and the reader tools' own names
SMALL_TALK = frozenset({GREETING, THANKS, GOODBYE})
EXAMPLES: dict[str, tuple[str, ...]] = {
    GREETING: ("hello", "hi there!", "good morning", "how are you?"),
    THANKS: ("thanks", "thank you, that was helpful", "great, thank you!", "ok, got it", "cool"),
    GOODBYE: ("goodbye", "bye, see you later"),
    ABOUT_FOLIO: ("what can you do?", "how do I use you?", "who are you?"),
    PEOPLE: ("who are the main characters?", "which people have we met so far?"),
    SEARCH_HIGHLIGHTS: ("what did I highlight?", "show me my notes", "my highlights"),
    RECAP: ("what has happened so far?", "summarize the story so far", "catch me up on the story"),
}
# Questions about what comes after the reader's position, with the names masked ("does someone
# marry someone in the end?"): whoever they are about, they ask the same thing of the book.
LATER_EXAMPLES = (
    "how does the story end?",
    "what happens next?",
    "what happens to someone later in the book?",
    "does someone end up with someone in the end?",
    "does someone get married eventually?",
    "will someone die later?",
)
# The same questions about what the reader has read: the embedder hardly tells tenses apart
# ("what happened next?" is 0.82 from "what happens next?"), so a question is about later events
# only when it is closer to those than to these. On the dev sets (785 CoQA, 2,147 reformulation
# questions) that refuses none ("What happened next?" three times before), and it keeps every
# later question it told before.
SO_FAR_EXAMPLES = (
    "what happened next?",
    "what did someone do after that?",
    "what happened then?",
    "what has happened so far?",
)
MASK = "someone"
# cosine to the nearest example (all-MiniLM-L6-v2): small talk may be loose (a reply costs
# nothing), a tool instead of a search must be sure
MIN_SIMILARITY = {GREETING: 0.5, THANKS: 0.5, GOODBYE: 0.5, RECAP: 0.65}
# RECAP at 0.65: no question of the dev sets (785 CoQA, 2,147 reformulation, 18 reader questions)
# comes that close to asking for a recap, and 6 of 14 other ways of asking for one do (4 at 0.75)
MIN_TOOL_SIMILARITY = 0.75
# a question this close to asking for the reader's own notes may be one: their highlights on what
# it names are looked up, and shown first when there are any (the book is searched all the same)
MIN_OWN_SIMILARITY = 0.45
REMEMBERED = 4096  # messages whose kind is kept: each earlier question is embedded once


def masked(message: str, names: Sequence[str]) -> str:
    """``message`` with every word of ``names`` replaced by ``MASK``."""
    for word in {w for name in names for w in name.split()}:
        message = re.sub(rf"\b{re.escape(word)}\b", MASK, message)
    return message


class MessageKinds:
    """``kind(message)``: one of the keys of ``EXAMPLES``, or ``BOOK``."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._labels = [k for k, examples in EXAMPLES.items() for _ in examples]
        self._examples: np.ndarray | None = None
        self._later: np.ndarray | None = None
        self._so_far: np.ndarray | None = None
        self._own: np.ndarray | None = None
        self._known: dict[str, str] = {}

    def kind(self, message: str) -> str:
        key = " ".join(message.lower().split())
        if key not in self._known:
            if len(self._known) >= REMEMBERED:
                self._known.clear()
            self._known[key] = self._nearest(message)
        return self._known[key]

    def asks_later(self, message: str, names: Sequence[str]) -> bool:
        """Does ``message`` ask what happens after the reader's position? Told on the message
        with its ``names`` masked, against ``LATER_EXAMPLES``, as sure as a tool must be, and
        closer to them than to ``SO_FAR_EXAMPLES``."""
        if self._later is None or self._so_far is None:
            self._later = np.asarray(self._embedder.embed(list(LATER_EXAMPLES)), dtype=np.float32)
            self._so_far = np.asarray(self._embedder.embed(list(SO_FAR_EXAMPLES)), dtype=np.float32)
        vector = np.asarray(self._embedder.embed([masked(message, names)]), dtype=np.float32)[0]
        later = float(np.max(self._later @ vector))
        return later >= MIN_TOOL_SIMILARITY and later > float(np.max(self._so_far @ vector))

    def own_notes(self, message: str, names: Sequence[str]) -> float:
        """How close ``message`` is to asking for the reader's own highlights and notes: its
        cosine to the nearest of that kind's examples, told with its ``names`` masked (whom a
        question is about does not make it one about the reader's notes)."""
        if self._own is None:
            texts = list(EXAMPLES[SEARCH_HIGHLIGHTS])
            self._own = np.asarray(self._embedder.embed(texts), dtype=np.float32)
        vector = np.asarray(self._embedder.embed([masked(message, names)]), dtype=np.float32)[0]
        return float(np.max(self._own @ vector))

    def book_questions(self, messages: Sequence[str]) -> list[str]:
        return [m for m in messages if self.kind(m) == BOOK]

    def _nearest(self, message: str) -> str:
        if self._examples is None:
            texts = [e for examples in EXAMPLES.values() for e in examples]
            self._examples = np.asarray(self._embedder.embed(texts), dtype=np.float32)
        vector = np.asarray(self._embedder.embed([message]), dtype=np.float32)[0]
        similarities = self._examples @ vector
        best = int(np.argmax(similarities))
        label = self._labels[best]
        return (
            label if similarities[best] >= MIN_SIMILARITY.get(label, MIN_TOOL_SIMILARITY) else BOOK
        )
