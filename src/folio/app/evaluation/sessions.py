"""Real chat sessions for the retrieval evaluation.

``ReplaySession`` replays a conversation through ``ChatWithBook``: the system's own answers become
the history of the next turn. With gold history, each question is asked in a fresh conversation
whose earlier turns hold the reference questions and answers instead (written through the same unit
of work as any turn), so the search is judged on the history a perfect reader would have had.
"""

from __future__ import annotations

from folio.app.chat import ChatWithBook
from folio.app.conversations import Conversations
from folio.app.evaluation.retrieval import AgentTurn
from folio.domain.ports import UnitOfWorkFactory


class ReplaySession:
    """One evaluated conversation replayed through the real chat pipeline."""

    def __init__(
        self,
        chat: ChatWithBook,
        conversations: Conversations,
        uow: UnitOfWorkFactory,
        book_id: str,
        *,
        gold_history: bool = False,
    ) -> None:
        self._chat = chat
        self._conversations = conversations
        self._uow = uow
        self._book_id = book_id
        self._gold_history = gold_history
        self._gold: list[tuple[str, str]] = []
        self._conversation_id: str | None = None

    def ask(self, question: str) -> AgentTurn:
        if self._gold_history or self._conversation_id is None:
            self._conversation_id = self._conversations.create(self._book_id, "evaluation").id
            if self._gold_history:
                self._seed(self._conversation_id)
        result = self._chat.execute(self._conversation_id, question)
        return AgentTurn(
            searches=result.searches,
            found={
                query: tuple((p.char_start, p.char_end) for p in passages)
                for query, passages in result.found
            },
            llm_calls=result.llm_calls,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
        )

    def add_gold_exchange(self, question: str, answer: str) -> None:
        self._gold.append((question, answer))

    def _seed(self, conversation_id: str) -> None:
        self._conversations.seed_exchanges(conversation_id, self._gold, origin="gold")
