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
import functools
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
        self._lock = asyncio.Lock()
        self._stop = asyncio.Event()
        self._runner: asyncio.Task[None] | None = None

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        app = self._app or await self._start()
        await app(scope, receive, send)

    async def _start(self) -> Asgi:
        async with self._lock:
            if self._app is not None:
                return self._app
            from folio.entrypoints.mcp.server import http_app

            build = functools.partial(http_app, self._container, version=self._version)
            app, manager = await anyio.to_thread.run_sync(build)
            started: asyncio.Future[None] = asyncio.get_running_loop().create_future()

            async def serve() -> None:
                try:
                    async with manager.run():
                        started.set_result(None)
                        await self._stop.wait()
                except Exception as e:
                    if started.done():
                        raise
                    started.set_exception(e)  # to the request waiting for it

            self._runner = asyncio.create_task(serve(), name="mcp-session-manager")
            try:
                await started
            except Exception:
                self._runner = None  # the next request tries again
                raise
            self._app = app
            return app

    async def close(self) -> None:
        """Stop the session manager if a request started it."""
        if self._runner is None:
            return
        self._stop.set()
        runner, self._runner = self._runner, None
        await runner
