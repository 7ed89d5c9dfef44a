"""folio as an MCP server: the reader's books as read-only tools for desktop assistants and agents.

Tools: ``list_books``, then every book tool of folio's agent (``search_book``, ``read_passage``,
``list_chapters``, and any reader tool registered later) with one more argument, ``book`` (its id,
an id prefix or a title). They run through the agent's own tool registry, so they are bounded by the
reader's position exactly as in a chat: the position is held by the server (the book's stored
position, set with ``folio position`` or the API), never a tool argument. A failure (no such book,
a page past the position, bad arguments) is an MCP tool error (``isError``) with a clear message.

Transports: ``folio mcp`` over stdio (the local user's library), and the same server mounted in
``folio serve`` at ``/mcp/`` over streamable HTTP, behind the API's bearer tokens (each user sees
only their books).
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Callable, Mapping, MutableMapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server

from folio.domain.errors import FolioError

if TYPE_CHECKING:
    from folio.bootstrap import Container, UserScope

INSTRUCTIONS = (
    "folio: the reader's books. Every tool answers only from the part of a book the reader has "
    "read (their reading position, held by folio); nothing past it can be returned. Use "
    "list_books first, then search_book with self-contained queries (names, not pronouns), and "
    "cite chapter and page."
)
LIST_BOOKS = "list_books"
READ_ONLY = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
MAX_BOOK_REFERENCE = 200
BOOK_ARGUMENT = {
    "type": "string",
    "maxLength": MAX_BOOK_REFERENCE,
    "description": "The book: its id (from list_books), an id prefix, or words of its title.",
}

# The user an HTTP request acts as (set by the API's auth in front of the mounted server); None:
# the local user (stdio, or the API without users).
CURRENT_USER: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "folio_mcp_user", default=None
)


def build_server(container: Container, *, version: str = "") -> Server[Any]:
    """The MCP server on ``container``; each call acts as ``CURRENT_USER``."""

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list(container))

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        user = CURRENT_USER.get()
        arguments = dict(params.arguments or {})
        return await anyio.to_thread.run_sync(
            lambda: call(container.for_user(user), container, params.name, arguments)
        )

    return Server(
        "folio",
        version=version,
        title="folio: your books, without spoilers",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def tool_list(container: Container) -> list[types.Tool]:
    tools = [
        types.Tool(
            name=LIST_BOOKS,
            title="List books",
            description="The reader's books: id, title, author and how far the reader has read.",
            input_schema={"type": "object", "properties": {}, "additionalProperties": False},
            annotations=READ_ONLY,
        )
    ]
    for definition in container.tools.definitions():
        schema = dict(definition.parameters)
        properties = {"book": BOOK_ARGUMENT, **dict(schema.get("properties", {}))}
        required = ["book", *schema.get("required", [])]
        tools.append(
            types.Tool(
                name=definition.name,
                description=definition.description
                + " Bounded by the reader's position in that book.",
                input_schema={**schema, "properties": properties, "required": required},
                annotations=READ_ONLY,
            )
        )
    return tools


def call(
    scope: UserScope, container: Container, name: str, arguments: dict[str, Any]
) -> types.CallToolResult:
    """Run tool ``name`` for the user of ``scope`` (blocking: storage and search)."""
    try:
        if name == LIST_BOOKS:
            return _ok({"books": [_book_dict(b) for b in scope.library.list_books()]})
        if container.tools.get(name) is None:
            known = ", ".join([LIST_BOOKS, *container.tools.names])
            return _error(f"Unknown tool {name!r}; the tools are: {known}")
        reference = arguments.pop("book", None)
        if not isinstance(reference, str) or not reference.strip():
            return _error("Give the book (its id from list_books, or words of its title)")
        if len(reference) > MAX_BOOK_REFERENCE:
            return _error(f"A book reference has at most {MAX_BOOK_REFERENCE} characters")
        book = scope.library.resolve(reference)
        # as a model's chat turn has them: recaps, the shared caches, searches bounded by the
        # window, passages cut to what answers
        result = scope.reader_tool(name, scope.library.window(book), arguments, for_model=True)
    except FolioError as e:
        return _error(e.message)
    envelope = result.envelope()
    if not result.success:
        return _error(str(envelope.get("error") or "The tool failed"))
    data = envelope["data"]
    return _ok({"book": book.id, **data} if isinstance(data, Mapping) else {"result": data})


def _book_dict(book: Any) -> dict[str, Any]:
    return {
        "id": book.id,
        "name": book.name,
        "title": book.title,
        "author": book.author,
        "format": str(book.format),
        "position": book.describe_position(now=datetime.now(UTC)),
    }


def _ok(data: dict[str, Any]) -> types.CallToolResult:
    text = json.dumps(data, ensure_ascii=False, default=str)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=data
    )


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=" ".join(message.split()))], is_error=True
    )


async def run_stdio(container: Container, *, version: str = "") -> None:
    """Serve the local user's library over stdin/stdout until the client closes them."""
    from mcp.server.stdio import stdio_server

    server = build_server(container, version=version)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


class Authenticated:
    """ASGI wrapper putting the API's bearer-token auth in front of the mounted MCP server: 401
    (the API's error body) without a valid token once users exist; the request's user otherwise
    (``CURRENT_USER``)."""

    def __init__(self, inner: Callable[..., Any], container: Container) -> None:
        self._inner = inner
        self._container = container

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self._inner(scope, receive, send)
            return
        header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        try:
            user = await anyio.to_thread.run_sync(self._container.users.authenticate_header, header)
        except FolioError as e:
            body = json.dumps({"error": {"code": str(e.code), "message": e.message}}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b"Bearer"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        reset = CURRENT_USER.set(user)
        try:
            await self._inner(scope, receive, send)
        finally:
            CURRENT_USER.reset(reset)


def http_app(container: Container, *, version: str = "") -> tuple[Authenticated, Any]:
    """The MCP server as an ASGI app to mount in ``folio serve`` (streamable HTTP, stateless, JSON
    responses), and the session manager whose ``run()`` the host app's lifespan must enter.

    Requests must name a host the server answers to, and a browser's origin one of them
    (DNS-rebinding protection, with or without users; the API's guard checks the same in front)."""
    from mcp.server.streamable_http_manager import (
        StreamableHTTPASGIApp,
        StreamableHTTPSessionManager,
    )
    from mcp.server.transport_security import TransportSecuritySettings

    names = [f"[{h}]" if ":" in h else h for h in container.settings.served_hosts]
    ports = ("", ":*")
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*names, *(f"{n}:*" for n in names)],
        allowed_origins=[
            f"{scheme}://{n}{port}" for scheme in ("http", "https") for n in names for port in ports
        ],
    )
    manager = StreamableHTTPSessionManager(
        app=build_server(container, version=version),
        stateless=True,
        json_response=True,
        security_settings=security,
    )
    return Authenticated(StreamableHTTPASGIApp(manager), container), manager
