"""``folio add --calibre``: a real Calibre library made in the test (Calibre's schema, its file
layout, several books, two series) imported through the CLI's entry point, twice (the second run
adds nothing), by search, while "Calibre" holds a write transaction open, and refused with a clear
error when the database is damaged or not Calibre's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.calibre_support import (
    CalibreEntry,
    add_calibre_book,
    calibre_connection,
    make_calibre_library,
    story,
)
from tests.e2e.conftest import RunFolio, ok_json, one_error_line

MOONS, GARDEN = "The Moons", "Garden Tales"


def entries(formats: Path) -> list[CalibreEntry]:
    return [
        CalibreEntry(
            "Frankenstein",
            ["Mary Shelley"],
            {"PDF": (formats / "frankenstein.pdf").read_bytes(),
             "EPUB": (formats / "frankenstein.epub").read_bytes()},
            tags=["classic", "gothic"],
            identifiers={"isbn": "9780141439471", "gutenberg": "84"},
        ),
        CalibreEntry("The First Moon", ["Ada Vance"], {"MD": story("The First Moon")},
                     series=MOONS, series_index=1, tags=["scifi"]),
        CalibreEntry("The Second Moon", ["Ada Vance", "Bo Lind"], {"MD": story("The Second Moon")},
                     series=MOONS, series_index=2, tags=["scifi"]),
        CalibreEntry("A Quiet Garden", ["Cora Hale"], {"MD": story("A Quiet Garden")},
                     series=GARDEN, series_index=1),
        CalibreEntry("Rain on the Garden", ["Cora Hale"], {"MD": story("Rain on the Garden")},
                     series=GARDEN, series_index=2.5, identifiers={"goodreads": "123"}),
        CalibreEntry("Only on Kindle", ["Dee Ray"], {"MOBI": b"not a book folio reads"}),
    ]  # fmt: skip


@pytest.fixture
def library(tmp_path: Path, books_dir: Path) -> Path:
    return make_calibre_library(tmp_path / "Calibre Library", entries(books_dir / "formats"))


def books_by_title(run_folio: RunFolio) -> dict[str, dict[str, Any]]:
    return {b["title"]: b for b in ok_json(run_folio("books", "--json"))}


def test_a_calibre_library_comes_in_once_with_its_metadata(
    run_folio: RunFolio, library: Path
) -> None:
    first = ok_json(run_folio("add", "--calibre", str(library), "--json"))

    assert first["matched"] == 6
    assert sorted(a["title"] for a in first["added"]) == [
        "A Quiet Garden", "Frankenstein", "Rain on the Garden", "The First Moon",
        "The Second Moon",
    ]  # fmt: skip
    assert [b["title"] for b in first["no_format"]] == ["Only on Kindle"]
    books = books_by_title(run_folio)
    assert books["Frankenstein"]["format"] == "epub"  # EPUB before PDF
    assert books["Frankenstein"]["author"] == "Mary Shelley"
    assert books["The Second Moon"]["author"] == "Ada Vance & Bo Lind"
    assert (books["The First Moon"]["series"], books["The First Moon"]["series_index"]) == (
        MOONS,
        1,
    )
    assert books["Rain on the Garden"]["series_index"] == 2.5
    shown = ok_json(run_folio("show", books["Frankenstein"]["id"], "--json"))
    assert shown["identifiers"]["isbn"] == "9780141439471"
    assert shown["identifiers"]["gutenberg"] == "84"

    # Again, this time as a folder that holds metadata.db: nothing new.
    second = ok_json(run_folio("add", str(library), "--json"))

    assert second["added"] == [] and len(second["existing"]) == 5
    assert len(books_by_title(run_folio)) == 5


def test_a_search_imports_only_the_books_it_matches(run_folio: RunFolio, library: Path) -> None:
    moons = ok_json(
        run_folio("add", "--calibre", str(library), "--search", f'series:"{MOONS}"', "--json")
    )
    assert sorted(a["title"] for a in moons["added"]) == ["The First Moon", "The Second Moon"]

    hale = ok_json(
        run_folio("add", "--calibre", str(library), "--search", "author:hale -series:=x", "--json")
    )
    assert sorted(a["title"] for a in hale["added"]) == ["A Quiet Garden", "Rain on the Garden"]
    tagged = ok_json(run_folio("add", "--calibre", str(library), "--search", "tag:scifi", "--json"))
    assert tagged["added"] == [] and len(tagged["existing"]) == 2

    bad = run_folio("add", "--calibre", str(library), "--search", "shelf:top")
    assert "Unknown search field 'shelf:'" in one_error_line(bad)


def test_calibre_may_be_writing_while_folio_reads(run_folio: RunFolio, library: Path) -> None:
    calibre = calibre_connection(library / "metadata.db")
    calibre.execute("BEGIN IMMEDIATE")  # Calibre's write transaction, not committed yet
    add_calibre_book(calibre, library, CalibreEntry("Unsaved", ["Eve"], {"MD": story("Unsaved")}))

    during = ok_json(run_folio("add", "--calibre", str(library), "--json"))
    calibre.commit()  # folio held no lock that would stop Calibre's commit
    calibre.close()
    after = ok_json(run_folio("add", "--calibre", str(library), "--json"))

    assert "Unsaved" not in [a["title"] for a in during["added"]]
    assert [a["title"] for a in after["added"]] == ["Unsaved"]


def test_a_damaged_or_foreign_database_is_refused_clearly(
    run_folio: RunFolio, tmp_path: Path
) -> None:
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "metadata.db").write_bytes(b"SQLite format 3\x00" + b"\x07" * 3000)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    conn = calibre_connection(foreign / "metadata.db")
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    conn.commit()
    conn.close()

    assert "cannot be read as a Calibre library" in one_error_line(
        run_folio("add", "--calibre", str(damaged))
    )
    assert "is not a Calibre library database" in one_error_line(
        run_folio("add", "--calibre", str(foreign))
    )
    assert "has no metadata.db" in one_error_line(run_folio("add", "--calibre", str(tmp_path)))
    assert books_by_title(run_folio) == {}
