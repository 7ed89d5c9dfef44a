"""Parsers on the real books of ../shared/data/books, in every format, and on the bad files."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from folio.adapters import parsers
from folio.app.chunking import chunk_book
from folio.domain.books import BookFormat, ParsedBook
from folio.domain.errors import IngestError, IngestErrorCode

pytestmark = pytest.mark.data

FRANKENSTEIN_CHAPTERS = [f"Letter {n}" for n in range(1, 5)] + [
    f"Chapter {n}" for n in range(1, 25)
]
FRANKENSTEIN_TITLE = "Frankenstein; or, the Modern Prometheus"

# Every .txt in books/ and the number of chapters (letters, books, acts...) it really has.
TXT_CHAPTERS = {
    "austen-emma.txt": 55,
    "austen-persuasion.txt": 24,
    "austen-sense.txt": 50,
    "bible-kjv.txt": 66,  # its books, each opening at verse 1:1
    "blake-poems.txt": 48,  # its poems, titled in capitals (two called "Introduction": below)
    "chesterton-ball.txt": 20,
    "chesterton-brown.txt": 12,
    "chesterton-thursday.txt": 15,
    "melville-moby_dick.txt": 136,  # 135 chapters and the epilogue
    "milton-paradise.txt": 12,
    "pg1342_pride_and_prejudice.txt": 61,
    "pg599_vanity_fair.txt": 67,
    "pg84_frankenstein.txt": 28,
    "pg910_white_fang.txt": 25,
    "shakespeare-caesar.txt": 5,
    # scenes: this edition of Hamlet marks only the first two acts and three of their scenes;
    # Julius Caesar only its acts
    "shakespeare-hamlet.txt": 5,
    "shakespeare-macbeth.txt": 27,
    "whitman-leaves.txt": 34,
}
# Sections that are not the story (front matter before it), by book; none in the others.
TXT_MATTER = {
    "pg1342_pride_and_prejudice.txt": [("Preface", "commentary"),
                                       ("List of Illustrations", "front_matter")],
    "pg599_vanity_fair.txt": [("Contents", "front_matter")],
    "pg84_frankenstein.txt": [("Contents", "front_matter")],
    "pg910_white_fang.txt": [("Contents", "front_matter")],
    # the first poem of Songs of Innocence and of Songs of Experience, read as an editor's
    "blake-poems.txt": [("Introduction", "commentary"), ("Introduction", "commentary")],
}  # fmt: skip


# Parsing is deterministic: parse each file once for the whole module (the PDF takes a second).
parse_book = functools.cache(parsers.parse_book)


def assert_well_formed(book: ParsedBook) -> None:
    """Pages partition the text; chapters are sorted, indexed from 1 and inside the text."""
    assert book.pages, "a book has at least one page"
    assert book.pages[0].char_start == 0
    assert book.pages[-1].char_end == len(book.text)
    for n, (page, nxt) in enumerate(zip(book.pages, book.pages[1:], strict=False), start=1):
        assert page.number == n
        assert page.char_start < page.char_end == nxt.char_start
    starts = [c.char_start for c in book.chapters]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    assert [c.index for c in book.chapters] == list(range(1, len(book.chapters) + 1))
    assert all(0 <= s < len(book.text) for s in starts)


def chapter_titles(book: ParsedBook) -> list[str]:
    """The titles of the story's chapters (front and back matter left out)."""
    return [c.title for c in book.chapters if c.is_story]


@pytest.fixture(scope="module")
def formats_dir(books_dir: Path) -> Path:
    return books_dir / "formats"


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("frankenstein.epub", BookFormat.EPUB),
        ("frankenstein.md", BookFormat.MARKDOWN),
        ("frankenstein.html", BookFormat.HTML),
    ],
)
def test_frankenstein_formats_have_its_28_letters_and_chapters(
    formats_dir: Path, name: str, fmt: BookFormat
) -> None:
    book, detected = parse_book(formats_dir / name)
    assert detected is fmt
    assert chapter_titles(book) == FRANKENSTEIN_CHAPTERS
    assert book.title == FRANKENSTEIN_TITLE
    assert book.author == "Mary Wollstonecraft Shelley"
    assert_well_formed(book)
    for chapter in book.chapters:  # each chapter starts at its own heading
        assert book.text.startswith(chapter.title, chapter.char_start)


def test_markdown_and_html_text_is_free_of_markup(formats_dir: Path) -> None:
    for name in ("frankenstein.md", "frankenstein.html", "frankenstein.epub"):
        book, _ = parse_book(formats_dir / name)
        assert "To Mrs. Saville, England." in book.text
        for markup in ("<p>", "</", "_To Mrs", "# Letter", "title:", "{"):
            assert markup not in book.text, (name, markup)


def test_synthetic_pages_hold_about_300_words(formats_dir: Path) -> None:
    book, _ = parse_book(formats_dir / "frankenstein.epub")
    words = [len(book.text[p.char_start : p.char_end].split()) for p in book.pages[:-1]]
    assert all(300 <= w <= 450 for w in words)
    assert [p.label for p in book.pages[:3]] == ["1", "2", "3"]


def test_synthetic_pages_are_stable_across_parses(formats_dir: Path) -> None:
    first, _ = parsers.parse_book(formats_dir / "frankenstein.md")
    second, _ = parsers.parse_book(formats_dir / "frankenstein.md")
    assert first.pages == second.pages


def test_pdf_has_one_page_per_pdf_page_with_its_label(formats_dir: Path) -> None:
    book, fmt = parse_book(formats_dir / "frankenstein.pdf")
    assert fmt is BookFormat.PDF
    assert len(book.pages) == 121
    assert [p.label for p in book.pages] == [str(n) for n in range(1, 122)]
    assert chapter_titles(book) == FRANKENSTEIN_CHAPTERS
    assert book.title == FRANKENSTEIN_TITLE
    assert_well_formed(book)


def test_pdf_running_header_is_not_in_the_text(formats_dir: Path) -> None:
    book, _ = parse_book(formats_dir / "frankenstein.pdf")
    assert "Frankenstein Page" not in book.text
    assert "Frankenstein   Page" not in book.text


def test_a_sentence_printed_on_pdf_page_41_is_cited_as_page_41(formats_dir: Path) -> None:
    book, _ = parse_book(formats_dir / "frankenstein.pdf")
    sentence = "Concerning the picture she could give no account."
    page = book.pages[40]
    assert page.label == "41"
    assert sentence in book.text[page.char_start : page.char_end]
    holding = [c for c in chunk_book("b", book) if sentence in c.text]
    assert holding
    offset = book.text.index(sentence)
    for chunk in holding:
        assert chunk.page_start <= 41 <= chunk.page_end
        assert chunk.char_start <= offset < chunk.char_end


@pytest.mark.parametrize("name", sorted(TXT_CHAPTERS))
def test_every_text_book_parses_with_its_chapters(books_dir: Path, name: str) -> None:
    book, fmt = parse_book(books_dir / name)
    assert fmt is BookFormat.TXT
    assert sum(c.is_story for c in book.chapters) == TXT_CHAPTERS[name]
    matter = [(c.title, c.kind.value) for c in book.chapters if not c.is_story]
    assert matter == TXT_MATTER.get(name, [])
    assert "[Illustration" not in book.text and "Illustration:" not in book.text
    assert_well_formed(book)


def test_every_text_book_in_the_data_set_is_listed(books_dir: Path) -> None:
    assert sorted(p.name for p in books_dir.glob("*.txt")) == sorted(TXT_CHAPTERS)


def test_moby_dick_chapter_titles_carry_their_names(books_dir: Path) -> None:
    book, _ = parse_book(books_dir / "melville-moby_dick.txt")
    titles = chapter_titles(book)
    assert titles[0] == "Chapter 1. Loomings"  # one style: "CHAPTER" and the stop tidied
    assert "Chapter 42. The Whiteness of The Whale" in titles  # the book's own casing
    assert any("The Whiteness of The Whale" in t for t in titles)
    assert titles[-1].startswith("Epilogue")
    assert (book.title, book.author) == ("Moby Dick", "Herman Melville")


def test_frankenstein_text_skips_its_table_of_contents(books_dir: Path) -> None:
    book, _ = parse_book(books_dir / "pg84_frankenstein.txt")
    titles = chapter_titles(book)
    assert len(titles) == 28
    expected = iter(FRANKENSTEIN_CHAPTERS)
    for title in titles:
        assert title.startswith(next(expected))
    contents = book.text.index("CONTENTS")
    first_story = next(c for c in book.chapters if c.is_story)
    assert first_story.char_start > contents
    assert (book.chapters[0].title, book.chapters[0].char_start) == ("Contents", contents)
    assert book.text[first_story.char_start :].startswith("Letter 1")


def test_part_headings_fold_into_the_chapters_of_the_part(books_dir: Path) -> None:
    book, _ = parse_book(books_dir / "pg910_white_fang.txt")
    titles = chapter_titles(book)
    assert titles[0] == "Part I, Chapter I. The Trail of the Meat"  # capitals in title case
    # each "Chapter II" says which part it is in: a position or a citation names one chapter
    assert titles[1] == "Part I, Chapter II. The She-Wolf"
    assert titles[4] == "Part II, Chapter II. The Lair"
    emma, _ = parse_book(books_dir / "austen-emma.txt")
    assert chapter_titles(emma)[18:20] == ["Volume II, Chapter I", "Volume II, Chapter II"]


def test_the_books_of_a_bible_are_its_chapters(books_dir: Path) -> None:
    """A title standing alone before verse 1:1 names a book of scripture: a reader sets their
    position with "Exodus" and a citation names the book."""
    bible, _ = parse_book(books_dir / "bible-kjv.txt")
    titles = chapter_titles(bible)
    assert titles[:2] == [
        "The First Book of Moses: Called Genesis",
        "The Second Book of Moses: Called Exodus",
    ]
    assert "Ezra" in titles and titles[-1] == "The Revelation of Saint John the Devine"
    exodus = bible.chapters[1]
    assert bible.text[exodus.char_start :].startswith("The Second Book of Moses")


def test_a_plays_scenes_are_its_chapters_within_its_acts(books_dir: Path) -> None:
    """The First Folio's Latin ("Actus Secundus. Scena Prima"): a scene heading names its act,
    and the stage direction after a heading is no title."""
    macbeth, _ = parse_book(books_dir / "shakespeare-macbeth.txt")
    titles = chapter_titles(macbeth)
    assert titles[:3] == [
        "Actus Primus. Scoena Prima",
        "Actus Primus, Scena Secunda",
        "Actus Primus, Scena Tertia",
    ]
    assert titles[7:9] == ["Actus Secundus. Scena Prima", "Actus Secundus, Scena Secunda"]
    scene = macbeth.chapters[8]
    assert macbeth.text[scene.char_start :].startswith("Scena Secunda.")
    hamlet, _ = parse_book(books_dir / "shakespeare-hamlet.txt")
    assert chapter_titles(hamlet)[3] == "Actus Secundus"  # not "Enter Polonius, and Reynoldo"


BAD_CODES = {
    "empty.txt": IngestErrorCode.EMPTY,
    "fake_zip.epub": IngestErrorCode.CORRUPT,
    "truncated.epub": IngestErrorCode.CORRUPT,
    "truncated.pdf": IngestErrorCode.CORRUPT,
    "random_bytes.pdf": IngestErrorCode.CORRUPT,
}


@pytest.mark.parametrize("name", sorted(BAD_CODES))
def test_a_bad_file_is_an_ingest_error_with_a_one_line_reason(books_dir: Path, name: str) -> None:
    with pytest.raises(IngestError) as caught:
        parsers.parse_book(books_dir / "bad" / name)
    error = caught.value
    assert error.code == BAD_CODES[name]
    assert name in error.message
    assert "\n" not in error.message and len(error.message) < 300


def test_every_bad_file_is_covered(books_dir: Path) -> None:
    names = {p.name for p in (books_dir / "bad").iterdir()}
    assert names == set(BAD_CODES) | {"latin1_encoded.txt"}


def test_the_latin1_sample_imports_as_text(books_dir: Path) -> None:
    book, _ = parse_book(books_dir / "bad" / "latin1_encoded.txt")
    assert book.text.startswith("Frankenstein;")
    assert "\ufffd" not in book.text
    assert "I am already far north of London" in book.text


TITLES = {  # files whose Gutenberg header is gone: the title page says it
    "pg1342_pride_and_prejudice.txt": ("Pride and Prejudice", "Jane Austen"),  # "PRIDE. and ..."
    "pg599_vanity_fair.txt": ("Vanity Fair", "William Makepeace Thackeray"),  # "by" alone
    "pg910_white_fang.txt": ("White Fang", "Jack London"),  # "WHITE FANG"
    "pg84_frankenstein.txt": (
        "Frankenstein; or, the Modern Prometheus",
        "Mary Wollstonecraft (Godwin) Shelley",
    ),
    "austen-emma.txt": ("Emma", "Jane Austen"),
    "chesterton-brown.txt": ("The Wisdom of Father Brown", "G. K. Chesterton"),
}


@pytest.mark.parametrize("name", sorted(TITLES))
def test_title_and_author_come_from_the_text_when_the_file_has_no_metadata(
    books_dir: Path, name: str
) -> None:
    book, _ = parse_book(books_dir / name)
    assert (book.title, book.author) == TITLES[name]


def test_chapter_labels_of_every_text_book_share_one_style(books_dir: Path) -> None:
    """No label keeps a division keyword in capitals ("CHAPTER II" beside "Chapter I"), and no
    label is all capitals."""
    from folio.adapters.parsers.titles import is_shouted

    for path in sorted(books_dir.glob("*.txt")):
        for chapter in parse_book(path)[0].chapters:
            words = chapter.title.split()
            assert not any(w.strip(".,") in ("CHAPTER", "PART", "BOOK", "LETTER") for w in words)
            assert not is_shouted(chapter.title) or len(chapter.title) <= 6, (path.name, chapter)
