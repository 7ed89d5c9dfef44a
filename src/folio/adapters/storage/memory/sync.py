"""An in-memory ``SyncRepository`` for tests and demos, with the SQL store's behaviour."""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from folio.domain.ports import SyncAccount
from folio.domain.sync import DocumentIds, Fragment, PushedProgress
from folio.domain.users import UserError, UserErrorCode


class InMemorySyncStore:
    def __init__(self) -> None:
        self._accounts: dict[str, SyncAccount] = {}  # by user id
        self._documents: dict[str, tuple[DocumentIds, list[Fragment]]] = {}
        self._progress: dict[tuple[str, str], PushedProgress] = {}

    def save_account(self, account: SyncAccount) -> None:
        taken = self.account(account.username)
        if taken is not None and taken.user_id != account.user_id:
            raise UserError(
                f"Another user has the sync login {account.username!r}",
                code=UserErrorCode.DUPLICATE,
            )
        self._accounts[account.user_id] = account

    def account(self, username: str) -> SyncAccount | None:
        return next((a for a in self._accounts.values() if a.username == username), None)

    def save_documents(self, book_id: str, ids: DocumentIds, fragments: Sequence[Fragment]) -> None:
        self._documents[book_id] = (ids, list(fragments))

    def books_for_document(self, document: str) -> builtins.list[str]:
        return sorted(
            book_id
            for book_id, (ids, _) in self._documents.items()
            if document in (ids.partial_md5, ids.filename_md5)
        )

    def books_for_structure(self, structure_md5: str) -> builtins.list[str]:
        return sorted(
            book_id
            for book_id, (ids, _) in self._documents.items()
            if structure_md5 and ids.structure_md5 == structure_md5
        )

    def documents_of(self, book_id: str) -> DocumentIds | None:
        found = self._documents.get(book_id)
        return found[0] if found else None

    def fragments_of(self, book_id: str) -> builtins.list[Fragment]:
        found = self._documents.get(book_id)
        return list(found[1]) if found else []

    def save_progress(self, user_id: str, progress: PushedProgress) -> None:
        self._progress[(user_id, progress.document)] = progress

    def progress(self, user_id: str, document: str) -> PushedProgress | None:
        return self._progress.get((user_id, document))

    def progress_for_structure(self, user_id: str, structure_md5: str) -> PushedProgress | None:
        found = [
            p
            for (user, _), p in self._progress.items()
            if user == user_id and structure_md5 and p.described.structure_md5 == structure_md5
        ]
        return max(found, key=lambda p: p.pushed_at, default=None)
