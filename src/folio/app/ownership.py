"""Ownership: one user's view of the library and the conversations.

``OwnedBooks`` and ``owned_unit_of_work`` wrap the repositories so that every use case built on
them (Library, Conversations, ChatWithBook) sees only the user's own books and conversations: a
resource of another user is ``NOT_FOUND``, exactly like one that does not exist, never a
"forbidden" that would confirm it exists. What a user creates is recorded as theirs.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any, Self

from folio.domain.books import Book, Chunk, ReadingPosition, StoredSentences
from folio.domain.conversations import Conversation
from folio.domain.errors import BookError, BookErrorCode, ConversationError, IngestError
from folio.domain.lexicon import Lexicon
from folio.domain.ports import (
    BookRepository,
    ConversationUnitOfWork,
    EditionRepository,
    OwnershipRepository,
    UnitOfWorkFactory,
    Vectors,
)
from folio.domain.users import ResourceKind

BOOK, CONVERSATION = ResourceKind.BOOK, ResourceKind.CONVERSATION


class OwnedBooks:
    """A ``BookRepository`` limited to ``user_id``'s books."""

    def __init__(self, inner: BookRepository, owners: OwnershipRepository, user_id: str) -> None:
        self._inner = inner
        self._owners = owners
        self.user_id = user_id

    def _check(self, book_id: str) -> None:
        if self._owners.owner_of(BOOK, book_id) != self.user_id:
            raise BookError(f"No book {book_id!r}", code=BookErrorCode.NOT_FOUND)

    def owns(self, book_id: str) -> bool:
        return self._owners.owner_of(BOOK, book_id) == self.user_id

    def add(
        self,
        book: Book,
        text: str,
        chunks: Sequence[Chunk],
        vectors: Vectors | None = None,
        *,
        lexicon: Lexicon | None = None,
    ) -> None:
        self._owners.set_owner(BOOK, book.id, self.user_id)
        try:
            self._inner.add(book, text, chunks, vectors, lexicon=lexicon)
        except BaseException:
            self._owners.forget(BOOK, book.id)
            raise

    def replace_text(
        self, book: Book, text: str, chunks: Sequence[Chunk], *, lexicon: Lexicon | None = None
    ) -> None:
        self._check(book.id)
        if not isinstance(self._inner, EditionRepository):
            raise IngestError("This library cannot take a new edition of a book")
        self._inner.replace_text(book, text, chunks, lexicon=lexicon)

    def add_vectors(self, book_id: str, chunk_ids: Sequence[str], vectors: Vectors) -> None:
        self._check(book_id)
        self._inner.add_vectors(book_id, chunk_ids, vectors)

    def chunks_without_vectors(self, book_id: str) -> builtins.list[Chunk]:
        self._check(book_id)
        return self._inner.chunks_without_vectors(book_id)

    def add_sentence_vectors(
        self, book_id: str, chunk_ids: Sequence[str], vectors: Sequence[Vectors]
    ) -> None:
        self._check(book_id)
        self._inner.add_sentence_vectors(book_id, chunk_ids, vectors)

    def sentence_vectors(
        self, book_id: str, chunk_ids: Sequence[str]
    ) -> dict[str, StoredSentences]:
        self._check(book_id)
        return self._inner.sentence_vectors(book_id, chunk_ids)

    def chunks_without_sentence_vectors(self, book_id: str) -> builtins.list[Chunk]:
        self._check(book_id)
        return self._inner.chunks_without_sentence_vectors(book_id)

    def get(self, book_id: str) -> Book:
        self._check(book_id)
        return self._inner.get(book_id)

    def list(self) -> builtins.list[Book]:
        books = self._inner.list()
        owners = self._owners.owners(BOOK, [b.id for b in books])
        return [b for b in books if owners[b.id] == self.user_id]

    def find_by_hash(self, content_hash: str) -> Book | None:
        """The user's own book with this content: another user's copy is no answer (it would
        tell this user that someone on the server holds the file)."""
        return next((b for b in self.list() if b.content_hash == content_hash), None)

    def delete(self, book_id: str) -> None:
        self._check(book_id)
        self._inner.delete(book_id)
        self._owners.forget(BOOK, book_id)

    def get_text(self, book_id: str, start: int = 0, end: int | None = None) -> str:
        self._check(book_id)
        return self._inner.get_text(book_id, start, end)

    def set_position(self, book_id: str, position: ReadingPosition) -> Book:
        self._check(book_id)
        return self._inner.set_position(book_id, position)

    def update_details(self, book_id: str, *, title: str, author: str | None) -> Book:
        self._check(book_id)
        return self._inner.update_details(book_id, title=title, author=author)

    def set_series(self, book_id: str, *, series: str | None, series_index: float | None) -> Book:
        self._check(book_id)
        return self._inner.set_series(book_id, series=series, series_index=series_index)

    def chapter_recap(self, book_id: str, chapter_index: int) -> str | None:
        self._check(book_id)
        recap: str | None = self._inner.chapter_recap(book_id, chapter_index)
        return recap

    def save_chapter_recap(self, book_id: str, chapter_index: int, text: str, model: str) -> None:
        self._check(book_id)
        self._inner.save_chapter_recap(book_id, chapter_index, text, model)

    def lexicon(self, book_id: str) -> Lexicon | None:
        self._check(book_id)
        return self._inner.lexicon(book_id)

    def save_lexicon(self, book_id: str, lexicon: Lexicon) -> None:
        self._check(book_id)
        self._inner.save_lexicon(book_id, lexicon)


class _OwnedConversations:
    def __init__(
        self, inner: Any, owners: OwnershipRepository, user_id: str, created: builtins.list[str]
    ) -> None:
        self._inner = inner
        self._owners = owners
        self._user_id = user_id
        self._created = created  # recorded as the user's when the unit of work commits

    def _check(self, conversation_id: str) -> None:
        if self._owners.owner_of(CONVERSATION, conversation_id) != self._user_id:
            raise ConversationError(f"No conversation {conversation_id!r}")

    def _mine(self, found: builtins.list[Conversation]) -> builtins.list[Conversation]:
        owners = self._owners.owners(CONVERSATION, [c.id for c in found])
        return [c for c in found if owners[c.id] == self._user_id]

    def save(self, conversation: Conversation) -> None:
        owner = self._owners.owners(CONVERSATION, [conversation.id])[conversation.id]
        if owner != self._user_id:
            # New (no record means "local") or someone else's: record it as ours only if new.
            try:
                self._inner.get(conversation.id)
            except ConversationError:
                self._created.append(conversation.id)
            else:
                raise ConversationError(f"No conversation {conversation.id!r}")
        self._inner.save(conversation)

    def get(self, conversation_id: str) -> Conversation:
        self._check(conversation_id)
        return self._inner.get(conversation_id)  # type: ignore[no-any-return]

    def get_by_book(self, book_id: str) -> builtins.list[Conversation]:
        return self._mine(self._inner.get_by_book(book_id))

    def list_all(self) -> builtins.list[Conversation]:
        return self._mine(self._inner.list_all())

    def delete(self, conversation_id: str) -> None:
        self._check(conversation_id)
        self._inner.delete(conversation_id)

    def update_title(self, conversation_id: str, title: str) -> Conversation:
        self._check(conversation_id)
        return self._inner.update_title(conversation_id, title)  # type: ignore[no-any-return]


class _OwnedUnitOfWork:
    """Ownership records are written after the conversation's own commit (the store holds its
    write lock until then); in between, the new conversation is not visible to its owner yet."""

    def __init__(self, inner: ConversationUnitOfWork, owners: OwnershipRepository, user: str):
        self._inner = inner
        self._owners = owners
        self._user = user
        self._created: builtins.list[str] = []

    @property
    def conversations(self) -> _OwnedConversations:
        return _OwnedConversations(
            self._inner.conversations, self._owners, self._user, self._created
        )

    @property
    def messages(self) -> Any:
        return self._inner.messages

    @property
    def turns(self) -> Any:
        return self._inner.turns

    def __enter__(self) -> Self:
        self._inner.__enter__()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._inner.__exit__(*exc_info)

    def commit(self) -> None:
        self._inner.commit()
        for conversation_id in self._created:
            self._owners.set_owner(CONVERSATION, conversation_id, self._user)
        self._created.clear()

    def rollback(self) -> None:
        self._created.clear()
        self._inner.rollback()


def owned_unit_of_work(
    inner: UnitOfWorkFactory, owners: OwnershipRepository, user_id: str
) -> UnitOfWorkFactory:
    """A unit-of-work factory whose conversations are limited to ``user_id``'s."""

    def factory(*, read_only: bool = False) -> ConversationUnitOfWork:
        return _OwnedUnitOfWork(inner(read_only=read_only), owners, user_id)

    return factory
