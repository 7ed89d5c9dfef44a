"""Progress sync from e-readers (KOReader's kosync): its document ids computed exactly as KOReader
computes them, xpointers mapped onto a book's own text, and the use case's rules (a push waits
for its book, never moves another user's, and moves back only when the setting allows)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from folio.adapters.parsers.koreader_ids import epub_fragments, filename_md5, partial_md5
from folio.adapters.storage.memory.books import InMemoryLibrary
from folio.adapters.storage.memory.sync import InMemorySyncStore
from folio.app.sync import PERCENTAGE_SLACK, ProgressSync, device_key, synced_position
from folio.domain.books import Book, BookFormat, Chapter, Page, PositionKind, ReadingPosition
from folio.domain.sync import (
    DocumentIds,
    Fragment,
    PushedProgress,
    SyncError,
    SyncErrorCode,
    XPointer,
    nonblank_before,
    offset_after_nonblank,
    parse_xpointer,
)
from folio.domain.users import LOCAL_USER_ID, ResourceKind, User, UserError, UserErrorCode
from folio.domain.xpointers import place_in_fragment
from tests.epub_support import minimal_epub

NOW = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)


# --- KOReader's document ids ------------------------------------------------------------------
def _bytes(n: int) -> bytes:
    return bytes((i * 7 + i // 251) % 256 for i in range(n))


def test_partial_md5_hashes_the_samples_koreader_reads(tmp_path: Path) -> None:
    """koreader frontend/util.lua, util.partialMD5: for i = -1..10 seek to lshift(1024, 2*i)
    (LuaJIT's lshift(1024, -2) is 0) and hash 1024 bytes, until a read returns nothing."""
    data = _bytes(300_000)
    path = tmp_path / "book.epub"
    path.write_bytes(data)
    by_hand = hashlib.md5(usedforsecurity=False)
    for offset in (0, 1024, 4096, 16384, 65536, 262144):  # 1048576 lies past the end: stop
        by_hand.update(data[offset : offset + 1024])

    assert partial_md5(path) == by_hand.hexdigest()


def test_partial_md5_of_a_small_file_takes_the_short_last_sample(tmp_path: Path) -> None:
    data = _bytes(1500)
    path = tmp_path / "tiny.pdf"
    path.write_bytes(data)
    # 0 -> 1024 bytes, 1024 -> the last 476 bytes, 4096 -> nothing: stop.
    expected = hashlib.md5(data[:1024] + data[1024:], usedforsecurity=False).hexdigest()

    assert partial_md5(path) == expected


def test_the_filename_mode_hashes_the_file_name_only() -> None:
    """kosync.koplugin/main.lua, KOSync:getFileNameDigest: md5 of the name without its folder."""
    assert filename_md5("frankenstein.epub") == hashlib.md5(b"frankenstein.epub").hexdigest()


# --- xpointers --------------------------------------------------------------------------------
def test_an_xpointer_is_read_into_fragment_element_path_and_offset() -> None:
    assert parse_xpointer("/body/DocFragment[12]/body/div/p[3]/text().45") == XPointer(
        12, "/body/div/p[3]/text()", 45
    )
    assert parse_xpointer("/body/DocFragment[3]/body/section/p[2]/text()[2].7") == XPointer(
        3, "/body/section/p[2]/text()[2]", 7
    )
    assert parse_xpointer("/body/DocFragment[5]/body/div") == XPointer(5, "/body/div", 0)
    assert parse_xpointer("45") is None
    assert parse_xpointer("/html/body/p") is None


def test_an_xpointer_lands_on_the_character_it_names_in_folios_text(tmp_path: Path) -> None:
    from folio.adapters.parsers.epub import EpubParser

    path = minimal_epub(
        tmp_path / "book.epub",
        [
            "<h1>One</h1><p>It was a dark night.</p>",
            "<h1>Two</h1><div><p>First   paragraph here.</p>"
            "<p>Second <em>with emphasis</em> and a tail that goes on.</p></div>",
        ],
    )
    text = EpubParser().parse(path).text
    fragments = epub_fragments(path)
    # The cover (DocFragment[1]) has no text (an empty range); the chapters are [2] and [3].
    assert [(f.index, f.char_end > f.char_start) for f in fragments] == [
        (1, False),
        (2, True),
        (3, True),
    ]
    second = fragments[2]
    assert text[second.char_start :].startswith("Two")

    pointer = parse_xpointer("/body/DocFragment[3]/body/div/p[2]/text()[2].6")
    assert pointer is not None
    part = text[second.char_start : second.char_end]
    offset = second.char_start + place_in_fragment(second, pointer, part)
    # text()[2] of that <p> is " and a tail that goes on.": 6 characters in, after "and a".
    assert text[:offset].endswith("Second with emphasis and a")
    assert "tail" not in text[second.char_start : offset]


def test_a_nightly_xpointer_with_every_index_lands_where_the_classic_one_does(
    tmp_path: Path,
) -> None:
    """KOReader nightly (crengine DOM 20260812) numbers every element and text node."""
    assert parse_xpointer("/body[1]/DocFragment[16]/body[1]/section[1]/p[1]/text()[1].0") == (
        XPointer(16, "/body/section/p/text()", 0)
    )
    from folio.adapters.parsers.epub import EpubParser

    chapters = ["<h1>One</h1><p>It was a dark night.</p><p>A second one.</p>",
                "<h1>Two</h1><div><p>Only paragraph, with a tail.</p></div>"]  # fmt: skip
    path = minimal_epub(tmp_path / "book.epub", chapters)
    text = EpubParser().parse(path).text
    fragments = {f.index: f for f in epub_fragments(path)}

    def landing(progress: str) -> str:
        pointer = parse_xpointer(progress)
        assert pointer is not None
        fragment = fragments[pointer.fragment]
        part = text[fragment.char_start : fragment.char_end]
        return part[: offset_after_nonblank(part, nonblank_before(fragment, pointer))]

    pairs = [("/body/DocFragment[2]/body/p[2]/text().2",
              "/body[1]/DocFragment[2]/body[1]/p[2]/text()[1].2"),
             ("/body/DocFragment[3]/body/div/p/text().4",
              "/body[1]/DocFragment[3]/body[1]/div[1]/p[1]/text()[1].4")]  # fmt: skip
    for classic, nightly in pairs:
        assert landing(classic) == landing(nightly)
    first, second = landing(pairs[0][1]), landing(pairs[1][1])
    assert first.endswith("dark night.\n\nA") and second.startswith("Two")
    assert second.endswith(("Onl", "Only"))  # 4 characters in, the text node's density applied


def test_an_unknown_element_falls_back_to_its_nearest_known_ancestor() -> None:
    fragment = Fragment(4, 100, 200, {"/body": 0, "/body/div": 0, "/body/div/p[2]": 30})
    pointer = XPointer(4, "/body/div/p[2]/autoBoxing/span/text()", 12)
    assert nonblank_before(fragment, pointer) == 30


# --- the use case -------------------------------------------------------------------------------
class Owners:
    def __init__(self) -> None:
        self.owner: dict[str, str] = {}

    def owner_of(self, kind: ResourceKind, resource_id: str) -> str:
        return self.owner.get(resource_id, LOCAL_USER_ID)

    def owners(self, kind: ResourceKind, resource_ids: list[str]) -> dict[str, str]:
        return {r: self.owner_of(kind, r) for r in resource_ids}


class Users:
    def __init__(self, *names: str) -> None:
        self.users = [User(f"id-{n}", n, NOW) for n in names]

    def count(self) -> int:
        return len(self.users)

    def list(self) -> list[User]:
        return list(self.users)

    def get_by_name(self, name: str) -> User:
        for user in self.users:
            if user.name == name:
                return user
        raise UserError(f"No user named {name!r}", code=UserErrorCode.NOT_FOUND)


TEXT = "".join(f"Chapter {n}\n\n" + "word " * 198 + "\n\n" for n in range(1, 11))
PDF_PAGES = tuple(Page(n, str(n + 4), (n - 1) * 1000, n * 1000) for n in range(1, 11))


def _book(book_id: str, fmt: BookFormat = BookFormat.EPUB) -> Book:
    starts = [TEXT.index(f"Chapter {n}\n") for n in range(1, 11)]
    chapters = tuple(Chapter(n, f"Chapter {n}", s) for n, s in enumerate(starts, 1))
    return Book(book_id, "A Novel", None, fmt, f"{book_id}.{fmt.value}", f"hash-{book_id}",
                len(PDF_PAGES), len(TEXT), chapters, PDF_PAGES)  # fmt: skip


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def _sync(*, users: Users | None = None, moves_back: bool = True) -> tuple[ProgressSync, Any]:
    library, store, owners = InMemoryLibrary(), InMemorySyncStore(), Owners()

    def identify(path: Path, fmt: BookFormat) -> tuple[DocumentIds, list[Fragment]]:
        return DocumentIds(f"pmd5-{path.stem}", filename_md5(path.name)), []

    sync = ProgressSync(store, users or Users(), library, owners, identify,
                        moves_back=moves_back, clock=Clock())  # fmt: skip
    return sync, (library, store, owners)


def _push(
    document: str, percentage: float, progress: str = "", device: str = "Kobo"
) -> dict[str, object]:
    return {"document": document, "progress": progress or f"{percentage}",
            "percentage": percentage, "device": device, "device_id": "D1"}  # fmt: skip


def _add(parts: Any, sync: ProgressSync, book: Book, user: str = LOCAL_USER_ID) -> None:
    library, _, owners = parts
    library.add(book, TEXT, [])
    owners.owner[book.id] = user
    sync.book_added(user, book, Path(f"/books/{book.id}.{book.format.value}"))


def test_a_push_moves_the_users_book_and_says_where_it_came_from() -> None:
    sync, parts = _sync()
    _add(parts, sync, _book("b1"))

    sync.push(LOCAL_USER_ID, _push("pmd5-b1", 0.5))

    book = parts[0].get("b1")
    assert book.position.char_offset == round(len(TEXT) * 0.5)
    assert book.position.source == "KOReader on Kobo"
    described = book.describe_position(now=book.position.set_at + timedelta(hours=2))
    assert described.startswith("through 50% of the book (Chapter 6")
    assert described.endswith(", from KOReader on Kobo, 2 h ago")


def test_a_push_for_an_unknown_document_waits_for_its_book() -> None:
    sync, parts = _sync()
    sync.push(LOCAL_USER_ID, _push(filename_md5("b2.pdf"), 0.1, progress="7"))
    assert sync.pull(LOCAL_USER_ID, filename_md5("b2.pdf")) is not None

    _add(parts, sync, _book("b2", BookFormat.PDF))

    book = parts[0].get("b2")
    assert book.position.kind is PositionKind.PAGE
    assert book.position.char_offset == PDF_PAGES[6].char_end  # page 7, printed label "11"
    assert book.describe_position().startswith("through p. 11 of 10")


def test_a_push_never_moves_another_users_book() -> None:
    sync, parts = _sync(users=Users("alice", "bob"))
    _add(parts, sync, _book("b1"), user="id-bob")

    sync.push("id-alice", _push("pmd5-b1", 0.9))

    assert parts[0].get("b1").position.char_offset is None


def test_with_moves_back_off_a_push_behind_the_position_is_kept_but_not_applied() -> None:
    sync, parts = _sync(moves_back=False)
    _add(parts, sync, _book("b1"))
    sync.push(LOCAL_USER_ID, _push("pmd5-b1", 0.6))

    sync.push(LOCAL_USER_ID, _push("pmd5-b1", 0.2, device="Phone"))

    book = parts[0].get("b1")
    assert book.position.char_offset == round(len(TEXT) * 0.6)
    assert sync.pull(LOCAL_USER_ID, "pmd5-b1").device == "Phone"


def test_by_default_the_latest_push_wins_even_backwards() -> None:
    sync, parts = _sync()
    _add(parts, sync, _book("b1"))
    sync.push(LOCAL_USER_ID, _push("pmd5-b1", 0.6))
    sync.push(LOCAL_USER_ID, _push("pmd5-b1", 0.2))
    assert parts[0].get("b1").position.char_offset == round(len(TEXT) * 0.2)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ([], SyncErrorCode.INVALID_INPUT),
        ({"progress": "1", "percentage": 0.1, "device": "K"}, SyncErrorCode.DOCUMENT_MISSING),
        ({"document": "a:b", "progress": "1", "percentage": 0.1, "device": "K"},
         SyncErrorCode.DOCUMENT_MISSING),
        ({"document": "d", "progress": "1", "percentage": 1.5, "device": "K"},
         SyncErrorCode.INVALID_INPUT),
        ({"document": "d", "progress": "1", "percentage": "x", "device": "K"},
         SyncErrorCode.INVALID_INPUT),
        ({"document": "d", "progress": "1", "percentage": 0.1}, SyncErrorCode.INVALID_INPUT),
        ({"document": "d", "progress": "p" * 5000, "percentage": 0.1, "device": "K"},
         SyncErrorCode.INVALID_INPUT),
    ],
)  # fmt: skip
def test_a_malformed_push_is_refused_with_the_protocols_reason(
    body: object, code: SyncErrorCode
) -> None:
    sync, _ = _sync()
    with pytest.raises(SyncError) as caught:
        sync.push(LOCAL_USER_ID, body)
    assert caught.value.code is code


def test_a_login_authenticates_with_koreaders_key_and_nothing_else() -> None:
    sync, _ = _sync(users=Users("alice"))
    assert sync.set_login("alice", "correct horse") == "alice"

    assert sync.authenticate("alice", device_key("correct horse")) == "id-alice"
    for user, key in [("alice", device_key("wrong")), ("bob", device_key("correct horse")),
                      ("alice", None), (None, device_key("correct horse"))]:  # fmt: skip
        with pytest.raises(SyncError) as caught:
            sync.authenticate(user, key)
        assert caught.value.code is SyncErrorCode.UNAUTHORIZED


def test_without_users_the_login_is_the_local_users() -> None:
    sync, _ = _sync()
    assert sync.set_login("reader", "a long password") == "the local user"
    assert sync.authenticate("reader", device_key("a long password")) == LOCAL_USER_ID


def test_register_only_confirms_an_existing_login() -> None:
    sync, _ = _sync()
    sync.set_login("reader", "a long password")
    key = device_key("a long password")

    assert sync.register({"username": "reader", "password": key}) == "reader"
    for body, code in [
        ({"username": "reader", "password": device_key("other")}, SyncErrorCode.USER_EXISTS),
        ({"username": "newcomer", "password": key}, SyncErrorCode.REGISTRATION_DISABLED),
        ({"username": "reader"}, SyncErrorCode.INVALID_INPUT),
    ]:
        with pytest.raises(SyncError) as caught:
            sync.register(body)
        assert caught.value.code is code


def test_a_position_set_by_hand_has_no_source() -> None:
    book = _book("b1").with_position(ReadingPosition(500, PositionKind.PERCENT, 10.0))
    assert "from" not in book.describe_position(now=NOW)


def test_a_pdf_page_outside_the_book_falls_back_to_the_percentage() -> None:
    pushed = PushedProgress("d", "999", 0.25, "Kobo", "D1", NOW)
    position = synced_position(_book("b1", BookFormat.PDF), pushed, [], InMemoryLibrary())
    assert position is not None and position.char_offset == round(len(TEXT) * 0.25)


def test_an_xpointer_folio_cannot_place_never_puts_the_reader_ahead_of_the_device() -> None:
    """The device's percentage runs ahead of the text read: an unplaced xpointer moves back."""
    book = _book("b1")
    ahead = round(len(TEXT) * 0.75)
    lost = PushedProgress("d", "/body[1]/DocFragment[99]/body[1]/p[3]/text()[1].5", 0.75, "Kobo",
                          "D1", NOW)  # fmt: skip
    position = synced_position(book, lost, [], InMemoryLibrary())
    assert position is not None and position.char_offset is not None
    assert position.char_offset <= ahead - PERCENTAGE_SLACK
    plain = PushedProgress("d", "0", 0.75, "Kobo", "D1", NOW)  # no place named: as pushed
    assert synced_position(book, plain, [], InMemoryLibrary()).char_offset == ahead


def test_key_checks_run_a_bounded_number_at_once_however_many_clients_ask(monkeypatch) -> None:
    """Issue 36: each wrong key cost a fresh 16 MB scrypt, all at once under a flood."""
    import threading
    import time

    import folio.app.sync as sync_module

    running, most, lock = [0], [0], threading.Lock()

    def slow_scrypt(*args: object, **kwargs: object) -> bytes:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.02)
        with lock:
            running[0] -= 1
        return b"\0" * 64

    monkeypatch.setattr(sync_module.hashlib, "scrypt", slow_scrypt)
    stored = f"scrypt$16384${'00' * 16}${'11' * 64}"
    threads = [threading.Thread(target=sync_module.verify_key, args=(stored, f"wrong {i}"))
               for i in range(12)]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == sync_module.CONCURRENT_KEY_CHECKS
