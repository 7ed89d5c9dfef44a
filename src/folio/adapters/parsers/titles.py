"""Titles, authors and chapter labels as a reader expects to see them.

Books shout: Gutenberg title pages set "PRIDE. and PREJUDICE" over "by / Jane Austen,", and many
texts mix "Chapter I" with "CHAPTER II" or "PART I, CHAPTER I. THE TRAIL OF THE MEAT". Whatever the
format, folio shows one style:

- a text in capitals (every word that is not a small word such as "and", "of", "the") is put in
  title case by the ``titlecase`` library (Gruber's rules: small words stay lower, hyphenated and
  apostrophised words are handled), with Roman numerals kept upper-case where they number a
  division ("Chapter XLII", "Part II", a leading "IV.");
- in a text that is already mixed case, only a division keyword in capitals changes
  ("CHAPTER I. Chiswick Mall" -> "Chapter I. Chiswick Mall"); the author's own casing is kept;
- a lone trailing period or comma is dropped ("Loomings." -> "Loomings", "Jane Austen," -> "Jane
  Austen"); "?", "!" and "..." are kept.

Invariant: tidying changes only letter case and trailing punctuation, so what the label says (its
keywords and numbers, read by ``folio.domain.chapter_labels``) is unchanged.
"""

from __future__ import annotations

import re

from titlecase import titlecase

from folio.domain.chapter_labels import KEYWORDS

_SMALL = frozenset(
    [
        *("a", "an", "and", "as", "at", "but", "by", "en", "for", "from", "if", "in", "into"),
        *("nor", "of", "off", "on", "or", "per", "so", "the", "to", "up", "v", "via", "vs", "with"),
    ]
)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_ROMAN = re.compile(r"(?=[MDCLXVI])M{0,3}(?:C[MD]|D?C{0,3})(?:X[CL]|L?X{0,3})(?:I[XV]|V?I{0,3})")
_KEYWORD = "|".join(KEYWORDS)
# A Roman numeral that numbers a division: after a keyword ("Chapter xlii"), or leading the label
# and followed by a stop or the end ("iv. The Wall").
_NUMERAL_AFTER_KEYWORD = re.compile(rf"\b(?:{_KEYWORD})\b\.?\s+(?P<num>[ivxlcdm]+)\b", re.I)
_LEADING_NUMERAL = re.compile(r"^(?P<num>[ivxlcdm]+)(?=[.:)]|$)", re.I)
_SHOUTED_KEYWORD = re.compile(rf"\b(?:{_KEYWORD.upper()})\b")
_TRAILING = re.compile(r"(?<![.])[.,;:]$")


def is_shouted(text: str) -> bool:
    """Every word that is not a small word is in capitals (and there is at least one)."""
    words = [w for w in _WORD.findall(text) if w.lower() not in _SMALL]
    return bool(words) and all(w.isupper() for w in words)


# Words that are also valid Roman numerals: left to title case.
_NUMERAL_WORDS = frozenset({"MIX", "MI", "DI", "LI", "MID", "DIM", "CIVIC"})
_SEGMENT_BREAK = re.compile(r"(\s*(?:—|–|--|:)\s*)")


def _keep_upper(word: str, **_: object) -> str | None:
    """titlecase's callback: Roman numerals ("viii" in "King Henry VIII") and dotted initialisms
    ("u.s.a.") stay upper-case; anything else: titlecase decides (None)."""
    core = word.strip(".,;:!?()[]\"'’“”")
    if len(core) >= 2 and _ROMAN.fullmatch(core.upper()) and core.upper() not in _NUMERAL_WORDS:
        return word.upper()
    if re.fullmatch(r"(?:[^\W\d_]\.){2,}", core + "." if not core.endswith(".") else core):
        return word.upper()
    return None


def _title_case(text: str) -> str:
    """Title case for a shouted text, segment by segment (after a dash or colon a new title
    starts: "Book I.—The Coming"), numerals and initialisms kept."""
    parts = _SEGMENT_BREAK.split(text)
    cased = [
        part if i % 2 else titlecase(part.lower(), callback=_keep_upper)
        for i, part in enumerate(parts)
    ]
    return _upper_numerals("".join(cased))


def tidy_label(label: str) -> str:
    """A chapter label in one style: see the module docstring."""
    text = _TRAILING.sub("", " ".join(label.split()))
    if is_shouted(text):
        text = _title_case(text)
    else:
        text = _SHOUTED_KEYWORD.sub(lambda m: m.group(0).capitalize(), text)
    return text or label


def tidy_title(title: str) -> str:
    """A book's title: lines joined, a shouted title in title case, trailing period dropped."""
    lines = [re.sub(r"(?<![.])[.,]$", "", line.strip()) for line in title.splitlines()]
    text = " ".join(" ".join(lines).split())
    if is_shouted(text):
        text = _title_case(text)
    return text or title


def tidy_author(author: str) -> str:
    """An author's name: trailing comma or period dropped ("Jane Austen,"), a shouted name in
    title case; initials keep their periods ("G. K. Chesterton")."""
    text = " ".join(author.split())
    text = text.rstrip(",;:")
    text = re.sub(r"(?<=[^\W\d_]{4})\.$", "", text)  # "Austen." but not "Jr." or "G. K."
    if is_shouted(text):
        text = _title_case(text)
    return text or author


def _upper_numerals(text: str) -> str:
    def upper(m: re.Match[str]) -> str:
        num = m.group("num")
        if not _ROMAN.fullmatch(num.upper()):
            return m.group(0)
        start = m.start("num") - m.start(0)
        whole = m.group(0)
        return whole[:start] + num.upper() + whole[start + len(num) :]

    text = _NUMERAL_AFTER_KEYWORD.sub(upper, text)
    return _LEADING_NUMERAL.sub(upper, text)
