"""Removing a book removes its kept file: ``BooksKeepingFiles`` wraps the library's
``BookRepository`` so that every way a book is deleted (the CLI, the API, a user's scope) also
releases its file, which the store deletes once no book of the library has its content."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # `folio books` lists through it without loading the ports (numpy)
    from folio.domain.book_files import BookFileStore
    from folio.domain.ports import BookRepository


class BooksKeepingFiles:
    """``inner`` (a ``BookRepository``) whose ``delete`` releases the book's file in ``files``
    after the book is gone; every other call goes to ``inner`` unchanged."""

    def __init__(self, inner: BookRepository, files: BookFileStore) -> None:
        self._inner = inner
        self._files = files

    def delete(self, book_id: str) -> None:
        content_hash = self._inner.get(book_id).content_hash
        self._inner.delete(book_id)
        self._files.release(content_hash)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
