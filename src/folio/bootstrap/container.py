"""The ``Container``: one process's adapters and use cases, built lazily from its settings.

It holds what every capability shares (settings, clock, telemetry, the overrides) and takes each
capability's wiring from its module's mixin. An override given at construction sits in the
instance's dict, where each ``cached_property`` looks first, so nothing is built in its place.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from folio.bootstrap.chat import ChatWiring
from folio.bootstrap.conversations import ConversationWiring
from folio.bootstrap.library import LibraryWiring
from folio.bootstrap.serving import ServingWiring
from folio.bootstrap.storage import StorageWiring
from folio.bootstrap.sync import SyncWiring
from folio.bootstrap.users import UsersWiring
from folio.config import Settings, load_settings

if TYPE_CHECKING:
    from folio.agent.guardrail import Guardrail
    from folio.agent.tools import ToolRegistry
    from folio.app.search import SearchBook
    from folio.domain.ports import ChatProvider, Embedder, UnitOfWorkFactory
    from folio.domain.telemetry import Telemetry


def _utcnow() -> datetime:
    return datetime.now(UTC)


class Container(
    StorageWiring,
    LibraryWiring,
    ConversationWiring,
    ChatWiring,
    UsersWiring,
    SyncWiring,
    ServingWiring,
):
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
        "book_files",
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
