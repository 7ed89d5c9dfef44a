"""Logging of ``folio serve``: one line per event on stderr, as JSON objects (one per line, every
structured field of the record a key) or as text, each with the request id and, inside a turn,
the conversation and user.

JSON comes from python-json-logger's formatter on the standard library's logging, so the lines
that folio's layers already write with ``extra={...}`` (the tool registry, the chat turn, the
model calls) become JSON fields without any of them knowing the format.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from folio.adapters.observability import context

LogFormat = Literal["json", "text"]
LOG_FORMATS: tuple[LogFormat, ...] = ("json", "text")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"


class ContextFilter(logging.Filter):
    """Adds ``request_id`` (the HTTP request's) and, inside a turn, ``conversation_id`` and
    ``user`` to every record that does not name them itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        rid = context.request_id.get()
        if rid is not None and not hasattr(record, "request_id"):
            record.request_id = rid
        scope = context.turn_scope.get()
        if scope is not None:
            if not hasattr(record, "conversation_id"):
                record.conversation_id = scope.conversation_id
            if not hasattr(record, "user"):
                record.user = scope.user
        return True


def json_formatter() -> logging.Formatter:
    """One JSON object per line: ``time`` (ISO 8601, UTC), ``level``, ``logger``, ``message`` and
    every field the record carries (uvicorn's coloured copy of its message left out)."""
    from pythonjsonlogger.core import RESERVED_ATTRS
    from pythonjsonlogger.json import JsonFormatter

    return JsonFormatter(
        "{levelname}{name}{message}",
        style="{",
        rename_fields={"levelname": "level", "name": "logger"},
        timestamp="time",
        reserved_attrs=[*RESERVED_ATTRS, "color_message"],
        json_ensure_ascii=False,
    )


def text_formatter() -> logging.Formatter:
    return logging.Formatter(TEXT_FORMAT, defaults={"request_id": "-"})


def logging_config(fmt: LogFormat, level: str) -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for folio's and uvicorn's loggers (uvicorn applies it in
    every worker process)."""
    level = level.upper()
    handler = {"handlers": ["stderr"], "level": level, "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": ContextFilter}},
        "formatters": {"folio": {"()": json_formatter if fmt == "json" else text_formatter}},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": "folio",
                "filters": ["context"],
            }
        },
        "loggers": {
            "folio": handler,
            "uvicorn": handler,
            "uvicorn.error": {"level": level},
            "uvicorn.access": handler,
        },
    }
