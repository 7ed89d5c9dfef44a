"""What kind of message the reader sent, told by the embedder: generic examples of each kind, and
of ordinary questions about a book, and the message is of the kind of the examples it is closest
to, when that is close enough. Anything else is a question about the book.

No phrasing is listed as a rule: "cheers, that was useful" is small talk because the embedder
puts it near "thank you, that helps", whatever its words. Asking for the story so far, or about
later events, must also be closer to those examples than to ordinary questions: the embedder
hardly tells "what happened next?" from "what happens next?" (0.82), or "what has happened in
the book so far?" from a question about one event, so the nearest examples of both sides are
weighed, not one bar alone. The names a message uses are masked there ("does someone marry
someone in the end?"): whom it asks about does not make its kind.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from folio.domain.lexicon import name_pattern
from folio.domain.passages import LIST_CHAPTERS, PEOPLE, RECAP, SEARCH_HIGHLIGHTS
from folio.domain.ports import Embedder

BOOK = "book"
LATER = "later"
GREETING, THANKS, GOODBYE = "greeting", "thanks", "goodbye"
ABOUT_FOLIO = "about_folio"  # and the reader tools' own names
SMALL_TALK = frozenset({GREETING, THANKS, GOODBYE})
# Asking for the recap of the chapter the reader is in, not of the whole story so far, nor of the
# next chapter or the book's last ("what happens in the next chapter?", "what happens in the last
# chapter?"). These are the recap's examples too, routing such a message to it...
THIS_CHAPTER_ROUTED = ("what happened in this chapter?", "summarize the chapter I just finished")
# ...and these only tell it from the story so far (as the recap's, they took "what chapter is
# this?" and "what happens in the last chapter?"): the nearest of all of them and the recap's
THIS_CHAPTER = "this_chapter"
THIS_CHAPTER_EXAMPLES = ("recap this chapter", "what was this chapter about?")
EXAMPLES: dict[str, tuple[str, ...]] = {
    GREETING: ("hello", "hi there!", "good morning", "how are you?"),
    THANKS: ("thanks", "thank you, that was helpful", "great, thank you!", "ok, got it", "cool"),
    GOODBYE: ("goodbye", "bye, see you later"),
    ABOUT_FOLIO: ("what can you do?", "how do I use you?", "who are you?"),
    PEOPLE: (
        "who are the main characters?",
        "which people have we met so far?",
        "list the characters",
        "who is in this book?",
        "what characters have appeared so far?",
        "remind me who everyone is",
        "who are the important people in the story?",
        "give me a list of the characters met so far",
    ),
    SEARCH_HIGHLIGHTS: ("what did I highlight?", "show me my notes", "my highlights"),
    LIST_CHAPTERS: (  # the reader's own position: the chapters reached
        "what chapter am I on?",
        "where am I in the book?",
        "where am I?",
        "how far have I read?",
        "what page am I on?",
        "how much of the book have I read?",
        "what is my reading position?",
    ),
    RECAP: (
        "what has happened so far?",
        "summarize the story so far",
        "catch me up on the story",
        "give me a recap",
        "recap the book up to here",
        "what's the story been about until now?",
        "can you remind me of the plot so far?",
        "sum up what I have read",
        "a summary of the chapters I've read",
        "what happened in the chapters I read?",
        "tell me the story up to where I am",
        "what is the plot so far?",
        "I forgot what happened, can you refresh my memory?",
        "give me an overview of the book so far",
        *THIS_CHAPTER_ROUTED,
    ),
}
# Questions about what comes after the reader's position, names masked: whoever they are about,
# they ask the same thing of the book.
LATER_EXAMPLES = (
    "how does the story end?",
    "what happens next?",
    "what happens to someone later in the book?",
    "does someone end up with someone in the end?",
    "does someone get married eventually?",
    "will someone die later?",
    "what happens in the next chapter?",
    "how does the book finish?",
    "what will someone do later on?",
    "is someone going to survive?",
    "who wins in the end?",
    "what happens after this?",
    "does it have a happy ending?",
    "what comes later in the book?",
    "will someone come home again?",
    "is someone going to be alright?",
    "will things work out for someone?",
    "what becomes of someone in the end?",
)
# Asking where someone first comes into the story: an ordinary question (not the recap, not
# later events: "Which chapter does Willoughby first appear in?" was told it may ask past the
# position) that the sentence introducing them answers, as "who is someone?" (both kinds')
MEETING = "how did someone meet someone?"  # where the one met later comes in
FIRST_MET = (
    "when do we first meet someone?",
    "in which chapter does someone first appear?",
    "where is someone first mentioned?",
    MEETING,
)
# Ordinary questions about what the reader has read, names masked, among them the past-tense
# twins of the later-events examples ("did someone get married?"): a message closer to one of
# these than to a tool's or the later events' examples is searched in the book.
# Asking what came right after the scene just discussed ("What did he do then?"): the text
# after the last answer's first quote answers it
NEXT = ("what happened then?", "what did someone do after that?", "what happened next?")
# Asking who tells the story ("Who is the narrator?"): the people met who narrate answer it
NARRATOR = "who tells the story?"
BOOK_EXAMPLES = (
    "who is someone?",
    "why did someone leave?",
    "what happened at the party?",
    "where does someone live?",
    "what did someone say about the letter?",
    *NEXT,
    "why was someone angry?",
    "what does the house look like?",
    "when did someone arrive?",
    "what did someone think of someone?",
    "how old is someone?",
    "what happened to someone?",
    "where did they go?",
    "what is someone's job?",
    "did someone like it?",
    "what did the letter say?",
    "what has happened between someone and someone?",
    "what has someone done so far?",
    "where does it say something?",
    "what is the name of the dog?",
    "how many children does someone have?",
    "how did the story begin?",
    "what happened before this?",
    "did someone get married?",
    "who won?",
    "did someone die?",
    "what did someone do earlier in the book?",
    "is someone married?",
    "where does the story take place?",
    NARRATOR,
    *FIRST_MET,
)
# Asking who someone is, in other words than "who is someone?", names masked: the answer leads
# with the sentence that introduces them, as it does for that question
WHO = "who"
WHO_EXAMPLES = (
    "who is someone?",
    "tell me about someone",
    "what do we know about someone?",
    "describe someone",
    "what is someone like?",
    "who was someone again?",
    "what kind of person is someone?",
    *FIRST_MET,
)
MASK = "someone"
# cosine to the nearest example (all-MiniLM-L6-v2): small talk may be loose (a reply costs
# nothing), a tool instead of a search must be sure
MIN_SIMILARITY = {GREETING: 0.5, THANKS: 0.5, GOODBYE: 0.5}
# ...or less close, for a message of a few words asking nothing ("thanks! how?" asks) that no
# question about a book is near: "ok thanks" is 0.43 from "thanks" and 0.15 from the nearest
# book question. None of the dev sets' 2,932 questions is small talk so ("How?": 0.36 and 0.21;
# at a margin of 0.15 it would be)
MIN_LOOSE_SMALL_TALK = 0.35
SMALL_TALK_MARGIN = 0.2
SMALL_TALK_WORDS = 4
# The recap and the later-events reply against an ordinary question: the kind whose NEAREST
# examples are closest on average, when that is at least MIN_ASKED (later events: as sure as a
# tool, and its nearest example closer than the nearest ordinary question's). Measured on the
# dev sets' 2,932 questions (785 CoQA, 2,147 reformulation) and 28 other ways of asking for the
# recap, the people or later events (tests/integration/test_message_kinds.py): 10 dev questions
# routed (5 "what chapter is this?" to the recap, 3 to the people as before, none refused) and
# 15 of the 28; the few examples and one bar before: 3 and 8. The people at MIN_ASKED routed 10
# more dev questions (an author's "characters"): they keep MIN_TOOL_SIMILARITY. With the reader's
# position and this chapter's recap among the examples: 10 still, 4 "what chapter is this?" now
# to the position (a reader asks where they are), 3 to the recap, 3 to the people.
CONTRASTED = (RECAP, LATER)
NEAREST = 3
MIN_ASKED = 0.55
MIN_TOOL_SIMILARITY = 0.75
# a question less close than that to later events may still ask about them ("Spoil the ending for
# me.", "What will happen to Marianne?", "Will Marianne recover?"): its answer is told to stop at
# the position. 16 of the dev sets' 2,932 questions ("what happens if they win?", "Who wins?")
MIN_MAY_LATER = 0.5
# a question this close to asking for the reader's own notes may be one: their highlights on what
# it names are looked up, and shown first when there are any (the book is searched all the same)
MIN_OWN_SIMILARITY = 0.45
MIN_WHO = 0.75
# "What did he do then?" is 0.67 from "what happened then?"; none of the CoQA dev set's 773
# questions is this close to one of ``NEXT`` before any other ordinary question (4 at 0.6)
MIN_NEXT = 0.65
# "Who is the narrator?" is 0.70 from ``NARRATOR``, "Who is telling this story?" 0.85; of the dev
# sets' 2,932 questions only "Whose tale was this?" (0.72) is this close (the anthology's people
# include no narrator: it is searched as before)
MIN_NARRATOR = 0.65
REMEMBERED = 4096  # messages whose kind is kept: each earlier question is embedded once


def examples() -> dict[str, tuple[str, ...]]:
    """Every kind's examples, ``LATER`` and ``BOOK`` included, in the order they are embedded
    (their vectors ship with the model: ``scripts/known_vectors.py``)."""
    return {
        **EXAMPLES,
        LATER: LATER_EXAMPLES,
        BOOK: BOOK_EXAMPLES,
        WHO: WHO_EXAMPLES,
        THIS_CHAPTER: THIS_CHAPTER_EXAMPLES,
    }


def masked(message: str, names: Sequence[str]) -> str:
    """``message`` with each of ``names`` replaced by one ``MASK`` ("Does Ahab catch Moby
    Dick?" -> "Does someone catch someone?"; "Mr. Knightley": its stops too)."""
    for name in sorted(names, key=len, reverse=True):
        message = name_pattern(name).sub(MASK, message)
    return message


@dataclass(frozen=True, slots=True)
class _Told:
    """A message's kind, whether it may ask about later events, its closeness to asking for
    the reader's own notes, and its cosine to every example (names masked)."""

    kind: str
    may_later: bool
    own: float
    similarities: np.ndarray = field(repr=False, compare=False)


class MessageKinds:
    """``kind(message)``: one of the keys of ``EXAMPLES``, ``LATER`` or ``BOOK``; ``names`` tells
    the names a message uses (masked before it is embedded)."""

    def __init__(
        self, embedder: Embedder, names: Callable[[str], Sequence[str]] = lambda _: ()
    ) -> None:
        self._embedder = embedder
        self._names = names
        kinds = examples()
        self._texts = [e for texts in kinds.values() for e in texts]
        self._labels = np.array([k for k, texts in kinds.items() for _ in texts])
        self._examples: np.ndarray | None = None
        self._known: dict[str, _Told] = {}

    def kind(self, message: str) -> str:
        return self._told(message).kind

    def _told(self, message: str) -> _Told:
        """What is told of ``message``, embedded once (and once more with its names masked)."""
        key = " ".join(message.split())  # as written: its names are masked by their capitals
        if key not in self._known:
            if len(self._known) >= REMEMBERED:
                self._known.clear()
            self._known[key] = self._nearest(message)
        return self._known[key]

    def asks_later(self, message: str) -> bool:
        """Does ``message`` ask what happens after the reader's position?"""
        return self.kind(message) == LATER

    def may_ask_later(self, message: str) -> bool:
        """Might ``message`` ask about later events, though not surely enough to be refused? Its
        nearest later-events example (names masked) is at least ``MIN_MAY_LATER`` and closer
        than its nearest ordinary question: the answer then says plainly that nothing past the
        position can be told, above what the text read says."""
        return self._told(message).may_later

    def own_notes(self, message: str) -> float:
        """How close ``message`` is to asking for the reader's own highlights and notes: its
        cosine to the nearest of that kind's examples, told with its names masked (whom a
        question is about does not make it one about the reader's notes)."""
        return self._told(message).own

    def asks_who(self, message: str) -> bool:
        """Does ``message`` ask who someone it names is ("tell me about Marianne", "what is
        Edward Ferrars like?")? Its names masked, its nearest example of asking so is at least
        ``MIN_WHO`` and no farther than its nearest other ordinary question."""
        if not self._names(message):
            return False
        similarities = self._told(message).similarities
        who = float(np.max(similarities[self._labels == WHO]))
        other = float(np.max(similarities[self._labels == BOOK]))
        return who >= MIN_WHO and who >= other

    def asks_meeting(self, message: str) -> bool:
        """Does ``message`` ask how two people it names met ("How did Marianne meet
        Willoughby?")? It names two or more, and its nearest example of asking who someone is
        (names masked) is ``MEETING``: "Tell me about Victor in Ingolstadt" asks who Victor is."""
        if len(self._names(message)) < 2:
            return False
        similarities = self._told(message).similarities
        rows = np.flatnonzero(self._labels == WHO)
        meeting = next(r for r in rows if self._texts[r] == MEETING)
        return bool(similarities[meeting] >= similarities[rows].max())

    def asks_next(self, message: str) -> bool:
        """Does ``message`` ask what came right after what was just discussed ("What did he do
        then?")? Its nearest ordinary question (names masked) is one of ``NEXT``, at least
        ``MIN_NEXT`` close."""
        return self._nearest_book(message, NEXT, MIN_NEXT)

    def _nearest_book(self, message: str, among: Sequence[str], least: float) -> bool:
        """Is ``message``'s nearest ordinary question (names masked) one of ``among``, at least
        ``least`` close?"""
        similarities = self._told(message).similarities
        rows = np.flatnonzero(self._labels == BOOK)
        nearest = rows[int(np.argmax(similarities[rows]))]
        return bool(self._texts[nearest] in among and similarities[nearest] >= least)

    def asks_narrator(self, message: str) -> bool:
        """Does ``message`` ask who tells the story ("Who is the narrator?")? Its nearest
        ordinary question (names masked) is ``NARRATOR``, at least ``MIN_NARRATOR`` close."""
        return self._nearest_book(message, (NARRATOR,), MIN_NARRATOR)

    def asks_this_chapter(self, message: str) -> bool:
        """Does ``message``, a request for the recap, ask for the chapter the reader is in
        ("What happened in this chapter?") rather than the story so far? Its nearest example of
        the one is nearer than its nearest of the other."""
        rows = np.flatnonzero(np.isin(self._labels, [RECAP, THIS_CHAPTER]))
        nearest = rows[int(np.argmax(self._told(message).similarities[rows]))]
        return self._texts[nearest] in (*THIS_CHAPTER_ROUTED, *THIS_CHAPTER_EXAMPLES)

    def book_questions(self, messages: Sequence[str]) -> list[str]:
        """The messages that are questions about the book (later events' included)."""
        return [m for m in messages if self.kind(m) in (BOOK, LATER)]

    def _matrix(self) -> np.ndarray:
        """Every example's vector (embedded once; shipped with the model)."""
        if self._examples is None:
            self._examples = np.asarray(self._embedder.embed(self._texts), dtype=np.float32)
        return self._examples

    def _nearest(self, message: str) -> _Told:
        similarities = self._matrix() @ self._vector(message)
        asked = np.isin(self._labels, list(EXAMPLES))  # before masking: "thanks, Victor"
        best = int(np.argmax(np.where(asked, similarities, -1.0)))
        label = str(self._labels[best])
        sure = similarities[best] >= MIN_SIMILARITY.get(label, MIN_TOOL_SIMILARITY) or (
            label in SMALL_TALK
            and "?" not in message
            and len(message.split()) <= SMALL_TALK_WORDS
            and similarities[best] >= MIN_LOOSE_SMALL_TALK
            and similarities[best] - np.max(similarities[self._labels == BOOK]) >= SMALL_TALK_MARGIN
        )
        text = masked(message, self._names(message))
        if text != message:
            similarities = self._matrix() @ self._vector(text)
        own = float(np.max(similarities[self._labels == SEARCH_HIGHLIGHTS]))
        if label not in CONTRASTED and sure:  # small talk, folio itself, people, notes
            return _Told(label, False, own, similarities)
        scores = {
            kind: float(np.mean(np.sort(similarities[self._labels == kind])[-NEAREST:]))
            for kind in (*CONTRASTED, BOOK)
        }
        kind = max(scores, key=scores.__getitem__)
        # nearest later-events example against the nearest ordinary question ("what happens
        # to him?" is asked of the text read): a refusal must be sure, a note only closer
        later, book = (float(np.max(similarities[self._labels == k])) for k in (LATER, BOOK))
        may = later >= MIN_MAY_LATER and later > book
        if kind == LATER:
            kind = LATER if later >= MIN_TOOL_SIMILARITY and later > book else BOOK
        elif scores[kind] < MIN_ASKED:
            kind = BOOK
        return _Told(kind, may, own, similarities)

    def _vector(self, text: str) -> np.ndarray:
        return np.asarray(self._embedder.embed([text])[0], dtype=np.float32)
