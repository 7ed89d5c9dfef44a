"""Users and ownership in the SQLite database (tables ``users`` and ``owners``, migration 005)."""

from __future__ import annotations

import builtins
import sqlite3
import threading
from collections.abc import Sequence
from datetime import datetime

from folio.adapters.storage.sqlite.db import Database, transaction
from folio.domain.users import LOCAL_USER_ID, ResourceKind, User, UserError, UserErrorCode


class SqliteUsers:
    """Implements ``UserRepository`` and ``OwnershipRepository``. Reads use one connection per
    thread (every request checks a token and owners); writes open their own."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._local = threading.local()

    def _connect(self) -> sqlite3.Connection:
        return self._db.connect()

    def _reader(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._db.connect()
            self._local.conn = conn
        return conn

    # --- users --------------------------------------------------------------------------------
    def add(self, user: User, token_hash: str) -> None:
        conn = self._connect()
        try:
            with transaction(conn, immediate=True):
                conn.execute(
                    "INSERT INTO users (id, name, token_hash, created_at) VALUES (?, ?, ?, ?)",
                    (user.id, user.name, token_hash, user.created_at.isoformat()),
                )
        except sqlite3.IntegrityError as e:
            raise UserError(
                f"A user named {user.name!r} exists already", code=UserErrorCode.DUPLICATE
            ) from e
        finally:
            conn.close()

    def list(self) -> builtins.list[User]:
        return [_user(r) for r in self._query("SELECT * FROM users ORDER BY name", ())]

    def get_by_name(self, name: str) -> User:
        rows = self._query("SELECT * FROM users WHERE name = ?", (name,))
        if not rows:
            raise UserError(f"No user named {name!r}", code=UserErrorCode.NOT_FOUND)
        return _user(rows[0])

    def get_by_token_hash(self, token_hash: str) -> User | None:
        rows = self._query("SELECT * FROM users WHERE token_hash = ?", (token_hash,))
        return _user(rows[0]) if rows else None

    def set_token_hash(self, user_id: str, token_hash: str) -> None:
        self._write("UPDATE users SET token_hash = ? WHERE id = ?", (token_hash, user_id))

    def delete(self, user_id: str) -> None:
        self._write("DELETE FROM users WHERE id = ?", (user_id,))

    def count(self) -> int:
        return int(self._query("SELECT count(*) FROM users", ())[0][0])

    # --- ownership ----------------------------------------------------------------------------
    def set_owner(self, kind: ResourceKind, resource_id: str, user_id: str) -> None:
        self._write(
            "INSERT INTO owners (kind, resource_id, user_id) VALUES (?, ?, ?)"
            " ON CONFLICT (kind, resource_id) DO UPDATE SET user_id = excluded.user_id",
            (kind.value, resource_id, user_id),
        )

    def owner_of(self, kind: ResourceKind, resource_id: str) -> str:
        return self.owners(kind, [resource_id])[resource_id]

    def owners(self, kind: ResourceKind, resource_ids: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        ids = list(dict.fromkeys(resource_ids))
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            marks = ",".join("?" * len(batch))
            rows = self._query(
                "SELECT resource_id, user_id FROM owners"
                f" WHERE kind = ? AND resource_id IN ({marks})",
                (kind.value, *batch),
            )
            found.update({str(r[0]): str(r[1]) for r in rows})
        return {i: found.get(i, LOCAL_USER_ID) for i in ids}

    def forget(self, kind: ResourceKind, resource_id: str) -> None:
        self._write(
            "DELETE FROM owners WHERE kind = ? AND resource_id = ?", (kind.value, resource_id)
        )

    # --- plumbing -----------------------------------------------------------------------------
    def _query(self, sql: str, params: tuple[object, ...]) -> builtins.list[sqlite3.Row]:
        return self._reader().execute(sql, params).fetchall()

    def _write(self, sql: str, params: tuple[object, ...]) -> None:
        conn = self._connect()
        try:
            with transaction(conn, immediate=True):
                conn.execute(sql, params)
        finally:
            conn.close()


def _user(row: sqlite3.Row) -> User:
    return User(str(row["id"]), str(row["name"]), datetime.fromisoformat(row["created_at"]))
