"""The xpointer of a place in folio's text (``folio.domain.xpointers``): read back as progress sync
reads a device's xpointer, it lands on that place, on small EPUBs built here (any offset,
hypothesis) and over many offsets of a real EPUB (skipped without the shared books)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from folio.adapters.parsers.epub import EpubParser
from folio.adapters.parsers.koreader_ids import epub_fragments
from folio.domain.sync import Fragment, parse_xpointer
from folio.domain.xpointers import fragment_at, place_in_fragment, xpointer_at
from tests.epub_support import minimal_epub


def landing(fragments: list[Fragment], text: str, xpointer: str) -> int:
    """Where progress sync puts a reader whose device pushed ``xpointer`` (app/sync.py)."""
    pointer = parse_xpointer(xpointer)
    assert pointer is not None, xpointer
    fragment = next(f for f in fragments if f.index == pointer.fragment)
    part = text[fragment.char_start : fragment.char_end]
    return fragment.char_start + place_in_fragment(fragment, pointer, part)


def just_inside(text: str, offset: int) -> int:
    """The place just after the first non-blank character at or after ``offset``."""
    at = offset
    while at < len(text) and text[at].isspace():
        at += 1
    return at + 1


CHAPTERS = [
    "<h1>One</h1><p>It was a dark night.</p><p>A second   paragraph, spaced.</p>",
    "<h1>Two</h1><div><p>First paragraph here.</p>"
    "<p>Second <em>with emphasis</em> and a tail that goes on.</p></div>"
    "<blockquote><p>Quoted <b>bold</b> words.</p></blockquote><p>Last one.</p>",
]


@pytest.fixture(scope="module")
def small_book(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Fragment], str]:
    path = minimal_epub(tmp_path_factory.mktemp("xp") / "book.epub", CHAPTERS)
    return epub_fragments(path), EpubParser().parse(path).text


def test_a_place_in_an_emphasis_is_pointed_at_its_own_text_node(
    small_book: tuple[list[Fragment], str],
) -> None:
    fragments, text = small_book
    offset = text.index("emphasis")
    fragment = fragment_at(fragments, offset)
    assert fragment is not None
    xpointer = xpointer_at(fragment, _part(fragments, text, offset), offset)
    # "with emphasis": just after the "e" of "emphasis", 6 characters into the text node
    assert xpointer == "/body/DocFragment[3]/body/div/p[2]/em/text().6"
    assert landing(fragments, text, xpointer) == offset + 1


def test_a_tail_after_an_element_is_the_paragraphs_second_text_node(
    small_book: tuple[list[Fragment], str],
) -> None:
    fragments, text = small_book
    offset = text.index("tail")
    fragment = fragment_at(fragments, offset)
    assert fragment is not None
    xpointer = xpointer_at(fragment, _part(fragments, text, offset), offset)
    assert xpointer.startswith("/body/DocFragment[3]/body/div/p[2]/text()[2].")
    assert text[: landing(fragments, text, xpointer)].endswith("and a t")


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_place_read_back_lands_just_inside_it(
    small_book: tuple[list[Fragment], str], data: st.DataObject
) -> None:
    fragments, text = small_book
    fragment = data.draw(st.sampled_from([f for f in fragments if f.char_end > f.char_start]))
    offset = data.draw(st.integers(fragment.char_start, fragment.char_end - 1))
    xpointer = xpointer_at(fragment, _part(fragments, text, offset), offset)
    assert landing(fragments, text, xpointer) == min(
        just_inside(text, offset), _last_nonblank_end(text, fragment)
    )


def test_a_place_between_two_documents_belongs_to_the_next() -> None:
    first, second = Fragment(2, 0, 10, {}), Fragment(3, 12, 30, {})
    assert fragment_at([second, first], 10) is second
    assert fragment_at([first, second], 30) is None
    assert fragment_at([first, second], 3) is first


def test_a_document_without_text_nodes_is_pointed_at_its_body() -> None:
    assert xpointer_at(Fragment(5, 0, 4, {"/body": 0}), "text", 2) == "/body/DocFragment[5]/body"


def test_every_cited_place_of_a_real_epub_round_trips(books_dir: Path) -> None:
    """Over 400 places spread through Frankenstein's EPUB, each read back lands just inside it,
    and the xpointer names a text node of the document holding it."""
    path = books_dir / "formats" / "frankenstein.epub"
    if not path.exists():
        pytest.skip(f"{path} is not available")
    fragments = epub_fragments(path)
    text = EpubParser().parse(path).text
    assert len(fragments) > 20
    step = max(1, len(text) // 400)
    checked = 0
    for offset in range(fragments[0].char_start, fragments[-1].char_end, step):
        fragment = fragment_at(fragments, offset)
        assert fragment is not None
        xpointer = xpointer_at(fragment, _part(fragments, text, offset), offset)
        assert xpointer.startswith(f"/body/DocFragment[{fragment.index}]/body/")
        assert "/text()" in xpointer
        expected = min(just_inside(text, max(offset, fragment.char_start)), fragment.char_end)
        assert landing(fragments, text, xpointer) == expected, (offset, xpointer)
        checked += 1
    assert checked >= 400


def _part(fragments: list[Fragment], text: str, offset: int) -> str:
    fragment = fragment_at(fragments, offset)
    assert fragment is not None
    return text[fragment.char_start : fragment.char_end]


def _last_nonblank_end(text: str, fragment: Fragment) -> int:
    return len(text[: fragment.char_end].rstrip())
