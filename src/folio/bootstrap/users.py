"""Users: accounts and who owns which book, and the use cases as one user sees them.

``UserScope`` builds the use cases on repositories limited to what its user owns: another user's
book or conversation is NOT_FOUND, never forbidden. Unscoped (``None``), it sees everything (the
CLI's local reader).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from folio.adapters.storage.postgres.db import PgDatabase
    from folio.adapters.storage.sqlite.db import Database
    from folio.agent.tools import ToolResult, ToolServices
    from folio.app.chat import ChatWithBook
    from folio.app.conversations import Conversations
    from folio.app.device_reading import DeviceReading
    from folio.app.highlights import Highlights
    from folio.app.imports import ImportBooks
    from folio.app.library import Library
    from folio.app.search import SearchBook
    from folio.app.users import Users
    from folio.bootstrap.container import Container
    from folio.domain.ports import (
        BookRepository,
        ChatProvider,
        OwnershipRepository,
        UnitOfWorkFactory,
    )
    from folio.domain.window import ReadingWindow


class UsersWiring:
    """The users' store (accounts, tokens, who owns what) and the per-user scope."""

    if TYPE_CHECKING:

        @property
        def _pg(self) -> PgDatabase | None: ...
        @property
        def _sqlite(self) -> Database: ...

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

    def for_user(self, user_id: str | None) -> UserScope:
        """The use cases as ``user_id`` sees them (only their books and conversations; another
        user's is NOT_FOUND). ``None``: unscoped, everything (the CLI)."""
        return UserScope(cast("Container", self), user_id)


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
    def highlights(self) -> Highlights:
        """The user's highlights: imported, listed and deleted over their own books only."""
        from folio.domain.users import LOCAL_USER_ID

        return self.container.highlights_for(self.user_id or LOCAL_USER_ID)

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
        books: BookRepository | None = None,
    ) -> ChatWithBook:
        """The chat turn use case. With ``still_wanted`` (asked before each unit of work, may
        wait) and ``still_there`` (asked at the commit, must not wait), a turn whose caller left
        stores nothing (``TurnCancelled``); ``window_turns``: how many earlier turns the model
        sees (default: the ``history_messages`` setting); ``books``: the user's books as the turn
        reads them (default: ``self.books``; a device's position: ``devices.positioned``)."""
        uow = self.conversation_uow
        if still_wanted is not None:
            from folio.app.cancellation import commit_only_if

            uow = commit_only_if(uow, still_wanted, still_there)
        window = None if window_turns is None else 2 * window_turns
        library = books if books is not None else self.books
        return self.container._chat_on(uow, provider, model, library, window, self.user_id)

    @cached_property
    def devices(self) -> DeviceReading:
        """The user's books as KOReader names them, at the place a device is."""
        from folio.app.device_reading import DeviceReading

        return DeviceReading(self.container._sync_store, self.books, clock=self.container.clock)

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

    def reader_tool(
        self,
        name: str,
        window: ReadingWindow,
        arguments: dict[str, Any] | None = None,
        *,
        books: BookRepository | None = None,
        for_model: bool = False,
    ) -> ToolResult:
        """Book tool ``name`` run for this user outside a chat turn (MCP, KOReader), bounded by
        ``window`` as a turn's tools are: its searches through a ``WindowSearcher``; ``books``
        (default: the user's) is what the tools read the book from (a device's place);
        ``for_model``: a model reads the result (MCP), so each passage found is cut to what
        answers, as in a model's chat turn (``read_passage`` gives the rest)."""
        from dataclasses import replace

        from folio.agent.excerpts import PassageExcerpts
        from folio.agent.tools import ToolContext
        from folio.app.search import WindowSearcher

        services = self.tool_services()
        services = replace(
            services,
            searcher=WindowSearcher(services.searcher, window),
            books=services.books if books is None else books,
            excerpts=PassageExcerpts() if for_model else None,
        )
        context = ToolContext.of(window, user=self.user_id)  # the user names its log line
        return self.container.tools.execute(name, context, services, arguments)

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
