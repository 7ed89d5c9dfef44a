"""Calibre-style searches over a Calibre library's books, and the preferred format."""

from __future__ import annotations

from pathlib import Path

import pytest

from folio.domain.calibre import CalibreBook, CalibreError
from folio.domain.calibre_search import matches_all, parse_search

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


# The library of tests/fixtures/calibre/library_before.tar.gz; each answer below is what
# ``calibredb search`` (calibre 6.13) answered on it.
FIRST = CalibreBook(1, "u1", "The First Moon", ("Ada Vance",), series="The Moons",
                    series_index=1.0, identifiers={"isbn": "9780000000011"})  # fmt: skip
SECOND = CalibreBook(2, "u2", "The Second Moon", ("Ada Vance",), series="The Moons",
                     series_index=2.0)  # fmt: skip
GARDEN = CalibreBook(3, "u3", "A Quiet Garden", ("Cora Hale",))


@pytest.mark.parametrize(
    ("query", "ids"),
    [
        ("series:true", [1, 2]),
        ("series:false", [3]),
        ("title:~^the", [1, 2]),
        ('title:"~moon$"', [1, 2]),
        ('author:hale or series:"=The Moons"', [1, 2, 3]),
        ("not series:true", [3]),
        ("(title:first or title:garden) and author:vance", [1]),
        ("title:first or title:garden and author:vance", [1]),  # and binds tighter than or
        ("identifiers:true", [1]),
        ("identifiers:false", [2, 3]),
        ("identifiers:isbn:true", [1]),
        ("identifiers:isbn:~^978", [1]),
        ("tags:false", [1, 2, 3]),
        ("moon", [1, 2]),
        ("title:=the", []),
    ],
)
def test_calibres_own_answers_on_a_real_library(query: str, ids: list[int]) -> None:
    search = parse_search(query)
    assert [b.calibre_id for b in (FIRST, SECOND, GARDEN) if search.matches(b)] == ids


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("formats:epub", "Unknown search field 'formats:'"),
        ("#genre:fantasy", "Unknown search field '#genre:'"),
        ("(title:moon", "not closed"),
        ("title:moon)", "Unexpected ')'"),
        ("title:moon or", "after 'or'"),
        ("or title:moon", "before 'or'"),
        ("title:~[unclosed", "not a regular expression"),
        ("title:", "no value"),
        ("(" * 30 + "moon" + ")" * 30, "parentheses deep"),
    ],
)
def test_what_folio_does_not_support_is_refused_naming_what_it_does(
    query: str, reason: str
) -> None:
    with pytest.raises(CalibreError) as refused:
        parse_search(query)
    assert reason in refused.value.message
