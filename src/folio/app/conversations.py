"""Conversation management: create, list, show, resolve, rename, delete, export and import.

Every read and write goes through a unit of work from the injected factory and nothing is cached,
so what a caller sees is what is stored, whichever process wrote it. The chat turn itself
(``app/chat.py``) writes messages and turns; this module never does except when importing. The
export formats (JSON schema and Markdown) live in ``app/conversation_export.py``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from folio.app.conversation_export import (
    BookRef,
    from_export,
    parse_export,
    render_markdown,
    to_export,
)
from folio.app.ids import ambiguous_prefix, ids_starting
from folio.app.writes import write
from folio.domain.books import Book
from folio.domain.conversations import (
    Conversation,
    ConversationDetail,
    ConversationMatch,
    ConversationSummary,
    Turn,
    match_snippet,
    search_words,
    validate_title,
)
from folio.domain.errors import BookError, ConversationError, ConversationErrorCode
from folio.domain.llm import PromptMessage, PromptRole
from folio.domain.ports import BookRepository, ConversationUnitOfWork, UnitOfWorkFactory

PLACEHOLDER_TITLE = "New conversation"
_MAX_CANDIDATES = 5


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _new_id() -> str:
    return uuid.uuid4().hex


class Conversations:
    """The conversation use cases. ``clock`` and ``new_id`` are injectable for tests."""

    def __init__(
        self,
        uow: UnitOfWorkFactory,
        books: BookRepository,
        *,
        clock: Callable[[], datetime] = _utcnow,
        new_id: Callable[[], str] = _new_id,
        max_import_messages: int = 20_000,
    ) -> None:
        self._uow = uow
        self._books = books
        self._max_import_messages = max_import_messages
        self._clock = clock
        self._new_id = new_id

    def create(self, book_id: str, title: str | None = None) -> Conversation:
        """A new, empty conversation about a book (``BookError(NOT_FOUND)`` if there is none).
        Without a title it is called ``PLACEHOLDER_TITLE`` and its first question titles it
        (``auto_title``); a title the reader gives is kept, whatever it is."""
        self._books.get(book_id)
        now = self._clock()
        name = PLACEHOLDER_TITLE if title is None else validate_title(title)
        conversation = Conversation(
            self._new_id(), book_id, name, now, now, auto_title=title is None
        )

        def store(uow: ConversationUnitOfWork) -> None:
            uow.conversations.save(conversation)
            uow.commit()

        write(self._uow, store)
        return conversation

    def for_question(self, book: Book, ref: str | None = None, *, new: bool = False) -> str:
        """The id of the conversation a question about ``book`` goes to: a new one with ``new``;
        ``ref`` (an id or unique prefix) when it is about ``book``; else the book's latest; else a
        new one. ``ConversationError``: ``NOT_FOUND`` for a ``ref`` that is no conversation about
        ``book``, ``AMBIGUOUS`` for a prefix of several."""
        if new:
            return self.create(book.id).id
        if ref:
            try:
                found: Conversation | None = self.resolve(ref)
            except ConversationError as e:
                if not e.is_not_found:
                    raise  # an ambiguous prefix names the candidates
                found = None
            if found is None or found.book_id != book.id:
                raise ConversationError(
                    f"No conversation {ref!r} about {book.title!r}: ask without "
                    "conversation_id to continue this book's latest one",
                    code=ConversationErrorCode.NOT_FOUND,
                )
            return found.id
        latest = self.summaries(book.id)
        return latest[0].conversation.id if latest else self.create(book.id).id

    def summaries(self, book_id: str | None = None) -> list[ConversationSummary]:
        """All conversations (or a book's), most recent activity first, with their number of
        turns (turns are numbered 1..n without gaps, so the last number is the count)."""
        titles = {b.id: b.title for b in self._books.list()}
        with self._uow(read_only=True) as uow:
            found = (
                uow.conversations.list_all()
                if book_id is None
                else uow.conversations.get_by_book(book_id)
            )
            counts = [uow.messages.last_turn_number(c.id) for c in found]
        return [
            ConversationSummary(c, n, titles.get(c.book_id))
            for c, n in zip(found, counts, strict=True)
        ]

    def search(
        self, text: str, *, book_id: str | None = None, limit: int = 50
    ) -> list[ConversationMatch]:
        """The reader's questions and folio's answers that contain every word of ``text``
        (case-insensitive), across all conversations (or a book's): most recently active
        conversation first, then in turn order; at most ``limit``."""
        words = search_words(text)
        titles = {b.id: b.title for b in self._books.list()}
        found: list[ConversationMatch] = []
        with self._uow(read_only=True) as uow:
            conversations = (
                uow.conversations.list_all()
                if book_id is None
                else uow.conversations.get_by_book(book_id)
            )
            for conversation in conversations:
                for stored in uow.messages.get_by_conversation(conversation.id):
                    role = stored.message.role
                    if role not in (PromptRole.USER, PromptRole.ASSISTANT):
                        continue
                    hit = match_snippet(stored.message.content, words)
                    if hit is None:
                        continue
                    snippet, spans = hit
                    found.append(
                        ConversationMatch(
                            conversation, titles.get(conversation.book_id),
                            stored.turn_number, role, snippet, spans,
                        )
                    )  # fmt: skip
                    if len(found) >= limit:
                        return found
        return found

    def seed_exchanges(
        self, conversation_id: str, exchanges: Sequence[tuple[str, str]], *, origin: str
    ) -> None:
        """Store (question, answer) exchanges held elsewhere (a chat client's own history, an
        evaluation's reference answers) as the next turns of the conversation, in one unit of
        work, so that a follow-up reads them like any history. They searched and cite nothing;
        their turn records say where they came from (``strategy=origin``)."""
        now = self._clock()

        def store(uow: ConversationUnitOfWork) -> None:
            conversation = uow.conversations.get(conversation_id)
            last = uow.messages.last_turn_number(conversation_id)
            for question, answer in exchanges:
                recorded = conversation.record_turn(
                    last_turn_number=last,
                    question=question,
                    replies=(PromptMessage.assistant(answer),),
                    facts=Turn(conversation_id, 0, now, strategy=origin),
                    now=now,
                    new_id=self._new_id,
                )
                uow.messages.save_batch(list(recorded.messages))
                uow.turns.save(recorded.turn)
                conversation, last = recorded.conversation, last + 1
            uow.conversations.save(conversation)
            uow.commit()

        write(self._uow, store, also_retry=(ConversationErrorCode.CONFLICT,))

    def get(self, conversation_id: str) -> ConversationDetail:
        with self._uow(read_only=True) as uow:
            conversation = uow.conversations.get(conversation_id)
            messages = tuple(uow.messages.get_by_conversation(conversation_id))
            turns = tuple(uow.turns.get_by_conversation(conversation_id))
        book = self._book_or_none(conversation.book_id)
        return ConversationDetail(conversation, messages, turns, book.title if book else None)

    def find(self, conversation_id: str) -> Conversation:
        """The conversation without its history (``ConversationError(NOT_FOUND)``)."""
        with self._uow(read_only=True) as uow:
            return uow.conversations.get(conversation_id)

    def resolve(self, ref: str) -> Conversation:
        """A conversation by full id or unique id prefix (``ConversationError``: ``NOT_FOUND``,
        or ``AMBIGUOUS`` naming the candidates and how many characters tell them apart)."""
        ref = ref.strip()
        with self._uow(read_only=True) as uow:
            try:
                return uow.conversations.get(ref)
            except ConversationError as e:
                if e.code != ConversationErrorCode.NOT_FOUND:
                    raise
            everyone = {c.id: c for c in uow.conversations.list_all()} if ref else {}
        matches = [everyone[i] for i in ids_starting(ref, everyone)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise ConversationError(
                f"No conversation {ref!r}", code=ConversationErrorCode.NOT_FOUND, ref=ref
            )
        ids = [c.id for c in matches]
        shown = ", ".join(f"{c.id[:12]} ({c.title})" for c in matches[:_MAX_CANDIDATES])
        more = (
            f" and {len(matches) - _MAX_CANDIDATES} more" if len(matches) > _MAX_CANDIDATES else ""
        )
        raise ConversationError(
            f"{ambiguous_prefix(ref, 'conversation', ids)}: {shown}{more}",
            code=ConversationErrorCode.AMBIGUOUS,
            candidates=ids,
        )

    def rename(self, conversation_id: str, title: str) -> Conversation:
        """Raises ``ConversationError(INVALID_INPUT)`` for an empty title."""
        name = validate_title(title)

        def store(uow: ConversationUnitOfWork) -> Conversation:
            renamed = uow.conversations.update_title(conversation_id, name)
            uow.commit()
            return renamed

        return write(self._uow, store)

    def delete(self, conversation_id: str) -> None:
        def store(uow: ConversationUnitOfWork) -> None:
            uow.conversations.delete(conversation_id)
            uow.commit()

        write(self._uow, store)

    def delete_for_book(self, book_id: str) -> int:
        """Delete every conversation of a book (stores without a database cascade need this).
        Returns how many were deleted."""

        def store(uow: ConversationUnitOfWork) -> int:
            doomed = uow.conversations.get_by_book(book_id)
            for c in doomed:
                uow.conversations.delete(c.id)
            uow.commit()
            return len(doomed)

        return write(self._uow, store)

    # --- export and import -------------------------------------------------------------------
    def export_json(self, conversation_id: str) -> dict[str, Any]:
        """Everything, for machines: see ``ConversationExport``."""
        detail = self.get(conversation_id)
        book = self._book_or_none(detail.conversation.book_id)
        return to_export(detail, book).model_dump(mode="json")

    def export_markdown(self, conversation_id: str) -> str:
        """For people: title, book, dates, then each turn's question and answer with citations."""
        detail = self.get(conversation_id)
        return render_markdown(detail, self._book_or_none(detail.conversation.book_id))

    def import_json(self, data: object) -> Conversation:
        """Store an exported conversation under new ids. The book is matched by id, else by
        content hash. Raises ``ConversationError(INVALID_INPUT)`` for malformed data and
        ``BookError(NOT_FOUND)`` when the book is not in the library."""
        messages = data.get("messages") if isinstance(data, dict) else None
        if isinstance(messages, list) and len(messages) > self._max_import_messages:
            raise ConversationError(
                f"A conversation import has at most {self._max_import_messages} messages (got"
                f" {len(messages)}; setting max_import_messages, FOLIO_MAX_IMPORT_MESSAGES)",
                code=ConversationErrorCode.INVALID_INPUT,
            )
        exported = parse_export(data)
        book = self._match_book(exported.book)
        conversation, messages, turns = from_export(exported, book.id, self._new_id)

        def store(uow: ConversationUnitOfWork) -> None:
            uow.conversations.save(conversation)
            uow.messages.save_batch(messages)
            for turn in turns:
                uow.turns.save(turn)
            uow.commit()

        write(self._uow, store)
        return conversation

    def _match_book(self, ref: BookRef) -> Book:
        book = self._book_or_none(ref.id) or self._books.find_by_hash(ref.content_hash)
        if book is None:
            raise BookError(
                f"The book of this conversation, {ref.title!r}, is not in the library "
                "(matched by id and by content); add it first"
            )
        return book

    def _book_or_none(self, book_id: str) -> Book | None:
        try:
            return self._books.get(book_id)
        except BookError:
            return None
