"""The reader's devices: KOReader progress sync, the books' identifiers from their source, and the
highlights imported from a reader.

They live in the library's database; beside a library given as an in-memory store there is no
database, so highlights are kept in memory and books have no identifiers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path

    from folio.adapters.storage.postgres.db import PgDatabase
    from folio.adapters.storage.sqlite.db import Database
    from folio.app.highlights import Highlights
    from folio.app.sync import ProgressSync
    from folio.bootstrap.users import UserScope
    from folio.config import Settings
    from folio.domain.books import Book
    from folio.domain.ports import BookRepository, HighlightRepository, OwnershipRepository

log = logging.getLogger(__name__)


class SyncWiring:
    """Progress sync, identifiers and highlights."""

    if TYPE_CHECKING:
        settings: Settings
        clock: Callable[[], datetime]
        _syncs_books: bool

        @property
        def _pg(self) -> PgDatabase | None: ...
        @property
        def _sqlite(self) -> Database: ...
        @property
        def _users_store(self) -> Any: ...
        @property
        def books(self) -> BookRepository: ...
        @property
        def ownership(self) -> OwnershipRepository: ...
        def for_user(self, user_id: str | None) -> UserScope: ...

    @cached_property
    def _sync_store(self) -> Any:
        if (pg := self._pg) is not None:
            from folio.adapters.storage.sql.sync import postgres_sync_store

            return postgres_sync_store(pg)
        from folio.adapters.storage.sql.sync import sqlite_sync_store

        return sqlite_sync_store(self._sqlite)

    @cached_property
    def highlight_store(self) -> HighlightRepository:
        """The reader's imported highlights, in the library's database (in memory beside a
        library given as an in-memory store)."""
        if not self._syncs_books:
            from folio.adapters.storage.memory.highlights import InMemoryHighlightStore

            return InMemoryHighlightStore()
        from folio.adapters.storage.sql.highlights import SqlHighlightStore
        from folio.adapters.storage.sql.sync import postgres_runner, sqlite_runner

        pg = self._pg
        return SqlHighlightStore(postgres_runner(pg) if pg else sqlite_runner(self._sqlite))

    @cached_property
    def highlights(self) -> Highlights:
        """Importing and listing the (local) reader's highlights, matched against the local
        reader's own books only (never another user's of the same library)."""
        from folio.domain.users import LOCAL_USER_ID

        return self.highlights_for(LOCAL_USER_ID)

    def highlights_for(self, user_id: str) -> Highlights:
        """One user's highlights over their own books; a KOReader xpointer is placed in an
        EPUB by the spine progress sync keeps for it."""
        from folio.adapters.parsers.highlights import read_highlights
        from folio.app.highlights import Highlights

        books = self.for_user(user_id).books
        fragments = self._sync_store.fragments_of if self._syncs_books else None
        read = partial(read_highlights, max_bytes=self.settings.max_highlights_bytes)
        return Highlights(self.highlight_store, books, read, user_id=user_id, fragments=fragments)

    def _book_stored(self, user_id: str, book: Book, path: Path) -> None:
        """A book was added: progress sync records its file's names (and applies a push that
        waited for it), then the user's highlights that waited for it are anchored."""
        from folio.domain.errors import FolioError

        self.progress_sync.book_added(user_id, book, path)
        try:
            self.highlights_for(user_id).book_added(book)
        except FolioError:  # the book is kept; its highlights keep waiting
            log.warning("highlights waiting for %r not applied", book.title, exc_info=True)

    @cached_property
    def progress_sync(self) -> ProgressSync:
        """KOReader progress sync (logins, pushes, pulls) over the whole library: every push is
        applied only to its user's own books."""
        from folio.adapters.parsers.koreader_ids import identify
        from folio.app.login_limits import FailedLogins
        from folio.app.sync import ProgressSync

        s = self.settings
        return ProgressSync(
            self._sync_store,
            self._users_store,
            self.books,
            self.ownership,
            identify,
            moves_back=s.sync_moves_back,
            clock=self.clock,
            failed_logins=FailedLogins(
                per_login=s.sync_login_failures,
                per_address=s.sync_address_failures,
                window_s=s.sync_failure_window_s,
            ),
        )

    @cached_property
    def _identifier_store(self) -> Any:
        from folio.adapters.storage.sql.sync import (
            SqlIdentifierStore,
            postgres_runner,
            sqlite_runner,
        )

        pg = self._pg
        return SqlIdentifierStore(postgres_runner(pg) if pg else sqlite_runner(self._sqlite))

    def identifiers_of(self, book_id: str) -> dict[str, str]:
        """The book's identifiers from its source (Calibre's isbn..., ``calibre``: its uuid);
        none for a library given as an in-memory store."""
        if not self._syncs_books:
            return {}
        found: dict[str, str] = self._identifier_store.identifiers_of(book_id)
        return found
