"""The context every log line of a request or turn carries: the request id (set by the HTTP
middleware) and the turn's conversation and user (set while ``Telemetry.turn`` runs).

Context variables, so they follow a request across ``await`` and into the worker threads that
copy the context (Starlette's thread pool; the streamed turn's executor copies it explicitly).
"""

from __future__ import annotations

from contextvars import ContextVar

from folio.domain.telemetry import TurnScope

request_id: ContextVar[str | None] = ContextVar("folio_request_id", default=None)
turn_scope: ContextVar[TurnScope | None] = ContextVar("folio_turn_scope", default=None)
