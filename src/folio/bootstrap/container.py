"""The one composition root: settings -> adapters -> use cases.

The CLI, the HTTP API, ``folio eval``, the tests and library users all build a ``Container`` and ask
it for use cases. Adapters are created lazily on first use, so a command that never searches never
loads the embedding model. Any adapter can be replaced at construction, in the spirit of
cosmicpython's ``bootstrap(uow=...)``: ``Container(settings, provider=ScriptedChatProvider([...]),
uow=store.unit_of_work, library=InMemoryLibrary(), clock=fixed_clock)``. The agent's strategies
(which retrieval strategy, which fallback, which context window) are chosen here too, never inside
the use cases.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

from folio.config import Settings, load_settings

if TYPE_CHECKING:
    from folio.adapters.storage.postgres.db import PgDatabase
    from folio.adapters.storage.sqlite.db import Database
    from folio.agent.guardrail import Guardrail
    from folio.agent.lexicon import Lexicons
    from folio.agent.summaries import StorySummaries
    from folio.agent.tools import ToolRegistry, ToolServices
    from folio.app.calibre_import import ImportCalibre
    from folio.app.chat import ChatWithBook
    from folio.app.conversations import Conversations
    from folio.app.highlights import Highlights
    from folio.app.imports import ImportBooks
    from folio.app.ingest import IngestBook
    from folio.app.library import Library
    from folio.app.search import SearchBook
    from folio.app.sync import ProgressSync
    from folio.app.users import Users
    from folio.domain.ports import (
        BookRepository,
        ChatProvider,
        ChunkIndex,
        Embedder,
        HighlightRepository,
        ImportJobRepository,
        OwnershipRepository,
        UnitOfWorkFactory,
    )
    from folio.domain.telemetry import Telemetry


OFFLINE_WINDOW = 100  # messages of the conversation the offline policy's search query may use


def _utcnow() -> datetime:
    return datetime.now(UTC)


class Container:
    """Builds and holds the adapters and use cases for one process.

    Overrides (all optional): ``provider`` (the chat model for every chat use case asked without a
    provider name), ``uow`` (the conversations' unit of work), ``library`` (an object that is both
    the ``BookRepository`` and the ``ChunkIndex``), ``searcher``, ``embedder``, ``tools`` (the tool
    registry), ``guardrail``, ``clock`` and ``telemetry`` (what counts the turns, tool calls, model
    calls and imports for an operator: ``NoTelemetry`` unless given; the HTTP server gives its
    Prometheus one)."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        provider: ChatProvider | None = None,
        uow: UnitOfWorkFactory | None = None,
        library: Any = None,
        searcher: SearchBook | None = None,
        embedder: Embedder | None = None,
        tools: ToolRegistry | None = None,
        guardrail: Guardrail | None = None,
        clock: Callable[[], datetime] | None = None,
        telemetry: Telemetry | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.settings = settings if settings is not None else load_settings()
        self.clock = clock or _utcnow
        self.sleep = sleep or time.sleep  # a chat turn's pause between attempts to store it
        self._pools: list[Any] = []  # PostgreSQL pools built here besides ``database``
        self._provider = provider
        # A library given here (an in-memory one) has no database for progress sync beside it.
        self._syncs_books = library is None
        # A cached_property reads the instance's dict first: an override simply sits there.
        given = {
            "conversation_uow": uow,
            "_library_store": library,
            "searcher": searcher,
            "embedder": embedder,
            "tools": tools,
            "guardrail": guardrail,
            "telemetry": telemetry,
        }
        self.__dict__.update({name: value for name, value in given.items() if value is not None})

    _ADAPTERS = (
        "database",
        "_library_store",
        "embedder",
        "searcher",
        "conversation_uow",
        "import_jobs",
        "_users_store",
        "_sync_store",
        "_identifier_store",
        "tools",
        "guardrail",
    )

    def overridden(
        self,
        *,
        provider: ChatProvider | None = None,
        uow: UnitOfWorkFactory | None = None,
        clock: Callable[[], datetime] | None = None,
        guardrail: Guardrail | None = None,
        tools: ToolRegistry | None = None,
    ) -> Container:
        """A container with the same settings that shares every adapter this one has built
        (database, library, embedding model...) except those given here."""
        twin = Container(
            self.settings,
            provider=provider or self._provider,
            uow=uow,
            clock=clock or self.clock,
            sleep=self.sleep,
            guardrail=guardrail,
            tools=tools,
            telemetry=self.telemetry,
        )
        for name in self._ADAPTERS:
            if name in self.__dict__:
                twin.__dict__.setdefault(name, self.__dict__[name])
        twin._syncs_books = self._syncs_books
        return twin

    def close(self) -> None:
        """Give back the database connections this container holds (PostgreSQL pools; SQLite
        opens a connection per operation). Adapters built later open new ones."""
        for db in [self.__dict__.get("database"), *self._pools]:
            close = getattr(db, "close", None)
            if close is not None:
                close()
        self._pools.clear()

    @cached_property
    def telemetry(self) -> Telemetry:
        """``NoTelemetry`` unless one was given (built when first asked: a command that runs no
        turn, model call or import never loads it)."""
        from folio.domain.telemetry import NoTelemetry

        return NoTelemetry()

    # --- adapters ---------------------------------------------------------------------------------
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

    @cached_property
    def _library_store(self) -> Any:
        if (pg := self._pg) is not None:
            from folio.adapters.storage.postgres.library import PostgresLibrary

            return PostgresLibrary(pg, vector_scan=self.settings.pg_vector_scan)
        from folio.adapters.storage.sqlite.library import SqliteLibrary

        return SqliteLibrary(self._sqlite)

    @property
    def books(self) -> BookRepository:
        return self._library_store  # type: ignore[no-any-return]

    @property
    def chunk_index(self) -> ChunkIndex:
        return self._library_store  # type: ignore[no-any-return]

    @cached_property
    def embedder(self) -> Embedder:
        from folio.adapters.embeddings import make_embedder

        return make_embedder(self.settings.embedding_model, cache_dir=self.settings.models_dir)

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

    def chat_provider(self, name: str | None = None, model: str | None = None) -> ChatProvider:
        """The chat model: ``name`` if given, else the override, else the configured or first
        available provider."""
        if name is None and model is None and self._provider is not None:
            return self._provider
        return make_provider(self.settings, name=name, model=model)

    def serving(self) -> dict[str, str]:
        """What answers here, as ``folio serve`` and the page say it: ``provider``, ``model``
        (or why there is none), ``database`` ("SQLite" | "PostgreSQL") and ``location`` (the
        file, or the URL with its password hidden)."""
        from folio.domain.errors import FolioError

        try:
            model = self.chat_provider().model_name
        except FolioError as e:  # the turns will say so too; the server still starts
            model = f"not available: {e.message}"
        return {
            "provider": self.settings.effective_provider(),
            "model": model,
            "database": "PostgreSQL" if self.settings.uses_postgres else "SQLite",
            "location": self.settings.database_description,
        }

    @cached_property
    def guardrail(self) -> Guardrail:
        from folio.agent.guardrail import Guardrail

        mode = self.settings.guardrail
        return Guardrail(mode, searcher=self.searcher if mode == "retrieval" else None)

    @cached_property
    def lexicons(self) -> Lexicons:
        """Each book's names, stored with it at import, read once per process (people tool)."""
        from folio.agent.lexicon import Lexicons

        return Lexicons()

    @cached_property
    def summaries(self) -> StorySummaries:
        """Each book's ranked sentences for the story so far, stored with it at import, read
        once per process; chapters without them are ranked with the embedder when asked."""
        from folio.agent.summaries import StorySummaries

        return StorySummaries(self.embedder)

    @cached_property
    def tools(self) -> ToolRegistry:
        from folio.agent.tools import default_registry

        return default_registry(telemetry=self.telemetry)

    # --- use cases --------------------------------------------------------------------------------
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
            on_stored=functools.partial(
                self.progress_sync.book_added, getattr(books, "user_id", LOCAL_USER_ID)
            )
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
    def searcher(self) -> SearchBook:
        from folio.app.search import SearchBook

        return SearchBook(self.chunk_index, self.embedder)

    @cached_property
    def conversations(self) -> Conversations:
        from folio.app.conversations import Conversations

        return Conversations(
            self.conversation_uow,
            self.books,
            max_import_messages=self.settings.max_import_messages,
        )

    def chat(
        self, provider: str | None = None, model: str | None = None, *, user: str | None = None
    ) -> ChatWithBook:
        """The chat turn use case with the chosen (or configured) provider; ``user``: who the
        turns are for in their log lines and tool context (it scopes nothing: see ``for_user``)."""
        return self._chat_on(self.conversation_uow, provider, model, user=user)

    def stateless_chat(
        self, book_id: str, provider: str | None = None, model: str | None = None
    ) -> tuple[ChatWithBook, str]:
        """A chat turn that stores nothing: see ``UserScope.stateless_chat``."""
        return self.for_user(None).stateless_chat(book_id, provider, model)

    def copy_library_to(
        self, database_url: str, progress: Callable[[str, int, int], None] | None = None
    ) -> tuple[str, dict[str, int]]:
        """Copy the local SQLite library under ``home`` (books, vectors, conversations, users,
        import history) into the PostgreSQL database at ``database_url``, migrating it first;
        returns the target (redacted) and what was copied. See ``storage.postgres.copy``."""
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
        finally:
            target.close()
        return target_settings.database_description, report.as_dict()

    # --- users --------------------------------------------------------------------------------
    @cached_property
    def _users_store(self) -> Any:
        if (pg := self._pg) is not None:
            from folio.adapters.storage.postgres.users import PostgresUsers

            return PostgresUsers(pg)
        from folio.adapters.storage.sqlite.users import SqliteUsers

        return SqliteUsers(self._sqlite)

    @property
    def ownership(self) -> OwnershipRepository:
        return self._users_store  # type: ignore[no-any-return]

    @cached_property
    def users(self) -> Users:
        from folio.app.users import Users

        return Users(self._users_store)

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
        from folio.adapters.parsers.highlights import read_highlights
        from folio.app.highlights import Highlights
        from folio.domain.users import LOCAL_USER_ID

        books = self.for_user(LOCAL_USER_ID).books
        return Highlights(self.highlight_store, books, read_highlights, user_id=LOCAL_USER_ID)

    @cached_property
    def progress_sync(self) -> ProgressSync:
        """KOReader progress sync (logins, pushes, pulls) over the whole library: every push is
        applied only to its user's own books."""
        from folio.adapters.parsers.koreader_ids import identify
        from folio.app.sync import ProgressSync

        return ProgressSync(
            self._sync_store,
            self._users_store,
            self.books,
            self.ownership,
            identify,
            moves_back=self.settings.sync_moves_back,
            clock=self.clock,
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

    @cached_property
    def calibre_import(self) -> ImportCalibre:
        """Importing a Calibre library into the (local) library."""
        from folio.adapters.calibre_library import read_calibre_library
        from folio.app.calibre_import import ImportCalibre

        return ImportCalibre(read_calibre_library, self.ingest, self.books, self._identifier_store)

    def for_user(self, user_id: str | None) -> UserScope:
        """The use cases as ``user_id`` sees them (only their books and conversations; another
        user's is NOT_FOUND). ``None``: unscoped, everything (the CLI)."""
        return UserScope(self, user_id)

    def _chat_on(
        self,
        uow: UnitOfWorkFactory,
        provider: str | None,
        model: str | None,
        books: BookRepository | None = None,
        history_messages: int | None = None,
        user: str | None = None,
    ) -> ChatWithBook:
        """The chat use case on ``uow`` and ``books``, with the strategies for its provider: the
        offline provider has no model, so its turns run the extractive strategy; a model runs
        tool use, and always-retrieve where it has no tool use. Every model call is observed
        (logged and reported to ``telemetry``)."""
        from folio.adapters.llm.observed import ObservedChatProvider
        from folio.adapters.llm.offline import OfflineChatProvider
        from folio.agent.context import RecentTurnsStrategy
        from folio.agent.strategies import AlwaysRetrieveStrategy, ToolUseRetrievalStrategy
        from folio.app.chat import ChatWithBook
        from folio.domain.ports import RetrievalStrategy

        s = self.settings
        chosen = self.chat_provider(provider, model)
        chat_provider = ObservedChatProvider(chosen, self.telemetry)
        library = books or self.books
        retrieval: RetrievalStrategy
        recaps_by: ChatProvider | None = None
        if isinstance(chosen, OfflineChatProvider):
            # The offline policy is loaded here only: no rule of it runs in a model's turn.
            from folio.agent.offline.strategy import OfflineStrategy

            retrieval = OfflineStrategy(self.embedder, k=s.search_k)
        else:
            retrieval = ToolUseRetrievalStrategy(
                max_tool_rounds=s.max_tool_rounds, fallback=AlwaysRetrieveStrategy(k=s.search_k)
            )
            recaps_by = chat_provider
        return ChatWithBook(
            uow=uow,
            services=self.tool_services(library, recaps_by),
            provider=chat_provider,
            tools=self.tools,
            context=RecentTurnsStrategy(
                # offline, the window only feeds the search query: it sends no model tokens
                max_messages=max(history_messages or s.history_messages, OFFLINE_WINDOW)
                if retrieval.name == "extractive"
                else history_messages or s.history_messages,
                token_budget=s.context_token_budget,
                message_chars=s.max_message_chars,
            ),
            retrieval=retrieval,
            guardrail=self.guardrail,
            clock=self.clock,
            user=user,
            sleep=self.sleep,
            max_message_chars=s.max_message_chars,
            telemetry=self.telemetry,
            log_message_text=s.log_message_text,
        )

    def tool_services(self, books: BookRepository, recaps_by: ChatProvider | None) -> ToolServices:
        """The ports of the book tools, the same on every surface (a chat turn, MCP): the
        process's searcher, lexicons and chapter summaries; ``recaps_by``: the model that recaps
        whole chapters (None: the recap quotes the chapters' own sentences)."""
        from folio.agent.tools import ToolServices

        recaps = None
        if recaps_by is not None:
            from folio.agent.recaps import ModelChapterRecaps

            recaps = ModelChapterRecaps(recaps_by, books)
        return ToolServices(
            self.searcher,
            books,
            self.chunk_index,
            self.settings.search_k,
            recaps=recaps,
            highlights=self.highlight_store,
            lexicons=self.lexicons,
            summaries=self.summaries,
        )

    def _delete_conversations_of_book(self, book_id: str) -> None:
        if self.settings.conversation_store == "json":
            self.conversations.delete_for_book(book_id)


class UserScope:
    """One user's use cases, built on repositories limited to what the user owns."""

    def __init__(self, container: Container, user_id: str | None) -> None:
        self.container = container
        self.user_id = user_id

    @cached_property
    def books(self) -> BookRepository:
        if self.user_id is None:
            return self.container.books
        from folio.app.ownership import OwnedBooks

        return OwnedBooks(self.container.books, self.container.ownership, self.user_id)

    @cached_property
    def conversation_uow(self) -> UnitOfWorkFactory:
        if self.user_id is None:
            return self.container.conversation_uow
        from folio.app.ownership import owned_unit_of_work

        return owned_unit_of_work(
            self.container.conversation_uow, self.container.ownership, self.user_id
        )

    @cached_property
    def library(self) -> Library:
        from folio.app.library import Library

        return Library(self.books, on_remove=self.container._delete_conversations_of_book)

    @cached_property
    def conversations(self) -> Conversations:
        from folio.app.conversations import Conversations

        return Conversations(self.conversation_uow, self.books)

    @property
    def searcher(self) -> SearchBook:
        return self.container.searcher

    @cached_property
    def imports(self) -> ImportBooks:
        """Book imports as background jobs (threads of this process) owned by the user."""
        import threading

        from folio.adapters.parsers.sniff import sniff_format
        from folio.app.imports import ImportBooks
        from folio.domain.users import LOCAL_USER_ID

        def spawn(work: Callable[[], None]) -> None:
            threading.Thread(target=work, name="folio-import", daemon=True).start()

        return ImportBooks(
            self.container.import_jobs,
            lambda book_id: self.container._ingest_on(self.books, book_id),
            sniff_format,
            spawn,
            self.user_id or LOCAL_USER_ID,
            telemetry=self.container.telemetry,
        )

    def chat(
        self,
        provider: str | None = None,
        model: str | None = None,
        *,
        still_wanted: Callable[[], bool] | None = None,
        still_there: Callable[[], bool] | None = None,
        window_turns: int | None = None,
    ) -> ChatWithBook:
        """The chat turn use case. With ``still_wanted`` (asked before each unit of work, may
        wait) and ``still_there`` (asked at the commit, must not wait), a turn whose caller left
        stores nothing (``TurnCancelled``); ``window_turns``: how many earlier turns the model
        sees (default: the ``history_messages`` setting)."""
        uow = self.conversation_uow
        if still_wanted is not None:
            from folio.app.cancellation import commit_only_if

            uow = commit_only_if(uow, still_wanted, still_there)
        window = None if window_turns is None else 2 * window_turns
        return self.container._chat_on(uow, provider, model, self.books, window, self.user_id)

    def tool_services(self) -> ToolServices:
        """The book tools' ports as this user's chat turns have them, for a surface without a
        turn (MCP): the configured model recaps chapters; offline, or when no model can be
        built from the settings, the recap quotes the chapters' own sentences."""
        from folio.adapters.llm.observed import ObservedChatProvider
        from folio.adapters.llm.offline import OfflineChatProvider
        from folio.domain.errors import FolioError

        try:
            chosen: ChatProvider | None = self.container.chat_provider()
        except FolioError:
            chosen = None
        if chosen is None or isinstance(chosen, OfflineChatProvider):
            return self.container.tool_services(self.books, None)
        observed = ObservedChatProvider(chosen, self.container.telemetry)
        return self.container.tool_services(self.books, observed)

    def stateless_chat(
        self,
        book_id: str,
        provider: str | None = None,
        model: str | None = None,
        *,
        history: Sequence[tuple[str, str]] = (),
    ) -> tuple[ChatWithBook, str]:
        """A chat turn that stores nothing: the use case on a throwaway in-memory conversation
        store holding one conversation about ``book_id`` (``BookError`` if the user has no such
        book) whose earlier turns are ``history``, the client's own (question, answer) pairs.
        Returns the use case and that conversation's id."""
        from folio.adapters.storage.memory.conversations import InMemoryConversationStore
        from folio.app.conversations import Conversations

        store = InMemoryConversationStore()
        conversations = Conversations(store.unit_of_work, self.books)
        conversation = conversations.create(book_id)
        if history:
            conversations.seed_exchanges(conversation.id, history, origin="client_history")
        chat = self.container._chat_on(
            store.unit_of_work, provider, model, self.books, user=self.user_id
        )
        return chat, conversation.id


@contextmanager
def requires_extra(extra: str, what: str) -> Iterator[None]:
    """Turn an optional dependency that is not installed into a ``ConfigError`` naming the extra
    that brings it (the runtime install is what offline chat in the terminal needs)."""
    try:
        yield
    except ImportError as e:
        from folio.domain.errors import ConfigError

        raise ConfigError(
            f"{what} needs {e.name or 'a package'}, which is not installed:"
            f" pip install 'folio-reader[{extra}]'"
        ) from e


def make_provider(
    settings: Settings, *, name: str | None = None, model: str | None = None
) -> ChatProvider:
    """Build a chat provider from settings; vendor SDKs are imported only for the one chosen."""
    from folio.domain.errors import ConfigError

    chosen = name or settings.effective_provider()
    model = model or settings.model
    timeout, retries = settings.llm_timeout, settings.llm_max_retries
    if chosen in ("anthropic", "openai"):  # a missing key is said before the SDK is loaded
        from folio.adapters.llm._common import check_credentials

        key = settings.anthropic_api_key if chosen == "anthropic" else settings.openai_api_key
        check_credentials(chosen, key, settings.openai_base_url)
    if chosen == "anthropic":
        with requires_extra("anthropic", "The Anthropic provider"):
            from folio.adapters.llm.anthropic import AnthropicProvider

        return AnthropicProvider(
            api_key=settings.anthropic_api_key, model=model, timeout=timeout, max_retries=retries
        )
    if chosen == "openai":
        with requires_extra("openai", "The OpenAI provider"):
            from folio.adapters.llm.openai import OpenAIProvider

        return OpenAIProvider(
            api_key=settings.openai_api_key,
            base_url=settings.openai_base_url,
            model=model,
            timeout=timeout,
            max_retries=retries,
        )
    if chosen == "ollama":
        from folio.adapters.llm.ollama import OllamaProvider

        return OllamaProvider(
            host=settings.ollama_host, model=model, timeout=timeout, max_retries=retries
        )
    if chosen == "scripted":
        from folio.adapters.llm.scripted import load_script

        if settings.script_file is None:
            raise ConfigError("The scripted provider needs a script file: set FOLIO_SCRIPT")
        return load_script(settings.script_file)
    if chosen == "offline":
        from folio.adapters.llm.offline import OfflineChatProvider

        return OfflineChatProvider()
    raise ConfigError(f"Unknown provider {chosen!r}: choose anthropic, openai, ollama or offline")
