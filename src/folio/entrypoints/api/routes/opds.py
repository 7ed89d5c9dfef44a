"""An OPDS 1.2 catalogue of the reader's library at ``/opds``, for e-readers' catalogue browsers
(KOReader: Toolbar > Search > OPDS catalog > +, ``http://HOST:PORT/opds``): recently added, by
author, by series, all books, a search (OpenSearch), and each book's file exactly as folio
imported it, so that the device's digest of it is the one folio stored and progress sync finds
the book with no extra step.

Who is asking: HTTP Basic with the reader's sync login (the user name and the password set with
``folio users sync-password``; KOReader sends them on every request, downloads included), or
with a folio token as the password, or a bearer token. A server without users serves the local
reader, as every route does; otherwise a request without valid credentials is a 401 with
``WWW-Authenticate: Basic realm="folio"``, and a login over progress sync's failed-login limits
a 429 with ``Retry-After``. A user sees only their own books; another user's book and its file are
404, as an unknown one.

Every route answers HEAD too (KOReader asks HEAD before a feed, for caching, and before a
download, for the file's name). Feeds carry no ``Last-Modified``: a device would keep a stale
list. ``/opds/v2/...`` serves the same catalogue as OPDS 2.0 JSON.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from folio.app.catalogue import Catalogue, added_at
from folio.app.sync import MAX_PASSWORD_CHARS, device_key
from folio.app.users import TOKEN_PREFIX
from folio.domain.book_files import media_type
from folio.domain.errors import FolioError
from folio.domain.sync import SyncError, SyncErrorCode
from folio.entrypoints.api.deps import ContainerDep
from folio.entrypoints.api.opds_atom import (
    NAVIGATION,
    SORT_NEW,
    AtomCatalogue,
    opensearch_description,
)
from folio.entrypoints.api.opds_common import Listing, Nav
from folio.entrypoints.api.opds_json import JsonCatalogue
from folio.entrypoints.api.sync_login import client_address, sync_user, too_many_failures

# Not in /openapi.json: a catalogue describes itself (its feeds' links, its OpenSearch document)
# to OPDS clients, which read Atom, not folio's JSON API.
router = APIRouter(prefix="/opds", tags=["OPDS catalogue (e-readers)"], include_in_schema=False)
CHALLENGE = {"WWW-Authenticate": 'Basic realm="folio", charset="UTF-8"'}
MAX_NAME_CHARS = 500
PageQuery = Annotated[int, Query(ge=1, le=100_000, description="1-based page")]
NameQuery = Annotated[str, Query(max_length=MAX_NAME_CHARS)]
SearchQuery = Annotated[str, Query(max_length=MAX_NAME_CHARS)]


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
            return await _basic_user(container, *credentials, client_address(request))
        token = value.strip() if scheme.lower() == "bearer" else None
        return await run_in_threadpool(container.users.authenticate, token)
    except SyncError as e:
        if e.code is not SyncErrorCode.RATE_LIMITED:
            raise _unauthorized("Wrong sync login or password") from e
        raise too_many_failures(e) from e
    except FolioError as e:
        raise _unauthorized(
            "Sign in with your sync login (folio users sync-password NAME) or a folio token"
        ) from e


async def _basic_user(
    container: ContainerDep, username: str, password: str, address: str | None
) -> str:
    """A folio token given as the password (its user's name as the user name), else the sync
    login, checked as progress sync checks it: on the key-check threads, counted against the
    failed-login limits of the login and the client's ``address`` (``SyncError(RATE_LIMITED)``
    over them, before any key is checked)."""
    if password.startswith(TOKEN_PREFIX):
        user_id = await run_in_threadpool(container.users.named_token_user, username, password)
        if user_id is not None:
            return user_id
    return await sync_user(container, username, device_key(password), address)


async def _catalogue(
    container: ContainerDep, user_id: Annotated[str, Depends(_reader)]
) -> Catalogue:
    scope = container.for_user(user_id)
    return Catalogue(scope.library, container.book_files)


CatalogueDep = Annotated[Catalogue, Depends(_catalogue)]


Renderer = AtomCatalogue | JsonCatalogue


def _renderer(request: Request) -> Renderer:
    """OPDS 2.0 JSON under ``/opds/v2``, else OPDS 1.2 Atom."""
    return JsonCatalogue() if request.url.path.startswith("/opds/v2") else AtomCatalogue()


def _reply(renderer: Renderer, body: bytes) -> Response:
    return Response(body, media_type=renderer.media_type)


def _feed(*paths: str) -> Callable[[Callable[..., Response]], Callable[..., Response]]:
    """Serve a feed at ``/opds{path}`` (Atom) and ``/opds/v2{path}`` (JSON), GET and HEAD."""

    def register(route: Callable[..., Response]) -> Callable[..., Response]:
        for path in paths:
            for base in ("", "/v2"):
                router.api_route(base + path, methods=["GET", "HEAD"], response_class=Response)(
                    route
                )
        return route

    return register


ROOT_ENTRIES = (
    Nav("recent", "Recently added", "Your books, the last added first", "/recent", rel=SORT_NEW),
    Nav("authors", "By author", "Your books by author", "/authors", kind=NAVIGATION),
    Nav(
        "series", "By series", "Your books by series, in reading order", "/series", kind=NAVIGATION
    ),
    Nav("all", "All books", "Your books by title", "/all"),
)
AUTHORS = Listing("/authors/books", "author", "Unknown author")
SERIES = Listing("/series/books", "series", "")


@_feed("")
def root(request: Request, catalogue: CatalogueDep) -> Response:
    """The root navigation feed: recently added, by author, by series, all books."""
    now = datetime.now(UTC)
    updated = max((added_at(x.book) for x in catalogue.recent(1).items), default=now)
    renderer = _renderer(request)
    return _reply(renderer, renderer.root(ROOT_ENTRIES, updated))


@_feed("/recent")
def recent(request: Request, catalogue: CatalogueDep, page: PageQuery = 1) -> Response:
    renderer = _renderer(request)
    found = catalogue.recent(page)
    return _reply(renderer, renderer.books("recent", "Recently added", "/recent", found, ""))


@_feed("/all")
def all_books(request: Request, catalogue: CatalogueDep, page: PageQuery = 1) -> Response:
    renderer = _renderer(request)
    return _reply(renderer, renderer.books("all", "All books", "/all", catalogue.all(page), ""))


@_feed("/authors")
def authors(request: Request, catalogue: CatalogueDep, page: PageQuery = 1) -> Response:
    renderer = _renderer(request)
    found = catalogue.authors(page)
    return _reply(renderer, renderer.groups("authors", "By author", "/authors", found, AUTHORS))


@_feed("/series")
def series(request: Request, catalogue: CatalogueDep, page: PageQuery = 1) -> Response:
    renderer = _renderer(request)
    found = catalogue.series(page)
    return _reply(renderer, renderer.groups("series", "By series", "/series", found, SERIES))


@_feed(AUTHORS.path)
def author_books(
    request: Request, catalogue: CatalogueDep, name: NameQuery = "", page: PageQuery = 1
) -> Response:
    renderer = _renderer(request)
    path = f"{AUTHORS.path}?{urlencode({'name': name})}"
    title = name or AUTHORS.unnamed
    found = catalogue.by_author(name, page)
    return _reply(renderer, renderer.books(f"author:{quote(name)}", title, path, found, "/authors"))


@_feed(SERIES.path)
def series_books(
    request: Request, catalogue: CatalogueDep, name: NameQuery, page: PageQuery = 1
) -> Response:
    renderer = _renderer(request)
    path = f"{SERIES.path}?{urlencode({'name': name})}"
    found = catalogue.in_series(name, page)
    return _reply(renderer, renderer.books(f"series:{quote(name)}", name, path, found, "/series"))


@_feed("/search")
def search(
    request: Request,
    catalogue: CatalogueDep,
    q: SearchQuery = "",
    query: SearchQuery = "",
    page: PageQuery = 1,
) -> Response:
    """The books whose title, author or series hold every word of the search (``q``, or
    ``query`` as OPDS 2.0 names it), else the library's closest titles."""
    renderer = _renderer(request)
    words = q or query
    path = f"/search?{urlencode({'q': words})}"
    found = catalogue.search(words, page)
    return _reply(
        renderer, renderer.books(f"search:{quote(words)}", f"Search: {words}", path, found, "")
    )


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
