"""What SQLite and PostgreSQL spell differently in the statements of the SQL cores (``sql/``):
the statements are written once with ``?`` marks, and ``Dialect.sql`` gives each its own."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Dialect:
    mark: str  # the parameter placeholder: ``?`` or ``%s``
    greatest: str  # the larger of two values: ``max`` (SQLite) or ``greatest``
    row_lock: str  # appended to a writing unit of work's read of a conversation ("" where none)
    title_order: str  # books listed by title, case aside

    def sql(self, text: str) -> str:
        return text if self.mark == "?" else text.replace("?", self.mark)


SQLITE = Dialect(mark="?", greatest="max", row_lock="", title_order="title COLLATE NOCASE")
POSTGRES = Dialect(
    mark="%s", greatest="greatest", row_lock=" FOR NO KEY UPDATE", title_order="lower(title)"
)
