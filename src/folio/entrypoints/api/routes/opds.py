"""An OPDS 1.2 catalogue of the reader's library at ``/opds``, for e-readers' catalogue browsers
(KOReader: Toolbar > Search > OPDS catalog > +, ``http://HOST:PORT/opds``): recently added, by
author, by series, all books, a search (OpenSearch), and each book's file exactly as folio
imported it, so that the device's digest of it is the one folio stored and progress sync finds
the book with no extra step.

Who is asking: HTTP Basic with the reader's sync login (the user name and the password set with
``folio users sync-password``; KOReader sends them on every request, downloads included), or
with a folio token as the password, or a bearer token. A server without users serves the local
reader, as every route does; otherwise a request without valid credentials is a 401 with
``WWW-Authenticate: Basic realm="folio"``. A user sees only their own books; another user's book
and its file are 404, as an unknown one.

Every route answers HEAD too (KOReader asks HEAD before a feed, for caching, and before a
download, for the file's name). Feeds carry no ``Last-Modified``: a device would keep a stale
list. ``/opds/v2/...`` serves the same catalogue as OPDS 2.0 JSON.
"""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from folio.app.catalogue import Catalogue, Listed, Page, added_at
from folio.app.sync import MAX_PASSWORD_CHARS, device_key
from folio.app.users import TOKEN_PREFIX
from folio.domain.book_files import media_type
from folio.domain.errors import FolioError
from folio.entrypoints.api.deps import ContainerDep
from folio.entrypoints.api.opds_atom import (
    ACQUISITION,
    ATOM_MEDIA_TYPE,
    NAVIGATION,
    SORT_NEW,
    Feed,
    Nav,
    opensearch_description,
)
from folio.entrypoints.api.routes.kosync import _checking_key

router = APIRouter(prefix="/opds", tags=["OPDS catalogue (e-readers)"])
CHALLENGE = {"WWW-Authenticate": 'Basic realm="folio", charset="UTF-8"'}
MAX_NAME_CHARS = 500
PageQuery = Annotated[int, Query(ge=1, le=100_000, description="1-based page")]
NameQuery = Annotated[str, Query(max_length=MAX_NAME_CHARS)]


def _unauthorized(message: str) -> HTTPException:
    return HTTPException(401, message, headers=CHALLENGE)


def _basic(value: str) -> tuple[str, str] | None:
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    username, colon, password = decoded.partition(":")
    return (username, password) if colon else None


async def _reader(request: Request, container: ContainerDep) -> str:
    """The id of the user the request's credentials name (see the module docstring)."""
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    try:
        if scheme.lower() == "basic":
            credentials = _basic(value)
            if credentials is None or len(credentials[1]) > MAX_PASSWORD_CHARS:
                raise _unauthorized("Malformed Basic credentials")
            return await _basic_user(container, *credentials)
        token = value.strip() if scheme.lower() == "bearer" else None
        return await run_in_threadpool(container.users.authenticate, token)
    except FolioError as e:
        raise _unauthorized(
            "Sign in with your sync login (folio users sync-password NAME) or a folio token"
        ) from e


async def _basic_user(container: ContainerDep, username: str, password: str) -> str:
    """A folio token given as the password (its user's name as the user name), else the sync
    login, checked as progress sync checks it (on the key-check threads)."""
    if password.startswith(TOKEN_PREFIX):
        users = container.users
        try:
            user_id = await run_in_threadpool(users.authenticate, password)
        except FolioError:
            user_id = None
        if user_id is not None:
            names = {u.id: u.name for u in await run_in_threadpool(users.list)}
            if names.get(user_id, "").casefold() == username.strip().casefold():
                return user_id
    sync = container.progress_sync
    user: str = await _checking_key(sync.authenticate, username, device_key(password))
    return user


async def _catalogue(
    container: ContainerDep, user_id: Annotated[str, Depends(_reader)]
) -> Catalogue:
    scope = container.for_user(user_id)
    return Catalogue(scope.library, container.book_files)


CatalogueDep = Annotated[Catalogue, Depends(_catalogue)]


def _atom(feed: Feed) -> Response:
    return Response(feed.to_bytes(), media_type=ATOM_MEDIA_TYPE)


def _now() -> datetime:
    return datetime.now(UTC)


ROOT_ENTRIES = (
    Nav(
        "recent", "Recently added", "Your books, the last added first", "/opds/recent", rel=SORT_NEW
    ),
    Nav("authors", "By author", "Your books by author", "/opds/authors", kind=NAVIGATION),
    Nav(
        "series",
        "By series",
        "Your books by series, in reading order",
        "/opds/series",
        kind=NAVIGATION,
    ),
    Nav("all", "All books", "Your books by title", "/opds/all"),
)


@router.api_route("", methods=["GET", "HEAD"], response_class=Response)
def root(catalogue: CatalogueDep) -> Response:
    """The root navigation feed: recently added, by author, by series, all books."""
    updated = max((added_at(x.book) for x in catalogue.recent(1).items), default=_now())
    feed = Feed("root", "folio", "/opds", NAVIGATION, updated)
    feed.navigation(ROOT_ENTRIES, updated)
    return _atom(feed)


def _at(href: str, number: int) -> str:
    """``href`` (which may hold a query) at page ``number``."""
    return href if number == 1 else f"{href}{'&' if '?' in href else '?'}page={number}"


def _books_feed(
    key: str, title: str, href: str, page: Page[Listed], *, up: str = "/opds"
) -> Response:
    updated = max((added_at(x.book) for x in page.items), default=_now())
    feed = Feed(key, title, _at(href, page.number), ACQUISITION, updated)
    feed.link("up", up, NAVIGATION)
    feed.pages(page, href, ACQUISITION)
    feed.books(page.items)
    return _atom(feed)


@router.api_route("/recent", methods=["GET", "HEAD"], response_class=Response)
def recent(catalogue: CatalogueDep, page: PageQuery = 1) -> Response:
    return _books_feed("recent", "Recently added", "/opds/recent", catalogue.recent(page))


@router.api_route("/all", methods=["GET", "HEAD"], response_class=Response)
def all_books(catalogue: CatalogueDep, page: PageQuery = 1) -> Response:
    return _books_feed("all", "All books", "/opds/all", catalogue.all(page))


@router.api_route("/authors", methods=["GET", "HEAD"], response_class=Response)
def authors(catalogue: CatalogueDep, page: PageQuery = 1) -> Response:
    groups = catalogue.authors(page)
    feed = Feed("authors", "By author", "/opds/authors", NAVIGATION, _now())
    feed.link("up", "/opds", NAVIGATION)
    feed.pages(groups, "/opds/authors", NAVIGATION)
    feed.groups(groups, "/opds/authors/books", "author", "Unknown author")
    return _atom(feed)


@router.api_route("/authors/books", methods=["GET", "HEAD"], response_class=Response)
def author_books(catalogue: CatalogueDep, name: NameQuery = "", page: PageQuery = 1) -> Response:
    href = f"/opds/authors/books?name={quote(name)}"
    title = name or "Unknown author"
    return _books_feed(
        "author:" + quote(name), title, href, catalogue.by_author(name, page), up="/opds/authors"
    )


@router.api_route("/series", methods=["GET", "HEAD"], response_class=Response)
def series(catalogue: CatalogueDep, page: PageQuery = 1) -> Response:
    groups = catalogue.series(page)
    feed = Feed("series", "By series", "/opds/series", NAVIGATION, _now())
    feed.link("up", "/opds", NAVIGATION)
    feed.pages(groups, "/opds/series", NAVIGATION)
    feed.groups(groups, "/opds/series/books", "series", "")
    return _atom(feed)


@router.api_route("/series/books", methods=["GET", "HEAD"], response_class=Response)
def series_books(catalogue: CatalogueDep, name: NameQuery, page: PageQuery = 1) -> Response:
    href = f"/opds/series/books?name={quote(name)}"
    return _books_feed(
        "series:" + quote(name), name, href, catalogue.in_series(name, page), up="/opds/series"
    )


@router.api_route("/search", methods=["GET", "HEAD"], response_class=Response)
def search(
    catalogue: CatalogueDep,
    q: Annotated[str, Query(max_length=MAX_NAME_CHARS)] = "",
    page: PageQuery = 1,
) -> Response:
    """The books whose title, author or series hold every word of ``q`` (else the library's
    closest titles)."""
    href = f"/opds/search?q={quote(q)}"
    return _books_feed("search:" + quote(q), f"Search: {q}", href, catalogue.search(q, page))


@router.api_route("/opensearch.xml", methods=["GET", "HEAD"], response_class=Response)
def opensearch(request: Request, _: CatalogueDep) -> Response:
    """The OpenSearch description of the search feed (its template is an absolute URL)."""
    template = str(request.base_url).rstrip("/") + "/opds/search?q={searchTerms}"
    return Response(
        opensearch_description(template), media_type="application/opensearchdescription+xml"
    )


@router.api_route(
    "/books/{book_id}/file.{extension}", methods=["GET", "HEAD"], response_class=Response
)
def download(book_id: str, extension: str, request: Request, catalogue: CatalogueDep) -> Response:
    """The book's file, byte for byte as imported (404: another user's book, an unknown one,
    or one imported before folio kept files). The name offered is the imported file's."""
    book, stored = catalogue.file(book_id)
    headers = {
        "Content-Length": str(stored.size),
        "Content-Disposition": _attachment(book.source_name),
    }
    kind = media_type(book.format)
    if request.method == "HEAD":
        return Response(status_code=200, media_type=kind, headers=headers)
    return StreamingResponse(stored.blocks, media_type=kind, headers=headers)


def _attachment(name: str) -> str:
    """RFC 6266: an ASCII ``filename`` (what KOReader reads) and the exact UTF-8 ``filename*``."""
    plain = "".join(c if c.isascii() and c.isprintable() and c not in '"\\;' else "_" for c in name)
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name)}"
