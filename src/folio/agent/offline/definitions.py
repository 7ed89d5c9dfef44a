"""The sentence that says who or what a name is: the first line of an answer to "Who is X?".

A book introduces a character or a place in a sentence of a few recognisable shapes, in any
novel: "Henry Clerval was the son of a merchant of Geneva.", "Mr. Kirwin, a magistrate, ...",
"Justine Moritz, who was a favourite of my mother, ...". ``asked_name`` reads the name a
"who/what is X?" question asks about; ``definition`` finds, among passages a search returned, the
sentence that defines it. Invariant: the sentence is text of one of the passages (white space
collapsed), and the name it defines is the one asked about (the whole name, or one of its words
when the book uses it alone: "Clerval was ..."), never a pronoun's guess.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from folio.agent.offline.followup import NOT_NAMES, proper_nouns
from folio.domain.passages import Passage
from folio.domain.sentences import split_sentences

_ASKS_WHO = re.compile(
    r"^\s*(?:(?:who|what)(?:'s|’s|\s+(?:is|was|are|were))|tell me about|describe)\s+"
    r"(?P<subject>[^?!]+?)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
# After the name: a copula and a determiner ("was the son of", "is a magistrate", "Justine, you
# may remember, was a great favourite"), an apposition between commas ("Mr. Kirwin, a
# magistrate,"), or a relative clause ("Justine, who was ..."); strongest first.
_DEFINING = (
    r"(?:,[^,.;]{1,60},)?\s+(?:was|is|had been|became|were|are)\s+"
    r"(?:a|an|the|my|his|her|our|their|one|by)\b",
    r",\s+(?:a|an|the|my|his|her|our|their)\s+[^,.;]{3,80}[,;]",
    r",\s+who\s+(?:was|is|had been|were)\b",
)
# A name after one of these is not the sentence's subject ("the father of Safie had been").
_NOT_SUBJECT = re.compile(
    r"\b(?:of|to|with|by|for|from|in|at|on|and|or|than|upon|towards?|saw|met|loved)\s+$",
    re.IGNORECASE,
)
_MAX_WORDS = 60


def asked_name(question: str) -> str | None:
    """The name "Who is X?" / "What is X?" / "Tell me about X" asks about, when X is a name
    ("Henry Clerval", "Mr. Kirwin"); None for anything else ("Who is his friend?")."""
    match = _ASKS_WHO.match(question)
    if match is None:
        return None
    subject = re.sub(r"^(?:the)\s+", "", match.group("subject").strip(), flags=re.IGNORECASE)
    names = proper_nouns(subject)
    if len(names) != 1 or len(names[0].split()) < len(subject.split()) - 1:
        return None
    return names[0]


def definition(name: str, passages: Sequence[Passage]) -> tuple[str, Passage] | None:
    """The sentence of ``passages`` that says who or what ``name`` is: the strongest shape, the
    whole name before one of its words, the earliest in the book."""
    found: list[tuple[int, int, int, str, Passage]] = []
    for passage in passages:
        for sentence in sentences(passage.text):
            strength = _strength(name, sentence)
            if strength is not None and len(sentence.split()) <= _MAX_WORDS:
                found.append((*strength, passage.char_start, sentence, passage))
    if not found:
        return None
    *_, sentence, passage = min(found, key=lambda f: f[:3])
    return sentence, passage


def _strength(name: str, sentence: str) -> tuple[int, int] | None:
    """(the shape's rank, 0 for the whole name / 1 for one of its words); None when the
    sentence does not define ``name``."""
    forms = [name] + [w for w in name.split() if len(w) > 2 and w.lower() not in NOT_NAMES]
    best: tuple[int, int] | None = None
    for which, form in enumerate(forms):
        for rank, shape in enumerate(_DEFINING):
            pattern = rf"(?<![\w'’-]){re.escape(form)}(?![\w'’-]){shape}"
            for match in re.finditer(pattern, sentence):
                if not _NOT_SUBJECT.search(sentence[: match.start()]):
                    strength = (rank, 0 if which == 0 else 1)
                    best = strength if best is None else min(best, strength)
    return best


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (a title or an initial ends none: "Mr. Kirwin", "M. Waldman"),
    white space collapsed."""
    return [s for s in split_sentences(text) if len(s) > 1]
