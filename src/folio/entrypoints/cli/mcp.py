"""``folio mcp``: the MCP server over stdio, for desktop assistants (Claude Desktop and others)."""

from __future__ import annotations

from typing import Any

import click

from folio.entrypoints.cli.errors import handle_errors


@click.command("mcp")
@click.pass_obj
@handle_errors
def mcp_cmd(lazy: Any) -> None:
    """Serve your books to an MCP client over stdin/stdout (read-only, never past your position).

    Register it in a desktop assistant's config, e.g. Claude Desktop's
    claude_desktop_config.json:

    \b
    {"mcpServers": {"folio": {"command": "folio", "args": ["mcp"]}}}

    Tools: list_books, search_book, read_passage, list_chapters (each takes the book).
    """
    from folio import __version__
    from folio.bootstrap import requires_extra

    with requires_extra("server", "folio mcp"):
        import anyio

        from folio.entrypoints.mcp.server import run_stdio

    container = lazy.get()
    container.database  # noqa: B018 - open and migrate before the client's first request
    anyio.run(lambda: run_stdio(container, version=__version__))
