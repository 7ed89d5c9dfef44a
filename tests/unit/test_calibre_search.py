"""Calibre-style searches over a Calibre library's books, and the preferred format."""

from __future__ import annotations

from pathlib import Path

import pytest

from folio.domain.calibre import CalibreBook, CalibreError, matches_all, parse_search

EMMA = CalibreBook(
    1, "u1", "Emma", ("Jane Austen",), tags=("classic", "romance"),
    identifiers={"isbn": "978014"}, formats={"PDF": Path("e.pdf"), "EPUB": Path("e.epub")},
)  # fmt: skip
MOON = CalibreBook(
    2, "u2", "The First Moon", ("Ada Vance", "Bo Lind"), series="The Moons", series_index=1.0,
    formats={"MOBI": Path("m.mobi"), "TXT": Path("m.txt")},
)  # fmt: skip


def found(query: str) -> list[str]:
    terms = parse_search(query)
    return [b.title for b in (EMMA, MOON) if matches_all(b, terms)]


@pytest.mark.parametrize(
    ("query", "titles"),
    [
        ("", ["Emma", "The First Moon"]),
        ("title:emma", ["Emma"]),
        ("author:lind", ["The First Moon"]),
        ('series:"the moons"', ["The First Moon"]),
        ("series:=moons", []),
        ('series:"=The Moons"', ["The First Moon"]),
        ("tag:romance", ["Emma"]),
        ("-tag:romance", ["The First Moon"]),
        ("not tag:romance", ["The First Moon"]),
        ("austen and tag:classic", ["Emma"]),
        ("moon", ["The First Moon"]),
        ("identifier:isbn", ["Emma"]),
        ("identifier:isbn:=978014", ["Emma"]),
    ],
)
def test_a_search_matches_as_calibre_would(query: str, titles: list[str]) -> None:
    assert found(query) == titles


@pytest.mark.parametrize("query", ["shelf:top", 'title:"unclosed', "x" * 501])
def test_an_invalid_search_is_refused_with_its_reason(query: str) -> None:
    with pytest.raises(CalibreError):
        parse_search(query)


def test_the_preferred_file_is_the_epub_then_the_pdf_then_another_readable_format() -> None:
    assert EMMA.preferred_file() == Path("e.epub")
    assert MOON.preferred_file() == Path("m.txt")
    assert CalibreBook(3, None, "K", formats={"MOBI": Path("k.mobi")}).preferred_file() is None
