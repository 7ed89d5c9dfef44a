"""Titles, authors and chapter labels in one style, whatever the book set in capitals."""

from __future__ import annotations

import pytest

from folio.adapters.parsers.plaintext import guess_title_author
from folio.adapters.parsers.titles import tidy_author, tidy_label, tidy_title
from folio.domain.chapter_labels import label_parts


@pytest.mark.parametrize(
    ("label", "tidy"),
    [
        ("CHAPTER II", "Chapter II"),
        ("Chapter I", "Chapter I"),
        ("PART I, CHAPTER I. THE TRAIL OF THE MEAT", "Part I, Chapter I. The Trail of the Meat"),
        ("CHAPTER III. THE GOD’S DOMAIN", "Chapter III. The God’s Domain"),
        ("CHAPTER I. Chiswick Mall", "Chapter I. Chiswick Mall"),  # mixed case: keyword only
        ("CHAPTER 1. Loomings.", "Chapter 1. Loomings"),
        ("XLII. THE WHITENESS OF THE WHALE", "XLII. The Whiteness of the Whale"),
        ("LETTER IV", "Letter IV"),
        ("VOLUME I, CHAPTER XVIII.", "Volume I, Chapter XVIII"),
        ("THE SHE-WOLF", "The She-Wolf"),
        ("MIX AND MATCH", "Mix and Match"),  # a word that spells a numeral is still a word
        ("KING HENRY VIII", "King Henry VIII"),  # a numeral inside a title
        ("THE U.S.A. TRILOGY", "The U.S.A. Trilogy"),
        ("CHAPTER I.—THE EVE OF THE WAR", "Chapter I.—The Eve of the War"),  # a new segment
        ("I. The Absence of Mr Glass", "I. The Absence of Mr Glass"),
        ("Who Is It?", "Who Is It?"),
        ("The End...", "The End..."),
        ("PREFACE", "Preface"),
    ],
)
def test_a_label_is_tidied_to_one_style(label: str, tidy: str) -> None:
    assert tidy_label(label) == tidy


@pytest.mark.parametrize(
    "label", ["CHAPTER XLII.", "PART II, CHAPTER V. THE LAW", "LETTER 4", "BOOK IX", "XIV. THE END"]
)
def test_tidying_keeps_what_a_label_numbers(label: str) -> None:
    assert label_parts(tidy_label(label)) == label_parts(label)


def test_titles_and_authors_lose_their_shouting_and_stray_punctuation() -> None:
    assert tidy_title("PRIDE.\nand\nPREJUDICE") == "Pride and Prejudice"
    assert tidy_title("Frankenstein;\nor, the Modern Prometheus") == (
        "Frankenstein; or, the Modern Prometheus"
    )
    assert tidy_title("The Tragedie of Hamlet") == "The Tragedie of Hamlet"
    assert tidy_author("Jane Austen,") == "Jane Austen"
    assert tidy_author("JACK LONDON") == "Jack London"
    assert tidy_author("Martin Luther King Jr.") == "Martin Luther King Jr."
    assert tidy_author("G. K. Chesterton") == "G. K. Chesterton"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Vanity Fair\n\n\nby\n\nWilliam Makepeace Thackeray\n\n\nBEFORE THE CURTAIN\n",
         ("Vanity Fair", "William Makepeace Thackeray")),
        ("PRIDE.\nand\nPREJUDICE\n\nby\nJane Austen,\n\nwith a Preface by\nGeorge Saintsbury\n",
         ("PRIDE.\nand\nPREJUDICE", "Jane Austen,")),
        ("WHITE FANG\n\nby Jack London\n\nContents\n", ("WHITE FANG", "Jack London")),
        ("[Moby Dick by Herman Melville 1851]\n\nETYMOLOGY.\n", ("Moby Dick", "Herman Melville")),
        ("It was a dark night.\nThe wind blew.\nNobody came by.\n", (None, None)),
        ("Songs\nby the sea I sat\nand sang\n", (None, None)),  # a poem's line, no author
        ("Contents\nby\nChapter 2\n", (None, None)),
    ],
)  # fmt: skip
def test_a_title_page_gives_the_title_and_the_author(
    text: str, expected: tuple[str | None, str | None]
) -> None:
    assert guess_title_author(text) == expected
