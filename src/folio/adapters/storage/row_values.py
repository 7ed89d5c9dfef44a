"""Column values shared by the SQL row codecs (``book_codec``, ``conversation_codec``): a JSON
column reads back as text (SQLite) or already parsed (PostgreSQL's jsonb), a time as ISO text or
as a datetime; the decoders take either."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any


def encode_datetime(value: datetime) -> str:
    """UTC, fixed width (microseconds always present) so that string order is time order. A naive
    datetime is taken to be UTC."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="microseconds")


def decode_datetime(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def json_value(value: Any) -> Any:
    """A JSON column as Python values, whether the driver parsed it or not."""
    return json.loads(value) if isinstance(value, str) else value


def moment(value: str | datetime) -> datetime:
    """A time column as an aware UTC datetime, from ISO text or a driver's datetime."""
    return decode_datetime(value) if isinstance(value, str) else value.astimezone(UTC)
