"""folio's own stream of a chat turn: Server-Sent Events with named events (PrivateGPT/Anthropic
style): ``tool_call``, ``tool_result``, ``delta``, then exactly one of ``done`` (the turn, as the
JSON route returns it) or ``error`` (the one error body).

The turn itself (its thread, the client going away, flush before commit, the user's slot, the log
context) is ``turn_stream.TurnStream``'s; this module only maps its items to frames. The route
checks everything that can fail before the answer (auth, unknown conversation or book, bad input,
limits) BEFORE the response starts, so those are statuses; once the stream is open a failure is
an ``error`` event.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from folio.app.chat import AnswerDelta, ToolCallStarted, TurnResult
from folio.entrypoints.api.errors import error_body, status_for
from folio.entrypoints.api.turn_stream import TurnFailed, TurnItem
from folio.entrypoints.serialize import turn_result_dict


def sse(event: str, data: Any) -> bytes:
    """One SSE frame: ``event: NAME`` and the JSON data on one line."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event}\ndata: {payload}\n\n".encode()


async def sse_frames(items: AsyncIterator[TurnItem]) -> AsyncIterator[bytes]:
    """The turn's items as folio's SSE frames."""
    async for item in items:
        yield _frame(item)


def _frame(item: TurnItem) -> bytes:
    if isinstance(item, TurnResult):
        return sse("done", turn_result_dict(item))
    if isinstance(item, TurnFailed):
        if item.error is None:
            return sse("error", error_body("INTERNAL", "Unexpected server error"))
        e = item.error
        return sse("error", error_body(e.code, e.message, status=status_for(e)))
    if isinstance(item, AnswerDelta):
        return sse("delta", {"text": item.text})
    if isinstance(item, ToolCallStarted):
        return sse("tool_call", {"name": item.name, "arguments": dict(item.arguments)})
    return sse("tool_result", {"name": item.name, "success": item.success, "summary": item.summary})
