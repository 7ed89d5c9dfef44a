"""chunk_book: exact offsets, chapter and page consistency, size bounds, overlap, determinism."""

from __future__ import annotations

import bisect
import itertools
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from folio.app.chunking import MAX_WORDS, MIN_OPENING_WORDS, chunk_book
from folio.domain.books import Chapter, Chunk, Page, ParsedBook

WORDS = ["whale", "sea", "Ahab", "ship", "the", "a", "of", "storm", "night", "white", "harpoon"]


def make_book(text: str, *, chapter_starts: list[int], page_cuts: list[int]) -> ParsedBook:
    """A ParsedBook over ``text`` with chapters at the given offsets and pages cut there."""
    cuts = sorted({0, len(text), *[c for c in page_cuts if 0 < c < len(text)]})
    pages = tuple(
        Page(number=i, label=str(i), char_start=a, char_end=b)
        for i, (a, b) in enumerate(itertools.pairwise(cuts), start=1)
    )
    starts = sorted({s for s in chapter_starts if 0 <= s < len(text)})
    chapters = tuple(
        Chapter(index=i, title=f"Chapter {i}", char_start=s) for i, s in enumerate(starts, 1)
    )
    return ParsedBook(text=text, pages=pages, chapters=chapters)


def page_of(book: ParsedBook, offset: int) -> int:
    starts = [p.char_start for p in book.pages]
    return book.pages[bisect.bisect_right(starts, offset) - 1].number


def chapter_of(book: ParsedBook, offset: int) -> Chapter | None:
    starts = [c.char_start for c in book.chapters]
    i = bisect.bisect_right(starts, offset) - 1
    return book.chapters[i] if i >= 0 else None


def assert_invariants(book: ParsedBook, chunks: list[Chunk], *, max_words: int = MAX_WORDS) -> None:
    for ordinal, chunk in enumerate(chunks):
        assert chunk.ordinal == ordinal and chunk.id == f"b:{ordinal}" and chunk.book_id == "b"
        assert book.text[chunk.char_start : chunk.char_end] == chunk.text
        assert chunk.text and chunk.text == chunk.text.strip()
        assert len(chunk.text.split()) <= max_words
        first, last = chapter_of(book, chunk.char_start), chapter_of(book, chunk.char_end - 1)
        assert first == last, "a chunk never crosses a chapter boundary"
        assert chunk.chapter == (first.title if first else None)
        assert chunk.chapter_index == (first.index if first else None)
        assert chunk.page_start == page_of(book, chunk.char_start)
        assert chunk.page_end == page_of(book, chunk.char_end - 1)
    starts = [c.char_start for c in chunks]
    assert starts == sorted(starts)
    covered = [False] * len(book.text)
    for chunk in chunks:
        covered[chunk.char_start : chunk.char_end] = [True] * (chunk.char_end - chunk.char_start)
    opening = min((c.char_start for c in book.chapters), default=len(book.text))
    title = len(book.text[:opening].split()) < MIN_OPENING_WORDS and book.chapters
    lost = [i for i, ch in enumerate(book.text) if not ch.isspace() and not covered[i]]
    assert all(title and i < opening for i in lost), "every word is in a chunk, but a title's"


sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=40).map(
    lambda ws: " ".join(ws) + "."
)
paragraph = st.lists(sentence, min_size=1, max_size=12).map(" ".join)
verse = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=9), min_size=1, max_size=80)
block = st.one_of(paragraph, verse.map(lambda lines: "\n".join(" ".join(ws) for ws in lines)))


@st.composite
def books(draw: st.DrawFn) -> ParsedBook:
    text = "\n\n".join(draw(st.lists(block, min_size=1, max_size=25)))
    text = draw(st.sampled_from(["", "  ", "\n"])) + text + draw(st.sampled_from(["", "\n\n"]))
    offsets = st.integers(min_value=0, max_value=max(0, len(text) - 1))
    return make_book(
        text,
        chapter_starts=draw(st.lists(offsets, max_size=6)),
        page_cuts=draw(st.lists(offsets, max_size=30)),
    )


@settings(max_examples=80, deadline=None)
@given(books(), st.integers(min_value=20, max_value=200), st.integers(min_value=0, max_value=40))
def test_chunks_keep_their_invariants(book: ParsedBook, target: int, overlap: int) -> None:
    chunks = chunk_book(
        "b", book, target_words=target, overlap_words=overlap, max_words=target + 20
    )
    assert_invariants(book, chunks, max_words=target + 20)


@settings(max_examples=30, deadline=None)
@given(books())
def test_chunks_under_a_token_counter_fit_its_window(book: ParsedBook) -> None:
    def count(text: str) -> int:  # a fake wordpiece count: 2 special tokens + 1 per word or mark
        return 2 + len(re.findall(r"\w+|[^\w\s]", text))

    chunks = chunk_book("b", book, count_tokens=count, max_tokens=64)
    assert_invariants(book, chunks)
    assert all(count(c.text) <= 64 for c in chunks)


def test_chunks_end_on_sentence_boundaries_and_overlap() -> None:
    text = " ".join(f"Sentence number {i} has exactly seven words." for i in range(200))
    book = make_book(text, chapter_starts=[], page_cuts=[])
    chunks = chunk_book("b", book, target_words=200, overlap_words=30)
    assert len(chunks) == 8  # 1400 words, 203 per chunk, 4 sentences (28 words) shared
    assert all(c.text.endswith("words.") and c.text.startswith("Sentence") for c in chunks)
    assert all(195 <= len(c.text.split()) <= 203 for c in chunks[:-1])
    for prev, nxt in itertools.pairwise(chunks):
        shared = prev.char_end - nxt.char_start
        assert shared > 0 and len(text[nxt.char_start : prev.char_end].split()) <= 30


def test_text_without_punctuation_is_still_split() -> None:
    text = " ".join(["word"] * 5000)
    chunks = chunk_book("b", make_book(text, chapter_starts=[0], page_cuts=[]))
    assert len(chunks) >= 5000 // MAX_WORDS
    assert max(len(c.text.split()) for c in chunks) <= MAX_WORDS


def test_text_before_the_first_chapter_has_no_chapter() -> None:
    preface = "Preface text here, " + "long enough to be read as a passage of its own " * 2
    text = f"{preface.strip()}\n\nChapter 1\n\nThe story starts."
    book = make_book(text, chapter_starts=[text.index("Chapter 1")], page_cuts=[])
    chunks = chunk_book("b", book)
    assert [(c.text, c.chapter) for c in chunks] == [
        (preface.strip(), None),
        ("Chapter 1\n\nThe story starts.", "Chapter 1"),
    ]


def test_a_title_line_before_the_first_chapter_is_no_passage() -> None:
    """ "[Emma by Jane Austen 1816]" was a passage of five words: a search put it third for "Who
    is Emma?" and first for Macbeth's "Who discovers the murder?". A book with no chapter keeps
    all its text, however short."""
    text = "[Emma by Jane Austen 1816]\n\n\nCHAPTER I\n\nEmma Woodhouse, handsome, clever."
    book = make_book(text, chapter_starts=[text.index("CHAPTER I")], page_cuts=[])
    assert [c.chapter for c in chunk_book("b", book)] == ["Chapter 1"]
    short = make_book("[Emma by Jane Austen 1816]", chapter_starts=[], page_cuts=[])
    assert [c.text for c in chunk_book("b", short)] == ["[Emma by Jane Austen 1816]"]


def test_chunk_pages_span_the_pages_it_runs_over() -> None:
    text = "One two three. Four five six. Seven eight nine."
    book = make_book(text, chapter_starts=[], page_cuts=[text.index("Four"), text.index("Seven")])
    [chunk] = chunk_book("b", book)
    assert (chunk.page_start, chunk.page_end) == (1, 3)


def test_chunking_is_deterministic() -> None:
    text = "\n\n".join(f"Paragraph {i}. " + "Some words follow here. " * 20 for i in range(50))
    book = make_book(text, chapter_starts=[0, len(text) // 2], page_cuts=[1000, 5000])
    assert chunk_book("x", book) == chunk_book("x", book)
