"""Which sections of a book are not the story: front matter, commentary, back matter.

A section is known by its heading, in any book: "PREFACE.", "Introduction by George Saintsbury",
"Contents", "List of Illustrations", "Notes", "Appendix B", "Transcriber's Note". Story headings
("Chapter 5", "Letter 2", "Prologue", "The Whiteness of the Whale") are never matter: a heading is
matter only when it BEGINS with one of these names and is short, as headings are.

Invariant: ``section_kind`` is a function of the heading alone; it never looks at the book's
wording, so it holds for any book.
"""

from __future__ import annotations

import re

from folio.domain.books import SectionKind

_COMMENTARY = (
    "preface",
    "introduction",
    "introductory note",
    "introductory essay",
    "critical introduction",
    "foreword",
    "editor's note",
    "editors note",
    "editor's preface",
    "editor's introduction",
    "biographical notice",
    "biographical note",
    "biographical sketch",
    "memoir of the author",
    "note on the text",
    "a note on the text",
    "author's introduction",
    "author's preface",
)
_FRONT = (
    "contents",
    "table of contents",
    "list of illustrations",
    "illustrations",
    "list of plates",
    "dedication",
    "frontispiece",
    "title page",
)
_BACK = (
    "notes",
    "endnotes",
    "footnotes",
    "explanatory notes",
    "textual notes",
    "appendix",
    "appendices",
    "glossary",
    "index",
    "bibliography",
    "further reading",
    "afterword",
    "chronology",
    "about the author",
    "transcriber's note",
    "transcriber's notes",
    "transcribers note",
    "transcribers notes",
    "end of the project gutenberg",
    "end of project gutenberg",
    "the full project gutenberg license",
)
_KINDS = (
    [(name, SectionKind.COMMENTARY) for name in _COMMENTARY]
    + [(name, SectionKind.FRONT_MATTER) for name in _FRONT]
    + [(name, SectionKind.BACK_MATTER) for name in _BACK]
)
_KINDS.sort(key=lambda item: -len(item[0]))  # the longest name first: "table of contents"
MAX_HEADING_WORDS = 10
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "`": "'"})
_PUNCT = re.compile(r"[^\w' ]+")
_ILLUSTRATION = re.compile(r"^\s*\[?\s*illustration\s*:\s*", re.IGNORECASE)


def _clean(heading: str) -> str:
    text = _ILLUSTRATION.sub("", heading.translate(_APOSTROPHES))
    return " ".join(_PUNCT.sub(" ", text.casefold()).split())


def section_kind(heading: str) -> SectionKind:
    """The kind of the section a heading opens (``STORY`` unless it names front/back matter)."""
    clean = _clean(heading)
    if not clean or len(clean.split()) > MAX_HEADING_WORDS:
        return SectionKind.STORY
    for name, kind in _KINDS:
        if clean == name or clean.startswith(name + " "):
            return kind
    return SectionKind.STORY


def is_matter_heading(line: str) -> bool:
    """A stand-alone line that opens front or back matter ("PREFACE.", "[Illustration: List of
    Illustrations.]", "Introduction by X"): short, not a sentence, in title or upper case."""
    text = line.strip()
    if not text or len(text) > 80 or text.endswith((",", ";")):
        return False
    words = [w for w in re.findall(r"[^\W\d_]+", _ILLUSTRATION.sub("", text)) if len(w) > 3]
    if words and not all(w[0].isupper() for w in words):
        return False
    return section_kind(text) is not SectionKind.STORY
