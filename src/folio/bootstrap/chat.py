"""Chat: the turn use case with the strategies for its provider, and the book tools it offers.

The strategies are chosen here, never inside the use case: the offline provider has no model, so
its turns run the extractive strategy (the offline policy is imported here only); a model runs tool
use, and always-retrieve where it has no tool use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING

from folio.bootstrap.providers import make_provider

if TYPE_CHECKING:
    from datetime import datetime

    from folio.agent.guardrail import Guardrail
    from folio.agent.lexicon import Lexicons
    from folio.agent.summaries import StorySummaries
    from folio.agent.tools import ToolRegistry, ToolServices
    from folio.app.chat import ChatWithBook
    from folio.app.search import SearchBook
    from folio.bootstrap.users import UserScope
    from folio.config import Settings
    from folio.domain.ports import (
        BookRepository,
        ChatProvider,
        ChunkIndex,
        Embedder,
        HighlightRepository,
        UnitOfWorkFactory,
    )
    from folio.domain.telemetry import Telemetry


OFFLINE_WINDOW = 100  # messages of the conversation the offline policy's search query may use


class ChatWiring:
    """The chat model, the turn's strategies, guardrail and tools, and the book tools' ports."""

    if TYPE_CHECKING:
        settings: Settings
        clock: Callable[[], datetime]
        sleep: Callable[[float], None]
        _provider: ChatProvider | None

        @property
        def telemetry(self) -> Telemetry: ...
        @property
        def books(self) -> BookRepository: ...
        @property
        def chunk_index(self) -> ChunkIndex: ...
        @property
        def embedder(self) -> Embedder: ...
        @property
        def searcher(self) -> SearchBook: ...
        @property
        def conversation_uow(self) -> UnitOfWorkFactory: ...
        @property
        def highlight_store(self) -> HighlightRepository: ...
        def for_user(self, user_id: str | None) -> UserScope: ...

    def chat_provider(self, name: str | None = None, model: str | None = None) -> ChatProvider:
        """The chat model: ``name`` if given, else the override, else the configured or first
        available provider."""
        if name is None and model is None and self._provider is not None:
            return self._provider
        return make_provider(self.settings, name=name, model=model)

    @cached_property
    def guardrail(self) -> Guardrail:
        from folio.agent.guardrail import Guardrail

        mode = self.settings.guardrail
        return Guardrail(mode, searcher=self.searcher if mode == "retrieval" else None)

    @cached_property
    def lexicons(self) -> Lexicons:
        """Each book's names, stored with it at import, read once per process (people tool); the
        embedder tells the places it took for people from them."""
        from folio.agent.lexicon import Lexicons, knows_places

        return Lexicons(self.embedder if knows_places(self.embedder) else None)

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

            retrieval = OfflineStrategy(self.embedder, k=s.search_k, sentences=library)
        else:
            retrieval = ToolUseRetrievalStrategy(
                max_tool_rounds=s.max_tool_rounds, fallback=AlwaysRetrieveStrategy(k=s.search_k)
            )
            recaps_by = chat_provider
        services = self.tool_services(library, recaps_by)
        if recaps_by is not None:  # a model reads what answers of each passage found
            from folio.agent.excerpts import PassageExcerpts

            services = replace(services, excerpts=PassageExcerpts())
        return ChatWithBook(
            uow=uow,
            services=services,
            provider=chat_provider,
            tools=self.tools,
            context=RecentTurnsStrategy(
                # offline, the window only feeds the search query: it sends no model tokens
                max_messages=max(history_messages or s.history_messages, OFFLINE_WINDOW)
                if retrieval.name == "extractive"
                else history_messages or s.history_messages,
                token_budget=s.context_token_budget,
                message_chars=s.max_message_chars,
                keep_calls=retrieval.name == "extractive",  # where the subject started
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
