"""Reading progress synced from e-readers (KOReader's "kosync" protocol) as folio values.

A device pushes ``progress`` (an EPUB xpointer such as ``/body/DocFragment[12]/body/div/p[3]/
text().45``, or a PDF page number) and ``percentage`` (0-1) for a ``document`` id: KOReader's
partial MD5 of the file, or the MD5 of its file name. folio keeps the last push per user and
document (also for a document it does not hold yet) and maps it onto a book's own text.

Invariant: a mapped offset lies in the paragraph the device names (its text node, else its
element, else the nearest ancestor folio knows); when the pointer cannot be resolved the percentage
decides, and when neither is usable nothing moves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import ClassVar

from folio.domain.errors import FolioError

MAX_DOCUMENT_CHARS = 64
MAX_PROGRESS_CHARS = 2048
MAX_DEVICE_CHARS = 100
MAX_KEY_CHARS = 128
SOURCE_KOREADER = "KOReader"

_XPOINTER = re.compile(
    r"^/body(?:\[1\])?/DocFragment(?:\[(?P<fragment>\d{1,6})\])?"
    r"(?P<path>(?:/[A-Za-z][\w.:-]{0,63}(?:\[\d{1,6}\])?){0,200}?)"
    r"(?P<text>/text\(\)(?:\[\d{1,6}\])?)?(?:\.(?P<offset>\d{1,9}))?$"
)


_FIRST_INDEX = re.compile(r"\[1\](?=/|$)")


class SyncErrorCode(StrEnum):
    UNAUTHORIZED = "UNAUTHORIZED"
    INVALID_INPUT = "INVALID_INPUT"
    DOCUMENT_MISSING = "DOCUMENT_MISSING"
    USER_EXISTS = "USER_EXISTS"
    REGISTRATION_DISABLED = "REGISTRATION_DISABLED"
    # too many failed logins: ``details["retry_after"]`` says in how many seconds to try again
    RATE_LIMITED = "RATE_LIMITED"


class SyncError(FolioError):
    """A sync request folio refuses: bad credentials, a malformed push, a registration."""

    codes: ClassVar[type[StrEnum]] = SyncErrorCode
    code: SyncErrorCode = SyncErrorCode.INVALID_INPUT


@dataclass(frozen=True, slots=True)
class DocumentIds:
    """How KOReader names one file: the partial MD5 of its bytes (its default "binary" mode) and
    the MD5 of its file name (its "filename" mode); for an EPUB also its structure digest (the
    MD5 of its package's unique identifier and spine hrefs: the same for a copy whose metadata
    Calibre rewrote, ``""`` when it has none)."""

    partial_md5: str
    filename_md5: str
    structure_md5: str = ""


class MatchKind(StrEnum):
    """How a push found its book: the file's own digest (either KOReader mode), the EPUB's
    structure digest (a re-written copy of the same EPUB: its xpointers hold), or the title and
    authors the push names (a weak match, another edition perhaps: only its percentage is used,
    never its xpointer or page)."""

    DOCUMENT = "document"
    STRUCTURE = "structure"
    TITLE = "title"

    @property
    def weak(self) -> bool:
        return self is MatchKind.TITLE


@dataclass(frozen=True, slots=True)
class PushedDocument:
    """What a push may say about its file besides its digest: KOReader's opt-in ``metadata``
    (``filename``, ``title``, ``authors``: one string, newline-joined when several) and
    ``identifiers`` (``content``, ``structure``, ``filename`` digests). Empty when not sent."""

    filename: str = ""
    title: str = ""
    authors: tuple[str, ...] = ()
    content_md5: str = ""
    structure_md5: str = ""
    filename_md5: str = ""

    @property
    def digests(self) -> tuple[str, ...]:
        """The exact-file digests besides the push's ``document``."""
        return tuple(d for d in (self.content_md5, self.filename_md5) if d)


@dataclass(frozen=True, slots=True)
class Fragment:
    """One of an EPUB's spine documents as KOReader numbers them (``DocFragment[index]``):
    where its text lies in folio's text, and where each element's text starts, as the count
    of non-blank characters of the document before it (``anchors``, keyed by KOReader's path of
    the element or text node: ``/body/div/p[3]``, ``/body/div/p[3]/text()[2]``; a text node
    that starts with blanks also has a point anchor, ``/body/p/text()[2].1``: its first non-blank
    character is its second). A DocFragment folio holds no text of is an empty range.
    ``density``: the share of the document's characters, as crengine keeps them, that are not
    blank (a text offset becomes a count where folio's text is not at hand)."""

    index: int
    char_start: int
    char_end: int
    anchors: dict[str, int]
    density: float = 1.0


@dataclass(frozen=True, slots=True)
class XPointer:
    fragment: int
    path: str  # "/body/div/p[3]" or, with the text node, "/body/div/p[3]/text()[2]"
    text_offset: int


@dataclass(frozen=True, slots=True)
class PushedProgress:
    """The last position one device pushed for a document."""

    document: str
    progress: str
    percentage: float
    device: str
    device_id: str
    pushed_at: datetime
    described: PushedDocument = PushedDocument()


def parse_xpointer(progress: str) -> XPointer | None:
    """KOReader's xpointer as its parts; ``None`` when ``progress`` is not one. Both forms
    crengine writes are read: the classic one, which numbers an element only among siblings of
    its name (``/body/DocFragment[16]/body/section/p[2]/text().69``), and the one of its DOM
    20260812 (KOReader nightly since 2026-08-14), which numbers every element and text node
    (``/body[1]/DocFragment[16]/body[1]/section[1]/p[1]/text()[1].0``): the path is kept in the
    classic form (``canonical_path``)."""
    match = _XPOINTER.match(progress.strip())
    if match is None:
        return None
    path = (match["path"] or "/body") + (match["text"] or "")
    return XPointer(int(match["fragment"] or 1), canonical_path(path), int(match["offset"] or 0))


def canonical_path(path: str) -> str:
    """A crengine path without its ``[1]`` indexes: the first of several siblings of a name and
    the only one are then written alike, as no parent holds both (``p[1]`` and ``p``)."""
    return _FIRST_INDEX.sub("", path)


def pdf_page(progress: str) -> int | None:
    """The page number KOReader pushes for a paged document (a PDF), or ``None``."""
    text = progress.strip()
    return int(text) if text.isdigit() and 0 < int(text) < 1_000_000 else None


def nonblank_before(fragment: Fragment, pointer: XPointer) -> int:
    """How many non-blank characters of the fragment lie before the pointer: its text node's or
    element's anchor (else its nearest ancestor's: a reader may wrap elements folio does not see)
    plus the offset inside the text node."""
    anchors = {canonical_path(path): count for path, count in fragment.anchors.items()}
    target = canonical_path(pointer.path)
    current = target
    while current:
        if current in anchors:
            inside = int(pointer.text_offset * fragment.density) if current == target else 0
            return anchors[current] + inside
        current = current.rsplit("/", 1)[0]
    return 0


def offset_after_nonblank(text: str, count: int) -> int:
    """The offset in ``text`` just after its ``count``-th non-blank character (its length when it
    has fewer)."""
    if count <= 0:
        return 0
    seen = 0
    for i, char in enumerate(text):
        if not char.isspace():
            seen += 1
            if seen == count:
                return i + 1
    return len(text)


def device_label(device: str, match: MatchKind = MatchKind.DOCUMENT) -> str:
    """``KOReader on Kobo``, and how a push was paired with a book when not by its file:
    ``KOReader on Kobo (matched by title and authors)``."""
    label = f"{SOURCE_KOREADER} on {device}" if device else SOURCE_KOREADER
    if match is MatchKind.STRUCTURE:
        return f"{label} (matched by the EPUB's identifier and spine)"
    if match is MatchKind.TITLE:
        return f"{label} (matched by title and authors)"
    return label


_WORD = re.compile(r"\w+")


def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.casefold()))


def fits_title_and_authors(pushed: PushedDocument, title: str, author: str | None) -> bool:
    """Does a book titled ``title`` by ``author`` fit the push's metadata? The same words of the
    title (case, punctuation and spacing aside), and every author the push names shares a name
    with the book's author ("Shelley, Mary" fits "Mary Wollstonecraft Shelley"). A push without
    a title or authors, or a book without an author, fits nothing: a title alone is too weak."""
    if not pushed.title or not pushed.authors or not author:
        return False
    if _words(pushed.title) != _words(title) or not _words(title):
        return False
    names = {w for w in _words(author) if len(w) > 1}
    return all(names & {w for w in _words(a) if len(w) > 1} for a in pushed.authors)


def time_ago(then: datetime, now: datetime) -> str:
    """``just now``, ``5 min ago``, ``2 h ago``, ``3 days ago``."""
    seconds = max(0, int((now - then).total_seconds()))
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    if seconds < 86400:
        return f"{seconds // 3600} h ago"
    days = seconds // 86400
    return f"{days} day{'s' if days != 1 else ''} ago"
