"""The MCP server (``folio mcp`` over stdio, and mounted in ``folio serve`` at ``/mcp/``)."""
