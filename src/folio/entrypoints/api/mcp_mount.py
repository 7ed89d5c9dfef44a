"""The MCP server mounted at ``/mcp``, built when the first MCP request comes.

The MCP SDK takes about half a second of CPU to import (every protocol version's types, its client
and server), more than the rest of the HTTP API: a server that no MCP client talks to should not
pay for it at every start. The first request imports it (in a worker thread, so other requests go
on), starts the session manager in a task of its own, and every request is then handed to it.

Invariants: the manager is started once, by whichever request comes first (the others wait for
it); it runs in one long-lived task, entered and left there (its task group must be); ``close()``
(the app's lifespan, at shutdown) stops it; a failure to start reaches the waiting requests as the
exception and the next request tries again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, MutableMapping
from typing import Any

import anyio

from folio.bootstrap import Container

Asgi = Callable[..., Any]


class McpOnFirstRequest:
    def __init__(self, container: Container, *, version: str) -> None:
        self._container = container
        self._version = version
        self._app: Asgi | None = None
        self._starting: asyncio.Task[Asgi] | None = None
        self._runner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        app = self._app or await self._started()
        await app(scope, receive, send)

    async def _started(self) -> Asgi:
        """The app, once the start (one task, whichever request came first) is done. A request
        that gives up waiting (a client gone) does not cancel the start for the others."""
        if self._starting is None:
            self._starting = asyncio.create_task(self._start(), name="mcp-start")
        starting = self._starting
        try:
            return await asyncio.shield(starting)
        except Exception:
            if self._starting is starting:
                self._starting = None  # it failed: the next request tries again
            raise

    def _build(self) -> tuple[Asgi, Any]:
        from folio.entrypoints.mcp.server import http_app

        return http_app(self._container, version=self._version)

    async def _start(self) -> Asgi:
        app, manager = await anyio.to_thread.run_sync(self._build)  # the import, off the loop
        started: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def serve() -> None:
            try:
                async with manager.run():
                    started.set_result(None)
                    await self._stop.wait()
            except Exception as e:
                if started.done():
                    raise
                started.set_exception(e)  # to the requests waiting for it

        self._runner = asyncio.create_task(serve(), name="mcp-session-manager")
        try:
            await started
        except Exception:
            self._runner = None
            raise
        self._app = app
        return app

    async def close(self) -> None:
        """Stop the session manager if a request started it (or is starting it)."""
        self._stop.set()
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
            await asyncio.gather(self._starting, return_exceptions=True)
        if self._runner is not None:
            runner, self._runner = self._runner, None
            if self._app is None:
                runner.cancel()  # still entering the manager: nothing to drain
            await asyncio.gather(runner, return_exceptions=True)
