"""Users, their tokens and ownership in PostgreSQL (tables ``users`` and ``owners``).

The same behaviour as ``SqliteUsers`` (one contract suite runs on both): a taken name is
``DUPLICATE``; a resource nobody claimed belongs to the local user; ``owners`` answers for many ids
in one query. Every call borrows a pooled connection for one short transaction.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg

from folio.adapters.storage.postgres.db import PgDatabase
from folio.domain.users import LOCAL_USER_ID, ResourceKind, User, UserError, UserErrorCode


class PostgresUsers:
    """Implements ``UserRepository`` and ``OwnershipRepository``; safe to share between threads."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    # --- users --------------------------------------------------------------------------------
    def add(self, user: User, token_hash: str) -> None:
        try:
            self._write(
                "INSERT INTO users (id, name, token_hash, created_at) VALUES (%s, %s, %s, %s)",
                (user.id, user.name, token_hash, user.created_at.isoformat()),
            )
        except psycopg.errors.UniqueViolation as e:
            raise UserError(
                f"A user named {user.name!r} exists already", code=UserErrorCode.DUPLICATE
            ) from e

    def list(self) -> builtins.list[User]:
        return [_user(r) for r in self._query(f"SELECT {_USER} FROM users ORDER BY name", ())]

    def get_by_name(self, name: str) -> User:
        rows = self._query(f"SELECT {_USER} FROM users WHERE name = %s", (name,))
        if not rows:
            raise UserError(f"No user named {name!r}", code=UserErrorCode.NOT_FOUND)
        return _user(rows[0])

    def get_by_token_hash(self, token_hash: str) -> User | None:
        rows = self._query(f"SELECT {_USER} FROM users WHERE token_hash = %s", (token_hash,))
        return _user(rows[0]) if rows else None

    def set_token_hash(self, user_id: str, token_hash: str) -> None:
        self._write("UPDATE users SET token_hash = %s WHERE id = %s", (token_hash, user_id))

    def delete(self, user_id: str) -> None:
        self._write("DELETE FROM users WHERE id = %s", (user_id,))

    def count(self) -> int:
        return int(self._query("SELECT count(*) FROM users", ())[0][0])

    # --- ownership ----------------------------------------------------------------------------
    def set_owner(self, kind: ResourceKind, resource_id: str, user_id: str) -> None:
        self._write(
            "INSERT INTO owners (kind, resource_id, user_id) VALUES (%s, %s, %s)"
            " ON CONFLICT (kind, resource_id) DO UPDATE SET user_id = excluded.user_id",
            (kind.value, resource_id, user_id),
        )

    def owner_of(self, kind: ResourceKind, resource_id: str) -> str:
        return self.owners(kind, [resource_id])[resource_id]

    def owners(self, kind: ResourceKind, resource_ids: Sequence[str]) -> dict[str, str]:
        ids = list(dict.fromkeys(resource_ids))
        rows = self._query(
            "SELECT resource_id, user_id FROM owners WHERE kind = %s AND resource_id = ANY(%s)",
            (kind.value, ids),
        )
        found = {str(r[0]): str(r[1]) for r in rows}
        return {i: found.get(i, LOCAL_USER_ID) for i in ids}

    def forget(self, kind: ResourceKind, resource_id: str) -> None:
        self._write(
            "DELETE FROM owners WHERE kind = %s AND resource_id = %s", (kind.value, resource_id)
        )

    # --- plumbing -----------------------------------------------------------------------------
    def _query(self, sql: str, params: tuple[Any, ...]) -> builtins.list[tuple[Any, ...]]:
        with self._db.connection() as conn:
            return conn.execute(sql, params).fetchall()

    def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        with self._db.connection() as conn:
            conn.execute(sql, params)


_USER = "id, name, created_at"


def _user(row: tuple[Any, ...]) -> User:
    return User(str(row[0]), str(row[1]), datetime.fromisoformat(row[2]))
