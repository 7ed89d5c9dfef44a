"""One chat turn for a client over HTTP, streamed or not: the one service every streaming surface
(``/api``'s SSE, ``/v1``'s chat.completion chunks, the web page through ``/api``) runs its turns
through. Routes only map its items to their frames.

``TurnStream`` owns:

- **the user's turn slot**: taken before the response starts (over the limit: 429, a status) and
  given back exactly once: by the turn when it ends, or by the response when it ends without
  having started the turn (a client gone before the first byte);
- **the turn off the event loop**: in a worker thread, in the request's context, so the request
  id names the turn's log lines;
- **cancellation**: a client that goes away (the response is cancelled or ends) makes the turn's
  next event raise ``TurnCancelled`` in the worker, which unwinds without storing;
- **flush before commit**: ``still_wanted`` (given to the chat use case, asked before the turn
  opens its storing unit of work) waits, holding no lock, until every item sent so far has been
  handed to the client's connection, then says whether the client is still there; so a client
  gone before the answer is committed gets nothing stored. After each item the event loop runs
  once: a full buffer is read without waiting, and a write the socket's buffers take does not
  wait either, so without that pause a fast answer could be sent whole, and stored, before the
  loop hears that the client has gone.

``items`` yields the turn's ``ChatEvent``s, then exactly one ``TurnResult`` or ``TurnFailed``;
a cancelled turn ends with neither.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import math
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectSendStream
from fastapi import Depends
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from starlette.requests import ClientDisconnect
from starlette.types import Receive, Scope, Send

from folio.app.cancellation import TurnCancelled
from folio.app.chat import ChatEvent, TurnResult
from folio.domain.errors import FolioError
from folio.entrypoints.api.deps import TurnSlots, TurnSlotsDep, UserDep

log = logging.getLogger("folio.api")

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}

# A prepared turn: run it, sending its events to the sink (None: a JSON turn, no events).
Runner = Callable[[Callable[[ChatEvent], None] | None], TurnResult]


@dataclass(frozen=True, slots=True)
class TurnFailed:
    """The turn failed: ``error`` is the domain error to show, ``None`` an unexpected one (logged
    with its traceback; the client gets a generic internal error)."""

    error: FolioError | None


TurnItem = ChatEvent | TurnResult | TurnFailed
Frames = Callable[[AsyncIterator[TurnItem]], AsyncIterator[bytes]]


class _Flush:
    """Sent by the worker before the turn stores: every item before it has been sent."""


class _Cancelled:
    """Sent by the worker whose turn was cancelled: the stream ends without a last item."""


_FLUSH = _Flush()
_CANCELLED = _Cancelled()


class TurnStream:
    """One turn of one user for one request (see the module docstring)."""

    POLL_S = 0.05
    FLUSH_TIMEOUT_S = 15.0

    def __init__(self, slots: TurnSlots, user_id: str) -> None:
        self._slots = slots
        self._user_id = user_id
        self._cancelled = threading.Event()
        self._flushed = threading.Event()
        self._lock = threading.Lock()
        self._held = False
        self._started = False  # the worker runs (or ran) the turn
        self._closed = False  # the response has ended: no turn starts any more
        self._emit: Callable[[object], None] | None = None

    # --- the chat use case's questions ------------------------------------------------------------
    def still_wanted(self) -> bool:
        """Asked before the turn stores (may wait): every item sent so far has reached the
        client's connection (at most ``FLUSH_TIMEOUT_S``) and the client is still there."""
        if self._cancelled.is_set():
            return False
        emit = self._emit
        if emit is None:
            return True  # a JSON turn commits as it is
        self._flushed.clear()
        emit(_FLUSH)
        waited = 0.0
        while not self._flushed.wait(self.POLL_S):
            waited += self.POLL_S
            if self._cancelled.is_set() or waited >= self.FLUSH_TIMEOUT_S:
                return False  # gone, or not reading for so long that it counts as gone
        return not self._cancelled.is_set()

    def still_there(self) -> bool:
        """Asked at the commit (never waits): the client has not gone."""
        return not self._cancelled.is_set()

    # --- the two ways to answer -------------------------------------------------------------------
    async def result(self, run: Runner) -> TurnResult:
        """A JSON turn: run in a worker thread while it holds the user's slot."""
        self._acquire()
        try:
            return await run_in_threadpool(run, None)
        finally:
            self._release()

    def response(self, run: Runner, frames: Frames) -> StreamingResponse:
        """A streamed turn: the user's slot now (429 before the response starts), the turn when
        the response starts, its items mapped by ``frames`` to the bytes sent."""
        self._acquire()
        return _TurnResponse(
            frames(self._items(run)), self, media_type="text/event-stream", headers=SSE_HEADERS
        )

    # --- internals --------------------------------------------------------------------------------
    def _acquire(self) -> None:
        self._slots.acquire(self._user_id)
        self._held = True

    def _release(self) -> None:
        with self._lock:
            if not self._held:
                return
            self._held = False
        self._slots.release(self._user_id)

    def _ended(self) -> None:
        """The response has ended, whichever way: the turn is no longer wanted, and a turn that
        never started gives the slot back here."""
        self._cancelled.set()
        with self._lock:
            self._closed = True
            started = self._started
        if not started:
            self._release()

    async def _items(self, run: Runner) -> AsyncIterator[TurnItem]:
        loop = asyncio.get_running_loop()
        send, receive = anyio.create_memory_object_stream[object](max_buffer_size=math.inf)

        def emit(item: object) -> None:
            try:
                loop.call_soon_threadsafe(_put, send, item)
            except RuntimeError:  # the event loop is gone (the server stopped)
                self._cancelled.set()

        with self._lock:
            if self._closed:
                return
            self._started = True
            self._emit = emit
        context = contextvars.copy_context()  # the request's: its id names the turn's logs
        worker = loop.run_in_executor(None, context.run, self._work, run, emit)
        try:
            with receive:
                while True:
                    item = await receive.receive()
                    if item is _FLUSH:  # every earlier item has been sent
                        self._flushed.set()
                        continue
                    if item is _CANCELLED:
                        return
                    assert isinstance(item, TurnResult | TurnFailed | ChatEvent)
                    yield item
                    if isinstance(item, TurnResult | TurnFailed):
                        return
                    await anyio.lowlevel.checkpoint()  # hear a client that has gone
        finally:
            self._cancelled.set()  # a client gone mid-stream lands here (the task is cancelled)
            del worker

    def _work(self, run: Runner, emit: Callable[[object], None]) -> None:
        def on_event(event: ChatEvent) -> None:
            if self._cancelled.is_set():
                raise TurnCancelled
            emit(event)

        last: object
        try:
            last = run(on_event)
        except TurnCancelled:
            last = _CANCELLED
        except FolioError as e:
            last = TurnFailed(e)
        except Exception:
            log.exception("Unexpected error in a streamed turn")
            last = TurnFailed(None)
        finally:
            self._release()  # before the last item: the client may ask again as soon as it has it
        emit(last)


def _put(send: MemoryObjectSendStream[object], item: object) -> None:
    # once the stream has ended nobody reads the turn's items any more
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        send.send_nowait(item)


class _TurnResponse(StreamingResponse):
    """A streamed response that tells its turn when it has ended, however it ended (sent whole,
    the client gone mid-stream, or before the first byte)."""

    def __init__(self, content: AsyncIterator[bytes], turn: TurnStream, **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self._turn = turn

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except ClientDisconnect:  # gone mid-stream: nothing more to send, and no error of ours
            # (the handler that answers 499 to a client gone during its body must not see it:
            # the response has started)
            log.info("Client left during a streamed turn")
        finally:
            self._turn._ended()


def get_turn_stream(user: UserDep, slots: TurnSlotsDep) -> TurnStream:
    return TurnStream(slots, user.user_id)


# The request's turn: ``turn: TurnStreamDep`` in a route.
TurnStreamDep = Annotated[TurnStream, Depends(get_turn_stream)]
