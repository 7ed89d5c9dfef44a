"""A push matched to a book beyond its exact file: by the EPUB's structure digest (a copy whose
metadata Calibre rewrote: its xpointer still holds), else by the title and authors it names when
exactly one of the user's books fits (a weak match: only its percentage counts, moved back, never
its xpointer), and the pairing said where the position's source is."""

from __future__ import annotations

import hashlib
import zipfile
from dataclasses import replace
from pathlib import Path

from folio.adapters.parsers.koreader_ids import epub_structure_md5, identify, structure_md5
from folio.adapters.storage.memory.books import InMemoryLibrary
from folio.adapters.storage.memory.sync import InMemorySyncStore
from folio.app.sync import PERCENTAGE_SLACK, ProgressSync, described
from folio.domain.books import BookFormat
from folio.domain.sync import DocumentIds, MatchKind, PushedDocument, fits_title_and_authors
from folio.domain.users import LOCAL_USER_ID
from tests.unit.test_progress_sync import TEXT, Clock, Owners, Users, _book, _push, _sync

XPOINTER_CH9 = "/body/DocFragment[9]/body/p/text().0"


def _epub(tmp_path: Path, *, title: str = "T", identifier: str = "urn:uuid:test-book") -> Path:
    """A minimal EPUB 2 whose package names its unique identifier; spine c1, c2 (in OEBPS/)."""
    path = tmp_path / f"{title}.epub"
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0"'
        ' unique-identifier="bookid"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f'<dc:identifier id="isbn">978-0</dc:identifier><dc:title>{title}</dc:title>'
        f'<dc:identifier id="bookid"> {identifier} </dc:identifier></metadata><manifest>'
        '<item id="b" href="c2.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="a" href="c1.xhtml" media-type="application/xhtml+xml"/>'
        '</manifest><spine><itemref idref="a"/><itemref idref="b"/></spine></package>'
    )
    container = (
        '<?xml version="1.0"?><container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    page = '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>{}</p></body></html>'
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr("META-INF/container.xml", container)
        z.writestr("OEBPS/content.opf", opf)
        z.writestr("OEBPS/c1.xhtml", page.format("One " * 300))
        z.writestr("OEBPS/c2.xhtml", page.format("Two " * 300))
    return path


def _add(parts, sync, book, *, structure: str = "", user: str = LOCAL_USER_ID) -> None:  # type: ignore[no-untyped-def]
    library, store, owners = parts
    library.add(book, TEXT, [])
    owners.owner[book.id] = user
    store.save_documents(book.id, DocumentIds(f"pmd5-{book.id}", f"fmd5-{book.id}", structure), [])


def _described_push(
    percentage: float, progress: str = XPOINTER_CH9, **body: object
) -> dict[str, object]:
    return {**_push("0" * 32, percentage, progress), **body}


def test_a_push_is_matched_by_the_structure_digest_of_a_rewritten_copy() -> None:
    sync, parts = _sync()
    _add(parts, sync, _book("b1"), structure="a" * 32)

    sync.push(LOCAL_USER_ID, _described_push(0.5, "0.5", identifiers={"structure": "A" * 32}))

    book = parts[0].get("b1")
    assert book.position.char_offset == round(len(TEXT) * 0.5)  # a bare percentage, as pushed
    assert book.position.source == "KOReader on Kobo (matched by the EPUB's identifier and spine)"


def test_a_push_is_matched_by_title_and_authors_only_to_its_percentage_moved_back() -> None:
    sync, parts = _sync()
    novel = replace(_book("b1"), author="Mary Wollstonecraft Shelley")
    _add(parts, sync, novel)
    metadata = {"filename": "x.epub", "title": "a  NOVEL", "authors": "Shelley, Mary"}

    sync.push(LOCAL_USER_ID, _described_push(0.5, metadata=metadata))

    book = parts[0].get("b1")
    pushed_at = round(len(TEXT) * 0.5)
    assert (
        pushed_at - PERCENTAGE_SLACK - 1500
        <= book.position.char_offset
        <= pushed_at - PERCENTAGE_SLACK
    )
    assert book.position.source == "KOReader on Kobo (matched by title and authors)"
    assert "matched by title and authors" in book.describe_position(now=book.position.set_at)


def test_a_title_two_of_the_users_books_share_matches_neither() -> None:
    sync, parts = _sync()
    for book_id in ("b1", "b2"):
        _add(parts, sync, replace(_book(book_id), author="Mary Shelley"))
    metadata = {"title": "A Novel", "authors": "Mary Shelley"}

    sync.push(LOCAL_USER_ID, _described_push(0.5, metadata=metadata))

    assert all(parts[0].get(b).position.char_offset is None for b in ("b1", "b2"))


def test_another_users_book_is_never_matched_by_structure_or_title() -> None:
    sync, parts = _sync()
    _add(parts, sync, replace(_book("b1"), author="Mary Shelley"), structure="a" * 32, user="bob")
    body = _described_push(0.5, identifiers={"structure": "a" * 32},
                           metadata={"title": "A Novel", "authors": "Mary Shelley"})  # fmt: skip

    sync.push(LOCAL_USER_ID, body)

    assert parts[0].get("b1").position.char_offset is None


def test_a_push_waiting_by_structure_is_applied_when_the_book_is_added(tmp_path: Path) -> None:
    epub = _epub(tmp_path)
    library, owners = InMemoryLibrary(), Owners()
    sync = ProgressSync(InMemorySyncStore(), Users(), library, owners, identify, clock=Clock())
    body = _described_push(0.5, identifiers={"structure": epub_structure_md5(epub)})
    sync.push(LOCAL_USER_ID, body)

    book = replace(_book("b9"), title="Any")
    library.add(book, TEXT, [])
    sync.book_added(LOCAL_USER_ID, book, epub)

    moved = library.get("b9")
    assert moved.position.char_offset is not None
    assert "matched by the EPUB's identifier and spine" in str(moved.position.source)


def test_the_structure_digest_is_the_md5_of_the_unique_identifier_and_spine_hrefs(
    tmp_path: Path,
) -> None:
    epub = _epub(tmp_path)
    by_hand = hashlib.md5(b"\n".join([b"urn:uuid:test-book", b"c1.xhtml", b"c2.xhtml"]))
    assert (
        epub_structure_md5(epub)
        == by_hand.hexdigest()
        == structure_md5("urn:uuid:test-book", ["c1.xhtml", "c2.xhtml"])
    )
    # another title (what Calibre rewrites) keeps it; another identifier does not
    assert epub_structure_md5(_epub(tmp_path, title="Other")) == epub_structure_md5(epub)
    assert epub_structure_md5(_epub(tmp_path, title="X", identifier="urn:x")) != by_hand.hexdigest()
    assert epub_structure_md5(tmp_path / "missing.epub") == ""


def test_a_pushs_description_keeps_what_is_well_formed_and_drops_the_rest() -> None:
    found = described({
        "metadata": {"filename": "f.epub", "title": " The  Title ", "authors": "A One\nB Two",
                     "extra": 1},
        "identifiers": {"content": "F" * 32, "structure": "not a digest", "filename": 7},
    })  # fmt: skip
    assert found == PushedDocument("f.epub", "The Title", ("A One", "B Two"), "f" * 32, "", "")
    assert described({"metadata": "x", "identifiers": [1]}) == PushedDocument()
    assert described({"metadata": {"authors": ["A", 3]}}).authors == ("A",)


def test_title_and_authors_fit_by_words_not_by_spelling() -> None:
    pushed = PushedDocument(
        title="Frankenstein; or, The Modern Prometheus", authors=("Shelley, Mary",)
    )
    assert fits_title_and_authors(
        pushed, "Frankenstein, or the modern prometheus", "Mary W. Shelley"
    )
    assert not fits_title_and_authors(pushed, "Frankenstein", "Mary Shelley")
    assert not fits_title_and_authors(
        pushed, "Frankenstein; or, The Modern Prometheus", "Percy Bysshe"
    )
    assert not fits_title_and_authors(replace(pushed, authors=()), pushed.title, "Mary Shelley")
    assert MatchKind.TITLE.weak and not MatchKind.STRUCTURE.weak
    assert BookFormat.EPUB  # the digest is computed for EPUBs only
