"""A chat turn run in a worker thread, its events streamed as Server-Sent Events.

Named events (PrivateGPT/Anthropic style): ``tool_call``, ``tool_result``, ``delta``, then exactly
one of ``done`` (the turn, as the JSON route returns it) or ``error`` (the one error body).

Invariants: the route checks everything that can fail before the answer (auth, unknown
conversation or book, bad input, limits) BEFORE the response starts, so those are statuses; once
the stream is open a failure is an ``error`` event. A client that goes away cancels the turn: the
next event the turn emits raises ``TurnCancelled`` in the worker, which unwinds without storing
and closes the model stream; a turn past its last event is refused at its commit.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from folio.app.cancellation import TurnCancelled
from folio.app.chat import AnswerDelta, ChatEvent, ToolCallFinished, ToolCallStarted, TurnResult
from folio.domain.errors import FolioError
from folio.entrypoints.api.errors import error_body, status_for
from folio.entrypoints.serialize import turn_result_dict

log = logging.getLogger("folio.api")

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def sse(event: str, data: Any) -> bytes:
    """One SSE frame: ``event: NAME`` and the JSON data on one line."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event}\ndata: {payload}\n\n".encode()


def _frame(event: ChatEvent) -> bytes:
    if isinstance(event, AnswerDelta):
        return sse("delta", {"text": event.text})
    if isinstance(event, ToolCallStarted):
        return sse("tool_call", {"name": event.name, "arguments": dict(event.arguments)})
    assert isinstance(event, ToolCallFinished)
    return sse(
        "tool_result", {"name": event.name, "success": event.success, "summary": event.summary}
    )


class TurnControl:
    """Links a turn's worker thread to its client. Before the turn opens its storing unit of
    work, ``still_wanted`` waits (holding no lock) until every frame sent so far has been handed
    to the client's connection (at most ``FLUSH_TIMEOUT_S``), then says whether the client is
    still there; ``still_there`` is the cheap check at the commit. So a turn whose client left
    before its last delta was delivered is not stored. A JSON turn commits as it is."""

    POLL_S = 0.05
    FLUSH_TIMEOUT_S = 15.0

    def __init__(self) -> None:
        self.cancelled = threading.Event()
        self._flushed = threading.Event()
        self._emit: Callable[[str, Any], None] | None = None

    def still_wanted(self) -> bool:
        if self.cancelled.is_set():
            return False
        if self._emit is None:
            return True
        self._flushed.clear()
        self._emit("flush", None)
        waited = 0.0
        while not self._flushed.wait(self.POLL_S):
            waited += self.POLL_S
            if self.cancelled.is_set() or waited >= self.FLUSH_TIMEOUT_S:
                return False  # gone, or not reading for so long that it counts as gone
        return not self.cancelled.is_set()

    def still_there(self) -> bool:
        return not self.cancelled.is_set()


async def stream_turn(
    run: Callable[[Callable[[ChatEvent], None]], TurnResult],
    *,
    control: TurnControl,
    on_finish: Callable[[], None] | None = None,
) -> AsyncIterator[bytes]:
    """Run ``run(on_event)`` in a thread and yield its events as SSE frames. ``control.cancelled``
    is set when the client goes away; the turn's commit waits on ``control.still_wanted``."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    cancelled = control.cancelled

    def emit(kind: str, item: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, (kind, item))

    control._emit = emit

    def on_event(event: ChatEvent) -> None:
        if cancelled.is_set():
            raise TurnCancelled
        emit("event", event)

    def work() -> None:
        try:
            emit("done", run(on_event))
        except TurnCancelled:
            emit("cancelled", None)
        except FolioError as e:
            emit("error", e)
        except Exception as e:
            log.exception("Unexpected error in a streamed turn")
            emit("crash", e)
        finally:
            if on_finish is not None:
                on_finish()

    # The turn's thread runs in this request's context (its request id names the turn's logs).
    worker = loop.run_in_executor(None, contextvars.copy_context().run, work)
    try:
        while True:
            kind, item = await queue.get()
            if kind == "event":
                yield _frame(item)
                # A full queue is read without waiting, and a write the socket's buffers take
                # does not wait either: without this pause a fast answer could be sent whole, and
                # stored, before the event loop even hears that the client has gone.
                await asyncio.sleep(0)
            elif kind == "flush":  # every earlier frame has been sent
                control._flushed.set()
            elif kind == "done":
                yield sse("done", turn_result_dict(item))
                return
            elif kind == "error":
                body = error_body(item.code, item.message, status=status_for(item))
                yield sse("error", body)
                return
            elif kind == "crash":
                yield sse("error", error_body("INTERNAL", "Unexpected server error"))
                return
            else:
                return
    finally:
        cancelled.set()  # a disconnected client lands here (the task is cancelled)
        del worker
