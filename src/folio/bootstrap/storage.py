"""Storage: the one database every store of a process lives in, and copying a library to another.

PostgreSQL when ``database_url`` is set, else SQLite under ``home``; migrated when first built, so
a command that touches no store opens no database.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, cast

from folio.bootstrap.providers import requires_extra

if TYPE_CHECKING:
    from datetime import datetime

    from folio.adapters.storage.postgres.db import PgDatabase
    from folio.adapters.storage.sqlite.db import Database
    from folio.bootstrap.container import Container
    from folio.config import Settings


class StorageWiring:
    """The database and the backend the other capabilities' stores are built on."""

    if TYPE_CHECKING:
        settings: Settings
        clock: Callable[[], datetime]

    @cached_property
    def database(self) -> Database | PgDatabase:
        """The one database, migrated: PostgreSQL when ``database_url`` is set (every adapter
        below then lives there), else SQLite under ``home``."""
        if self.settings.database_url:
            with requires_extra("postgres", "FOLIO_DATABASE_URL (a PostgreSQL database)"):
                from folio.adapters.storage.postgres.db import PgDatabase
            pg = PgDatabase(self.settings.database_url, max_size=self.settings.database_pool_size)
            pg.migrate()
            return pg
        from folio.adapters.storage.sqlite.db import Database

        db = Database(self.settings.database_path)
        db.migrate()
        return db

    @property
    def _pg(self) -> PgDatabase | None:
        return cast("PgDatabase", self.database) if self.settings.database_url else None

    @property
    def _sqlite(self) -> Database:
        return cast("Database", self.database)

    def copy_library_to(
        self, database_url: str, progress: Callable[[str, int, int], None] | None = None
    ) -> tuple[str, dict[str, int]]:
        """Copy the local SQLite library under ``home`` (books, vectors, conversations, users,
        import history) into the PostgreSQL database at ``database_url``, migrating it first;
        returns the target (redacted) and what was copied. See ``storage.postgres.copy``."""
        from folio.bootstrap.container import Container
        from folio.domain.errors import ConfigError

        local = Container(self.settings.replaced(database_url=None), clock=self.clock)
        target_settings = self.settings.replaced(
            database_url=database_url, conversation_store="sqlite"
        )
        if not local.settings.database_path.is_file():
            raise ConfigError(
                f"There is no local library to copy: {local.settings.database_path} does not"
                " exist (set FOLIO_HOME or --home to the folder that holds folio.db)"
            )
        target = cast("PgDatabase", Container(target_settings).database)  # migrated
        from folio.adapters.storage.postgres.copy import copy_library

        try:
            report = copy_library(local._sqlite, local.conversation_uow, target, progress=progress)
            files = _copy_book_files(local, target)
        finally:
            target.close()
        return target_settings.database_description, {**report.as_dict(), "book_files": files}


def _copy_book_files(local: Container, target: PgDatabase) -> int:
    """The files the local library kept (``home/book-files``) into the PostgreSQL library."""
    from folio.adapters.storage.postgres.book_files import PostgresBookFiles
    from folio.adapters.storage.sqlite.book_files import DirectoryBookFiles

    kept = local.book_files
    if not isinstance(kept, DirectoryBookFiles):
        return 0
    hashes = sorted(kept.stored({b.content_hash for b in local.books.list()}))
    for content_hash in hashes:
        path = kept.path_of(content_hash)
        PostgresBookFiles(target, max_bytes=path.stat().st_size).put(content_hash, path)
    return len(hashes)
