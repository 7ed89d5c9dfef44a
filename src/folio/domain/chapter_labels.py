"""What a chapter is called, and which chapter a reader means.

A book names its divisions in its own words: "Chapter 5", "CHAPTER V.", "Letter 2", "PART I, CHAPTER
III. The Fight", "XLII. The Whiteness of the Whale". A reader names them the same way ("5", "V",
"chapter 5", "letter 2", "the whiteness"). ``label_parts`` reads the numbered parts of a title and
``parse_reference`` reads what a reader typed; ``Book.find_chapters`` matches the two.

Invariant: numbers compare as integers whatever their spelling (``5`` = ``V`` = ``five``), keywords
compare case-insensitively, and a title without a number has no parts (it is found by its words).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}
_ROMAN = re.compile(r"^(?=[mdclxvi])m{0,3}(?:c[md]|d?c{0,3})(?:x[cl]|l?x{0,3})(?:i[xv]|v?i{0,3})$")
_WORD_NUMBERS = {
    w: i
    for i, words in enumerate(
        [
            ("one", "first"),
            ("two", "second"),
            ("three", "third"),
            ("four", "fourth"),
            ("five", "fifth"),
            ("six", "sixth"),
            ("seven", "seventh"),
            ("eight", "eighth"),
            ("nine", "ninth"),
            ("ten", "tenth"),
            ("eleven", "eleventh"),
            ("twelve", "twelfth"),
            ("thirteen", "thirteenth"),
            ("fourteen", "fourteenth"),
            ("fifteen", "fifteenth"),
            ("sixteen", "sixteenth"),
            ("seventeen", "seventeenth"),
            ("eighteen", "eighteenth"),
            ("nineteen", "nineteenth"),
            ("twenty", "twentieth"),
        ],
        start=1,
    )
    for w in words
}
# the Latin ordinals of the First Folio's plays ("Actus Secundus. Scena Prima"), both genders,
# "u" for "v" as it prints them ("Octaua")
_LATIN_ORDINALS = {
    w: i
    for i, stem in enumerate(
        ("prim", "secund", "terti", "quart", "quint", "sext", "septim", "octav", "non", "decim"),
        start=1,
    )
    for spelling in {stem, stem.replace("v", "u")}
    for w in (f"{spelling}us", f"{spelling}a")
}
_WORD_NUMBERS |= _LATIN_ORDINALS
#: Division names, innermost last: a bare number means the innermost numbered division.
KEYWORDS = (
    "volume",
    "book",
    "part",
    "chapter",
    "letter",
    "stave",
    "canto",
    "act",
    "scene",
    "section",
    "fytte",
)
# a play's acts hold its scenes as a novel's parts hold its chapters: "act 2" alone means through
# its last scene, and a scene heading that does not name its act is in the act before it
MAJOR_KEYWORDS = frozenset({"volume", "book", "part", "act"})
# other spellings of a keyword: the First Folio's Latin ("Actus Primus. Scoena Prima")
# and a reader's short forms ("ch. 6", "chap 6")
SPELLINGS = {"actus": "act", "scena": "scene", "scaena": "scene", "scoena": "scene"}
SPELLINGS |= {"ch": "chapter", "chap": "chapter"}
_NUMBER = r"\d{1,4}|[mdclxvi]+|" + "|".join(sorted(_WORD_NUMBERS, key=len, reverse=True))
_KEYWORD = "|".join([*KEYWORDS, *SPELLINGS])
_PAIR = re.compile(rf"\b(?P<kw>{_KEYWORD})\b\.?\s*(?P<num>{_NUMBER})\b", re.IGNORECASE)
_LEADING_NUMBER = re.compile(rf"^\s*(?P<num>{_NUMBER})\s*(?:[.:\-—–)]|$)", re.IGNORECASE)
_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class LabelPart:
    """One numbered division in a label: ``keyword`` is ``None`` for a bare number ("XLII.")."""

    keyword: str | None
    number: int


def to_number(text: str) -> int | None:
    """``5``, ``V``, ``v``, ``five``, ``fifth`` -> 5; anything else -> ``None``."""
    word = text.strip().lower()
    if word.isdigit():
        return int(word)
    if word in _WORD_NUMBERS:
        return _WORD_NUMBERS[word]
    if _ROMAN.match(word):
        total = 0
        for a, b in zip(word, [*word[1:], ""], strict=True):
            value = _ROMAN_VALUES[a]
            total += -value if b and _ROMAN_VALUES[b] > value else value
        return total
    return None


def label_parts(title: str) -> tuple[LabelPart, ...]:
    """The numbered divisions a chapter title names, outermost first: "PART I, CHAPTER III. The
    Fight" -> (part 1, chapter 3); "XLII. The Whale" -> (42,); "The Whale" -> ()."""
    head = title[:80]
    parts = []
    for m in _PAIR.finditer(head):
        number = to_number(m.group("num"))
        if number is not None:
            keyword = m.group("kw").lower()
            parts.append(LabelPart(SPELLINGS.get(keyword, keyword), number))
    if parts:
        return tuple(parts)
    leading = _LEADING_NUMBER.match(head)
    if leading and (number := to_number(leading.group("num"))) is not None:
        return (LabelPart(None, number),)
    return ()


def is_bare_label(title: str) -> bool:
    """Does the title only number its division ("Chapter XIII", "LETTER 4", "Part 2, Chapter
    3", "XIII.")? Such a title gives nothing of the story away, unlike "XIII. The Fight"."""
    if not label_parts(title):
        return False
    rest = _PAIR.sub(" ", title)
    if rest == title:
        rest = _LEADING_NUMBER.sub(" ", title, count=1)
    return not _NOT_WORD.sub("", rest)


@dataclass(frozen=True, slots=True)
class ChapterReference:
    """What a reader typed to name a chapter: its numbered parts (when it is a label such as
    "chapter 5", "letter 2", "V") and its words (for matching a title or part of one)."""

    text: str
    parts: tuple[LabelPart, ...]

    @property
    def words(self) -> str:
        return normalise(self.text)

    @property
    def major(self) -> bool:
        """Does it name only divisions that hold chapters ("part 2", "act 1")?"""
        return bool(self.parts) and all(p.keyword in MAJOR_KEYWORDS for p in self.parts)


def parse_reference(text: str) -> ChapterReference:
    """A reference is a label when it is made only of keywords and numbers ("5", "Chapter V",
    "part 2 chapter 3", "chapter 3 of part 2"); otherwise it names a title."""
    stripped = text.strip()
    leftover = _PAIR.sub(lambda m: " " if to_number(m.group("num")) else m.group(), stripped)
    leftover = re.sub(r"\b(?:of|in)\b", " ", leftover, flags=re.IGNORECASE)  # "chapter 2 of part 2"
    parts: tuple[LabelPart, ...] = ()
    if _NOT_WORD.sub("", leftover) == "":
        parts = label_parts(stripped)
    elif (number := to_number(stripped.rstrip("."))) is not None:
        parts = (LabelPart(None, number),)
    return ChapterReference(stripped, parts)


_JOINERS = {"", "of", "in"}  # between the pairs of one reference: "chapter 2 of part 2"
_WORD_AFTER = re.compile(r"[ \t]+[a-z]")


def _written(m: re.Match[str]) -> bool:
    """Is a keyword-and-number ``_PAIR`` found in running text a reference? Its number is one;
    after a keyword in lower case, followed by a word in lower case, a lone "I" is the pronoun
    ("in this act I think") and a number written as a word is prose ("the letter one day")."""
    number, keyword = m.group("num"), m.group("kw")
    if to_number(number) is None:
        return False
    prose = keyword.islower() and _WORD_AFTER.match(m.string, m.end()) is not None
    spelt = number.isalpha() and not _ROMAN.match(number.lower())
    return not (prose and (number == "I" or spelt))


def reference_in(text: str) -> str | None:
    """The first chapter reference a message writes, as written: keywords each with a number,
    apart by spaces or commas ("What happened in Part II, Chapter IV?" -> "Part II, Chapter IV";
    "chapter 5"; "act 1 scene 2"). None when it writes none (a bare number is not one here)."""
    found = [m for m in _PAIR.finditer(text) if _written(m)]
    if not found:
        return None
    start, end = found[0].span()
    for m in found[1:]:
        if text[end : m.start()].strip(" ,").lower() not in _JOINERS:
            break
        end = m.end()
    return text[start:end]


def without_references(text: str) -> str:
    """``text`` with each chapter reference it writes blanked out, every character kept in its
    place: "Chapter 5" is no one's name."""
    return _PAIR.sub(lambda m: " " * len(m.group()) if _written(m) else m.group(), text)


def normalise(text: str) -> str:
    """Lower case, punctuation as spaces, one space between words."""
    return " ".join(_NOT_WORD.sub(" ", text.casefold()).split())


def matches(reference: ChapterReference, parts: tuple[LabelPart, ...]) -> bool:
    """Whether a chapter whose title has ``parts`` is what ``reference`` names. Every part the
    reader named must be in the title; a part without keyword matches the innermost division."""
    if not reference.parts or not parts:
        return False
    for wanted in reference.parts:
        if wanted.keyword is None or (wanted.keyword == "chapter" and parts[-1].keyword is None):
            # a title numbered bare is a chapter: "chapter 6" names "VI. The Other Philosopher"
            if parts[-1].number != wanted.number:
                return False
        elif wanted not in parts:
            return False
    return True
