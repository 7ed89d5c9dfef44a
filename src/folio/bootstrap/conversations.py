"""Conversations: where they are stored (the database, or one JSON file each) and their use case."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from folio.adapters.storage.postgres.db import PgDatabase
    from folio.adapters.storage.sqlite.db import Database
    from folio.app.conversations import Conversations
    from folio.config import Settings
    from folio.domain.ports import BookRepository, UnitOfWorkFactory


class ConversationWiring:
    """The conversations' unit of work and use case."""

    if TYPE_CHECKING:
        settings: Settings
        _pools: list[Any]

        @property
        def _pg(self) -> PgDatabase | None: ...
        @property
        def _sqlite(self) -> Database: ...
        @property
        def books(self) -> BookRepository: ...

    @cached_property
    def conversation_uow(self) -> UnitOfWorkFactory:
        if self.settings.conversation_store == "json":
            from folio.adapters.storage.json.conversations import JsonConversationStore

            json_store = JsonConversationStore(self.settings.conversations_dir)
            return json_store.unit_of_work
        if (pg := self._pg) is not None:
            from folio.adapters.storage.postgres.conversations import PostgresConversationStore
            from folio.adapters.storage.postgres.db import PgDatabase

            # A pool of its own: a unit of work may wait for a conversation's row lock while
            # holding its connection, and the lock's holder still needs connections for the
            # library and ownership checks; sharing one pool, those waiters could take every
            # connection and stall the holder (measured: 503s under 16 concurrent clients).
            own_pool = PgDatabase(pg.url, max_size=self.settings.database_pool_size)
            self._pools.append(own_pool)
            return PostgresConversationStore(own_pool).unit_of_work
        from folio.adapters.storage.sqlite.conversations import SqliteConversationStore

        store = SqliteConversationStore(self._sqlite)
        return store.unit_of_work

    @cached_property
    def conversations(self) -> Conversations:
        from folio.app.conversations import Conversations

        return Conversations(
            self.conversation_uow,
            self.books,
            max_import_messages=self.settings.max_import_messages,
        )

    def _delete_conversations_of_book(self, book_id: str) -> None:
        if self.settings.conversation_store == "json":
            self.conversations.delete_for_book(book_id)
