"""A small generated series for the reading-window property tests: three volumes of "Harbour
Saga" (the second opens with an editor's introduction) and one book of another series. Every
paragraph carries its own marker word, used like a name, so whatever text reaches the reader or a
model tells exactly where it came from.

``allowed_markers`` is worked out from the generated text and the position alone (not from
``folio.domain.window``): the earlier volumes in full, this volume up to the position, its
introduction only once the whole volume is read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.series_books import write_epub

ECHOES = frozenset({"query", "note"})  # a search result's fields that repeat the query's words

SERIES = "Harbour Saga"
VOLUMES = 3  # of the series; a fourth book belongs to another series
CHAPTERS = 4
PARAGRAPHS = 3
LETTERS = "abcdefghij"
MARKER = re.compile(r"Zq[a-j]{3}ven")
FILLER = (
    "The gulls circled over the slate roofs while the tide came in slowly across the flats. "
    "Nobody in the lanes spoke much before the bells had rung for the second time that day. "
)


def marker(volume: int, chapter: int, paragraph: int) -> str:
    """Chapter 0 is the introduction (volume 1 only); volume 3 is the other series' book."""
    return f"Zq{LETTERS[volume]}{LETTERS[chapter]}{LETTERS[paragraph]}ven"


def _paragraph(name: str) -> str:
    return (
        f"Then {name} walked along the quiet harbour road in the cold morning light. "
        f"Everyone in the village said that {name} was kind and patient, and {name} smiled at "
        f"the grey sea before going home. {FILLER * 2}"
    )


def chapters(volume: int) -> list[tuple[str, list[str]]]:
    out = []
    if volume == 1:
        out.append(("Introduction", [_paragraph(marker(volume, 0, p)) for p in range(PARAGRAPHS)]))
    for c in range(1, CHAPTERS + 1):
        out.append((f"Chapter {c}", [_paragraph(marker(volume, c, p)) for p in range(PARAGRAPHS)]))
    return out


@dataclass(frozen=True)
class Volume:
    number: int  # 0-based; VOLUMES is the other series' book
    title: str
    path: Path


def write_series(folder: Path) -> list[Volume]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for v in range(VOLUMES + 1):
        other = v == VOLUMES
        title = "Lantern Road" if other else f"Harbour Saga {['One', 'Two', 'Three'][v]}"
        path = write_epub(
            folder / f"volume-{v}.epub",
            title,
            chapters(v),
            series="Lantern Tales" if other else SERIES,
            index="1" if other else str(v + 1),
        )
        out.append(Volume(v, title, path))
    return out


def all_markers() -> set[str]:
    return {
        marker(v, c, p)
        for v in range(VOLUMES + 1)
        for c in range(CHAPTERS + 1)
        for p in range(PARAGRAPHS)
        if c or v == 1
    }


def allowed_markers(
    texts: dict[int, str], current: int, limit: int | None, story_end: int
) -> set[str]:
    """The markers the reader has read: ``texts`` are the volumes' stored texts, ``current``
    the volume chatted with, ``limit`` its position (None: the whole volume), ``story_end``
    where its last chapter ends (a position there finishes the volume)."""
    allowed = {m for v in range(current) for m in MARKER.findall(texts[v])}
    text = texts[current]
    finished = limit is None or limit >= story_end
    end = len(text) if limit is None else limit
    for m in MARKER.finditer(text[:end]):
        introduction = m.group()[3] == "a"  # chapter letter "a": chapter 0
        if finished or not introduction:
            allowed.add(m.group())
    return allowed


def leaks(output: str, allowed: set[str]) -> set[str]:
    """Markers in ``output`` the reader has not read."""
    return set(MARKER.findall(output)) - allowed


def without_queries(text: str) -> str:
    """A tool result's JSON without the query it echoes and the note that names what the query
    asked about (the caller's own words, not the book's); any other text as it is."""

    def drop(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: drop(v) for k, v in value.items() if k not in ECHOES}
        if isinstance(value, list):
            return [drop(v) for v in value]
        if isinstance(value, str) and value[:1] in "[{":
            return drop_text(value)
        return value

    def drop_text(raw: str) -> Any:
        try:
            return drop(json.loads(raw))
        except ValueError:
            return raw

    return json.dumps(drop_text(text))
