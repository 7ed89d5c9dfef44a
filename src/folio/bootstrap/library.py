"""The library: the books and their passages, the embedding model, search, ingest and imports.

The library store is the ``BookRepository`` and the ``ChunkIndex`` at once, in the process's
database unless one was given (an in-memory library has no database beside it).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from folio.adapters.storage.postgres.db import PgDatabase
    from folio.adapters.storage.sqlite.db import Database
    from folio.app.calibre_import import ImportCalibre
    from folio.app.ingest import IngestBook
    from folio.app.library import Library
    from folio.app.search import SearchBook
    from folio.app.sync import ProgressSync
    from folio.config import Settings
    from folio.domain.book_files import BookFileStore
    from folio.domain.books import Book
    from folio.domain.calibre import CalibreSourceRepository
    from folio.domain.ports import BookRepository, ChunkIndex, Embedder, ImportJobRepository


class LibraryWiring:
    """Books, passages and vectors: how they are stored, searched, added and imported."""

    if TYPE_CHECKING:
        settings: Settings
        _syncs_books: bool

        @property
        def _pg(self) -> PgDatabase | None: ...
        @property
        def _sqlite(self) -> Database: ...
        @property
        def _identifier_store(self) -> Any: ...
        @property
        def progress_sync(self) -> ProgressSync: ...
        def _delete_conversations_of_book(self, book_id: str) -> None: ...
        def _book_stored(self, user_id: str, book: Book, path: Path) -> None: ...

    @cached_property
    def _library_store(self) -> Any:
        if (pg := self._pg) is not None:
            from folio.adapters.storage.postgres.library import PostgresLibrary

            return PostgresLibrary(pg, vector_scan=self.settings.pg_vector_scan)
        from folio.adapters.storage.sqlite.library import SqliteLibrary

        return SqliteLibrary(self._sqlite)

    @property
    def books(self) -> BookRepository:
        return self._books_keeping_files

    @cached_property
    def _books_keeping_files(self) -> BookRepository:
        from folio.app.book_files import BooksKeepingFiles

        return BooksKeepingFiles(self._library_store, self.book_files)

    @cached_property
    def book_files(self) -> BookFileStore:
        """The imported files (OPDS serves them): in the PostgreSQL database of a shared library,
        else in ``home/book-files``; in memory beside a library given as an in-memory store. A
        file stays while any book of the library (any user's) has its content."""
        store = self._library_store
        bound = self.settings.max_book_bytes

        def in_use(content_hash: str) -> bool:
            return store.find_by_hash(content_hash) is not None

        if not self._syncs_books:
            from folio.adapters.storage.memory.book_files import InMemoryBookFiles

            return InMemoryBookFiles(in_use=in_use, max_bytes=bound)
        if (pg := self._pg) is not None:
            from folio.adapters.storage.postgres.book_files import PostgresBookFiles

            return PostgresBookFiles(pg, max_bytes=bound)
        from folio.adapters.storage.sqlite.book_files import DirectoryBookFiles

        return DirectoryBookFiles(self.settings.home / "book-files", in_use=in_use, max_bytes=bound)

    @property
    def chunk_index(self) -> ChunkIndex:
        return self._library_store  # type: ignore[no-any-return]

    @cached_property
    def embedder(self) -> Embedder:
        from folio.adapters.embeddings import make_embedder

        return make_embedder(self.settings.embedding_model, cache_dir=self.settings.models_dir)

    @cached_property
    def searcher(self) -> SearchBook:
        from folio.app.search import SearchBook

        return SearchBook(self.chunk_index, self.embedder)

    @cached_property
    def library(self) -> Library:
        from folio.app.library import Library

        return Library(self.books, on_remove=self._delete_conversations_of_book)

    @cached_property
    def ingest(self) -> IngestBook:
        return self._ingest_on(self.books)

    def _ingest_on(self, books: BookRepository, book_id: str | None = None) -> IngestBook:
        """The ingest use case storing into ``books``; ``book_id``: the id the new book gets."""
        import functools
        import uuid

        from folio.adapters.parsers import bounded_parser
        from folio.app.ingest import IngestBook
        from folio.domain.users import LOCAL_USER_ID

        # Keep passages inside the embedding model's window when the embedder can count tokens.
        count_tokens = getattr(self.embedder, "count_tokens", None)
        max_tokens = getattr(self.embedder, "max_tokens", 256)
        return IngestBook(
            parse=bounded_parser(max_unpacked_bytes=self.settings.max_unpacked_bytes).parse,
            max_bytes=self.settings.max_book_bytes,
            embedder=self.embedder,
            books=books,
            count_tokens=count_tokens,
            max_tokens=max_tokens,
            new_id=(lambda: book_id) if book_id else (lambda: uuid.uuid4().hex),
            files=self.book_files,
            on_stored=functools.partial(self._book_stored, getattr(books, "user_id", LOCAL_USER_ID))
            if self._syncs_books
            else None,
        )

    @cached_property
    def import_jobs(self) -> ImportJobRepository:
        if (pg := self._pg) is not None:
            from folio.adapters.storage.postgres.jobs import PostgresImportJobs

            return PostgresImportJobs(pg)
        from folio.adapters.storage.sqlite.jobs import SqliteImportJobs

        return SqliteImportJobs(self._sqlite)

    @cached_property
    def calibre_import(self) -> ImportCalibre:
        """Importing a Calibre library into the (local) library."""
        from folio.adapters.calibre_library import read_calibre_library
        from folio.app.calibre_import import ImportCalibre

        return ImportCalibre(
            read_calibre_library,
            self.ingest,
            self.books,
            self._identifier_store,
            self.calibre_sources,
            remove_book=self.library.remove,
        )

    @cached_property
    def calibre_sources(self) -> CalibreSourceRepository:
        """Where each book imported from Calibre came from, as of its last import."""
        from folio.adapters.storage.sql.calibre import SqlCalibreSourceStore
        from folio.adapters.storage.sql.sync import postgres_runner, sqlite_runner

        pg = self._pg
        return SqlCalibreSourceStore(postgres_runner(pg) if pg else sqlite_runner(self._sqlite))
