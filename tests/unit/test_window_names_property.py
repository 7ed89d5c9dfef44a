"""Property: the people the reader has met are named only as the text read names them. A first
name met early and a surname the book gives later ("Henry", then "Henry Clerval") share words;
however often each comes up, and whether a namesake with the surname ("Mr Clerval") is met early
too, no answer of the people tool (the list, or any of the names looked up) joins the two, says the
full name, or names the surname when the text read never does."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from folio.adapters.embeddings.hashing import HashingEmbedder
from folio.adapters.storage.memory.books import InMemoryLibrary
from folio.agent.lexicon import Lexicons
from folio.agent.tools import ToolContext, ToolServices, default_registry
from folio.app.search import SearchBook
from folio.domain.books import Book, BookFormat, Chapter, Chunk, Page
from folio.domain.lexicon import Lexicon
from folio.domain.passages import PEOPLE
from folio.domain.search import STOPWORDS

EMBEDDER = HashingEmbedder(32)
NAME = st.text("aeioulmnrstvkd", min_size=5, max_size=8).map(str.capitalize)


def early_text(first: str, surname: str, times: int, namesake: bool) -> str:
    said = [f"In the morning {first} walked to the market and he bought bread.",
            f"After that {first} said that he was tired, and so {first} slept."]  # fmt: skip
    if namesake:
        said.append(f"His neighbour Mr {surname} was a merchant, and he was kind to all.")
    return " ".join(said * times)


def late_text(first: str, surname: str, times: int) -> str:
    said = [f"At last {first} {surname} came home and he smiled.",
            f"Everyone knew {surname} well, for he was generous to the poor."]  # fmt: skip
    return " ".join(said * times)


def stored(early: str, late: str) -> tuple[InMemoryLibrary, Book]:
    """A two-chapter book read through Chapter 1, its whole-book lexicon stored with it."""
    parts = [("Chapter 1", early), ("Chapter 2", late)]
    text, chapters, pages, chunks = "", [], [], []
    for n, (title, body) in enumerate(parts, start=1):
        start = len(text)
        text += f"{title}\n\n{body}\n\n"
        chapters.append(Chapter(n, title, start))
        pages.append(Page(n, str(n), start, len(text)))
        chunks.append(Chunk(f"c{n}", "b", n - 1, text[start:], start, len(text), n, n, title, n))
    made = datetime(2024, 1, 1, tzinfo=UTC)
    book = Book("b", "Names", None, BookFormat.TXT, "names.txt", "h", 2, len(text),
                tuple(chapters), tuple(pages), created_at=made)  # fmt: skip
    book = book.with_position(book.position_at_chapter("1"))
    library = InMemoryLibrary()
    library.add(book, text, chunks, EMBEDDER.embed([c.text for c in chunks]),
                lexicon=Lexicon.of(text))  # fmt: skip
    return library, book


def answers(library: InMemoryLibrary, book: Book, *names: str) -> list[dict[str, Any]]:
    services = ToolServices(SearchBook(library, EMBEDDER), library, library, lexicons=Lexicons())
    registry, ctx = default_registry(), ToolContext(book=book)
    calls = [{}, *({"name": n} for n in names)]
    results = [registry.execute(PEOPLE, ctx, services, arguments) for arguments in calls]
    assert all(r.success for r in results)
    return [r.envelope()["data"] for r in results]


@settings(max_examples=40, deadline=None)
@given(
    first=NAME,
    surname=NAME,
    early_times=st.integers(1, 3),
    late_times=st.integers(2, 6),
    namesake=st.booleans(),
)
def test_a_surname_given_later_is_never_told_through_a_first_name_met_early(
    first: str, surname: str, early_times: int, late_times: int, namesake: bool
) -> None:
    words = {first.lower(), surname.lower()}
    if first == surname or words & STOPWORDS or first.startswith(surname[:4]):
        return
    if surname.startswith(first[:4]):
        return
    library, book = stored(
        early_text(first, surname, early_times, namesake), late_text(first, surname, late_times)
    )

    listed, by_first, by_surname, by_full = answers(
        library, book, first, surname, f"{first} {surname}"
    )

    for data in (listed, by_first, by_surname, by_full):
        for person in data["people"]:
            forms = [person["name"], *person.get("aliases", [])]
            assert not (any(first in f for f in forms) and any(surname in f for f in forms)), data
            assert person["first"]["char_start"] < book.position.char_offset  # type: ignore[operator]
    for data in (listed, by_first):
        assert f"{first} {surname}" not in json.dumps(data)
        if not namesake:  # the text read never says the surname
            assert surname not in json.dumps(data)
