"""Reading progress from e-readers (KOReader's progress sync, "kosync"): logins, pushes, pulls.

A user sets a sync password (``set_login``); KOReader sends the MD5 of it as its key, which folio
stores only as a scrypt hash. A push is validated, kept as the user's last push for the document,
and applied to each of the user's books whose file KOReader names that way: the xpointer or PDF
page becomes folio's position, with the device and time it came from. A push for a document no
book matches yet waits and is applied when the book is added (``book_added``).

Invariants: a push never reaches another user's book; with ``moves_back`` off, a push behind the
position is kept (and served back to devices) but does not move it.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import math
import re
import secrets
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeGuard

from folio.app.login_limits import FailedLogins
from folio.app.sync_placement import PERCENTAGE_SLACK as PERCENTAGE_SLACK  # where tests look
from folio.app.sync_placement import synced_position
from folio.domain.books import Book, BookFormat
from folio.domain.errors import BookError
from folio.domain.ports import (
    BookRepository,
    OwnershipRepository,
    SyncAccount,
    SyncRepository,
    UserRepository,
)
from folio.domain.sync import (
    MAX_DEVICE_CHARS,
    MAX_DOCUMENT_CHARS,
    MAX_KEY_CHARS,
    MAX_PROGRESS_CHARS,
    DocumentIds,
    Fragment,
    MatchKind,
    PushedDocument,
    PushedProgress,
    SyncError,
    SyncErrorCode,
    fits_title_and_authors,
)
from folio.domain.users import LOCAL_USER_ID, ResourceKind, validate_user_name

Identify = Callable[[Path, BookFormat], tuple[DocumentIds, list[Fragment]]]

MIN_PASSWORD_CHARS = 8
MAX_PASSWORD_CHARS = 1024
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


def device_key(password: str) -> str:
    """What KOReader sends for a password (``md5(password)`` in kosync.koplugin/main.lua)."""
    return hashlib.md5(password.encode("utf-8"), usedforsecurity=False).hexdigest()


# scrypt takes 16 MB and tens of ms a call: a flood of wrong keys from many clients at once
# would take as many times that (a two-user server grew from 115 to 961 MB under 64 clients),
# and each thread that ever ran one keeps its 16 MB in its own malloc arena. So every key check
# runs on one of ``CONCURRENT_KEY_CHECKS`` threads of its own; the callers wait their turn.
CONCURRENT_KEY_CHECKS = 2
_key_checks = ThreadPoolExecutor(CONCURRENT_KEY_CHECKS, thread_name_prefix="folio-key-check")


def _scrypt(key: str, salt: bytes, n: int) -> bytes:
    data = key.encode("utf-8")
    return _key_checks.submit(hashlib.scrypt, data, salt=salt, n=n, r=8, p=1).result()


def hash_key(key: str) -> str:
    salt = secrets.token_bytes(16)
    digest = _scrypt(key, salt, _SCRYPT["n"])
    return f"scrypt${_SCRYPT['n']}${salt.hex()}${digest.hex()}"


@functools.lru_cache(maxsize=256)
def verify_key(key_hash: str, key: str) -> bool:
    """Does ``key`` match ``key_hash``? Cached: a device authenticates on every push."""
    try:
        _, n, salt, digest = key_hash.split("$")
        found = _scrypt(key, bytes.fromhex(salt), int(n)).hex()
    except ValueError:
        return False
    return hmac.compare_digest(found, digest)


def _utcnow() -> datetime:
    return datetime.now(UTC)


class ProgressSync:
    def __init__(
        self,
        store: SyncRepository,
        users: UserRepository,
        books: BookRepository,
        owners: OwnershipRepository,
        identify: Identify,
        *,
        moves_back: bool = True,
        clock: Callable[[], datetime] = _utcnow,
        failed_logins: FailedLogins | None = None,
    ) -> None:
        self._store = store
        self._users = users
        self._books = books
        self._owners = owners
        self._identify = identify
        self._moves_back = moves_back
        self._clock = clock
        self._failed = failed_logins or FailedLogins()

    # --- logins -------------------------------------------------------------------------------
    def set_login(self, login: str, password: str) -> str:
        """Give the folio user named ``login`` (or, while no user exists, the local user) the
        sync password ``password``; returns whose login it is."""
        name = validate_user_name(login)
        if not MIN_PASSWORD_CHARS <= len(password) <= MAX_PASSWORD_CHARS:
            raise SyncError(
                f"A sync password has {MIN_PASSWORD_CHARS}-{MAX_PASSWORD_CHARS} characters",
                code=SyncErrorCode.INVALID_INPUT,
            )
        user_id = LOCAL_USER_ID if self._users.count() == 0 else self._users.get_by_name(name).id
        self._store.save_account(SyncAccount(user_id, name, hash_key(device_key(password))))
        return "the local user" if user_id == LOCAL_USER_ID else name

    def authenticate(
        self, username: str | None, key: str | None, *, address: str | None = None
    ) -> str:
        """The id of the user whose login and key these are. Raises ``SyncError(UNAUTHORIZED)``,
        or ``SyncError(RATE_LIMITED)`` without checking the key once ``username`` or the client
        ``address`` has failed too often (``FailedLogins``); a success resets the login's
        count."""
        unauthorized = SyncError("Unauthorized", code=SyncErrorCode.UNAUTHORIZED)
        self.refuse_if_limited(username, address)
        if not username or not key or len(username) > 64 or len(key) > MAX_KEY_CHARS:
            self._failed.failed(None, address)
            raise unauthorized
        account = self._store.account(username)
        if account is None:
            self._failed.failed(None, address)
            raise unauthorized
        if not verify_key(account.key_hash, key):
            self._failed.failed(username, address)
            raise unauthorized
        if account.user_id != LOCAL_USER_ID and account.user_id not in {
            u.id for u in self._users.list()
        }:
            raise unauthorized  # the folio user was removed
        self._failed.succeeded(username)
        return account.user_id

    def refuse_if_limited(self, username: str | None, address: str | None) -> None:
        """Raise ``SyncError(RATE_LIMITED)`` (``details["retry_after"]``: seconds) while
        ``username`` or ``address`` may not try a key; a cheap check that reads no database."""
        wait = self._failed.retry_after(username, address)
        if wait > 0:
            minutes = max(1, round(wait / 60))
            raise SyncError(
                f"Too many failed sync logins: try again in {minutes} min",
                code=SyncErrorCode.RATE_LIMITED,
                retry_after=wait,
            )

    def register(self, body: Any, *, address: str | None = None) -> str:
        """KOReader's "Register": folio users are made with ``folio users``, so this succeeds
        only for an existing login with its own password (then KOReader keeps it). A wrong
        password counts as a failed login, an unknown login as a failure of the address."""
        if not isinstance(body, Mapping):
            raise SyncError("Invalid request", code=SyncErrorCode.INVALID_INPUT)
        username, key = body.get("username"), body.get("password")
        if not _text(username, 64) or not _text(key, MAX_KEY_CHARS):
            raise SyncError("Invalid request", code=SyncErrorCode.INVALID_INPUT)
        self.refuse_if_limited(username, address)
        account = self._store.account(username)
        if account is None:  # counted: this answer tells an unknown login from a known one
            self._failed.failed(None, address)
            raise SyncError(
                "User registration is disabled: set a sync password with"
                f" `folio users sync-password {username}` on the folio server",
                code=SyncErrorCode.REGISTRATION_DISABLED,
            )
        if not verify_key(account.key_hash, key):
            self._failed.failed(username, address)
            raise SyncError("Username is already registered.", code=SyncErrorCode.USER_EXISTS)
        self._failed.succeeded(username)
        return str(username)

    # --- progress ----------------------------------------------------------------------------
    def push(self, user_id: str, body: Any) -> PushedProgress:
        """Keep a device's push and move the user's matching books to it: the books of its file
        (its digest in either KOReader mode), else of its EPUB structure digest, else the one
        book of the user whose title and authors the push names (``MatchKind``)."""
        pushed = self._validated(body)
        self._store.save_progress(user_id, pushed)
        book_ids, match = self.matching_books(user_id, pushed)
        for book_id in book_ids:
            self._apply(book_id, pushed, match)
        return pushed

    def matching_books(self, user_id: str, pushed: PushedProgress) -> tuple[list[str], MatchKind]:
        """The user's books ``pushed`` is for, and how they were found (nothing found: ``[]``)."""
        described = pushed.described
        exact = [
            b
            for d in (pushed.document, *described.digests)
            for b in self._store.books_for_document(d)
        ]
        if found := self._own(user_id, exact):
            return found, MatchKind.DOCUMENT
        if described.structure_md5:
            by_structure = self._store.books_for_structure(described.structure_md5)
            if found := self._own(user_id, by_structure):
                return found, MatchKind.STRUCTURE
        if described.title and described.authors:
            books = self._books.list()
            owned = self._owners.owners(ResourceKind.BOOK, [b.id for b in books])
            fits = [
                b.id
                for b in books
                if owned.get(b.id) == user_id
                and fits_title_and_authors(described, b.title, b.author)
            ]
            if len(fits) == 1:  # two books fit: which one the device reads is not known
                return fits, MatchKind.TITLE
        return [], MatchKind.DOCUMENT

    def _own(self, user_id: str, book_ids: list[str]) -> list[str]:
        unique = sorted(set(book_ids))
        owners = self._owners.owners(ResourceKind.BOOK, unique) if unique else {}
        return [b for b in unique if owners.get(b) == user_id]

    def pull(self, user_id: str, document: str) -> PushedProgress | None:
        if not _text(document, MAX_DOCUMENT_CHARS) or ":" in document:
            raise SyncError("Field 'document' not provided.", code=SyncErrorCode.DOCUMENT_MISSING)
        return self._store.progress(user_id, document)

    def book_added(self, user_id: str, book: Book, path: Path) -> None:
        """Record how KOReader names the new book's file, and apply a push that waited for it."""
        try:
            ids, fragments = self._identify(path, book.format)
        except OSError:
            return  # the file went away after its import: it syncs by nothing, harmlessly
        self._store.save_documents(book.id, ids, fragments)
        waiting = [
            (self._store.progress(user_id, d), MatchKind.DOCUMENT)
            for d in (ids.partial_md5, ids.filename_md5)
        ]
        if ids.structure_md5:
            structure = self._store.progress_for_structure(user_id, ids.structure_md5)
            waiting.append((structure, MatchKind.STRUCTURE))
        found = [(p, m) for p, m in waiting if p is not None]
        if found:
            latest, match = max(found, key=lambda found: found[0].pushed_at)
            self._apply(book.id, latest, match)

    def _apply(
        self, book_id: str, pushed: PushedProgress, match: MatchKind = MatchKind.DOCUMENT
    ) -> None:
        try:
            book = self._books.get(book_id)
        except BookError:
            return  # removed meanwhile
        fragments = self._store.fragments_of(book_id)
        position = synced_position(book, pushed, fragments, self._books, match=match)
        if position is None:
            return
        current, new = book.position.char_offset, position.char_offset
        if not self._moves_back and current is not None and new is not None and new < current:
            return
        self._books.set_position(book_id, position)

    def _validated(self, body: Any) -> PushedProgress:
        if not isinstance(body, Mapping):
            raise SyncError("Invalid request", code=SyncErrorCode.INVALID_INPUT)
        document = body.get("document")
        if not _text(document, MAX_DOCUMENT_CHARS) or ":" in document:
            raise SyncError("Field 'document' not provided.", code=SyncErrorCode.DOCUMENT_MISSING)
        percentage = _fraction(body.get("percentage"))
        progress, device = body.get("progress"), body.get("device")
        device_id = body.get("device_id") or ""
        if (
            percentage is None
            or not _text(progress, MAX_PROGRESS_CHARS)
            or not _text(device, MAX_DEVICE_CHARS)
            or not (device_id == "" or _text(device_id, MAX_DEVICE_CHARS))
        ):
            raise SyncError("Invalid request", code=SyncErrorCode.INVALID_INPUT)
        return PushedProgress(
            document, progress, percentage, device, device_id, self._clock(), described(body)
        )


_DIGEST = re.compile(r"^[0-9a-f]{32}$")


def described(body: Mapping[str, Any]) -> PushedDocument:
    """What a push says of its file: its ``metadata`` (``filename``, ``title``, ``authors``: a
    string, newline-joined when several, or a list) and ``identifiers`` (``content``,
    ``structure``, ``filename``: MD5 digests). Anything malformed is left out, never refused:
    the push itself is valid without them."""
    metadata = body.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    ids = body.get("identifiers")
    ids = ids if isinstance(ids, Mapping) else {}

    def text(value: Any, bound: int) -> str:
        return " ".join(value.split()) if isinstance(value, str) and len(value) <= bound else ""

    def digest(value: Any) -> str:
        found = value.strip().lower() if isinstance(value, str) else ""
        return found if _DIGEST.match(found) else ""

    authors = metadata.get("authors")
    names = authors.split("\n") if isinstance(authors, str) else authors
    names = names if isinstance(names, list) else []
    return PushedDocument(
        filename=text(metadata.get("filename"), 255),
        title=text(metadata.get("title"), 500),
        authors=tuple(a for a in (text(n, 200) for n in names[:20]) if a),
        content_md5=digest(ids.get("content")),
        structure_md5=digest(ids.get("structure")),
        filename_md5=digest(ids.get("filename")),
    )


def _text(value: Any, bound: int) -> TypeGuard[str]:
    return isinstance(value, str) and len(value.strip()) > 0 and len(value) <= bound


def _fraction(value: Any) -> float | None:
    """KOReader's percentage (0-1; a number, or a numeric string as its reference server
    accepts), else ``None``."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and 0 <= number <= 1 else None
