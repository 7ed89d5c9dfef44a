"""Nothing unread in any message (issue 36, item 5), through the real CLI on a real book whose
chapter titles tell the story (Vanity Fair: 'Chapter LXVII. Which Contains Births, Marriages, and
Deaths'): a position that names no chapter, given when the book is added or set later, is refused
naming only the chapters the reader has reached, never a later title."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import RunFolio, ok, ok_json, one_error_line

LATER_TITLES = ("Green Silk Purse", "Births, Marriages", "Waterloo", "Chiswick Mall")


@pytest.fixture
def vanity(books_dir: Path) -> Path:
    return books_dir / "pg599_vanity_fair.txt"


def test_a_position_the_book_does_not_have_names_no_chapter_when_the_book_is_added(
    run_folio: RunFolio, vanity: Path
) -> None:
    refused = run_folio("add", str(vanity), "--position", "Chapter 99")

    message = one_error_line(refused)
    assert refused.returncode != 0 and "has no chapter 'Chapter 99'" in message
    assert "name a chapter as the book does" in message
    assert not any(title in message for title in LATER_TITLES), message
    assert ok_json(run_folio("books", "--json")) == []  # nothing stored


def test_a_position_the_book_does_not_have_names_only_the_chapters_reached(
    run_folio: RunFolio, vanity: Path
) -> None:
    ok(run_folio("add", str(vanity), "--position", "Chapter 3"))

    message = one_error_line(run_folio("position", "vanity", "--chapter", "99"))

    assert "Chapter III. Rebecca Is in Presence of the Enemy" in message
    assert "later ones are not named here" in message
    assert not any(title in message for title in LATER_TITLES[:3]), message
