"""Conversations as plain JSON files: one ``<conversation id>.json`` per conversation (seed 003).

Each file holds the conversation, its messages and its turns, and every turn rewrites it: the store
is for small libraries (SQLite is the default), and a conversation holds at most
``MAX_MESSAGES_PER_FILE`` messages here. Invariants:

- Every read goes to disk; nothing is cached between units of work, so another process's writes
  are seen at once. Files are replaced atomically (temporary file + ``os.replace``), so a reader
  never sees half a file and needs no lock.
- A unit of work stages its changes as operations. ``commit()`` takes the directory lock (when it
  creates, saves or deletes a conversation) and the lock of every conversation it touches,
  re-reads those files, replays the operations on what is on disk, and writes the files only when
  all of them apply. So a rename committed meanwhile is kept (a ``save()`` merges the fields it
  changed into what is on disk), and a turn whose number another writer took meanwhile is
  refused with ``ConversationError(CONFLICT)``: the writer retries with the next number (we
  detect rather than renumber, so the SQLite and file stores behave alike).
- A unit of work is atomic per conversation; one that touches several conversations checks them
  all before writing any, but a crash while writing them may leave some written.
- A corrupt file raises ``ConversationError(INVALID_STATE)`` naming the file; listing skips it
  with a warning so that the other conversations stay usable.

File plumbing (atomic writes, locks, the file format) is in ``json.files``; the encoding of domain
objects in ``conversation_codec``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Self

from folio.adapters.storage.json.files import (
    LOCK_TIMEOUT_S,
    ConversationDoc,
    ConversationFiles,
    not_found,
    ordered_messages,
)
from folio.domain.conversations import ChatMessage, Conversation, Turn, validate_title
from folio.domain.errors import ConversationError, ConversationErrorCode

log = logging.getLogger(__name__)


# --- the operations a unit of work replays on a conversation file ---------------------------------
Op = Callable[[ConversationDoc | None], ConversationDoc | None]


def _existing(doc: ConversationDoc | None, conversation_id: str) -> ConversationDoc:
    if doc is None:
        raise not_found(conversation_id)
    return doc


def _op_save(c: Conversation, base: Conversation | None) -> Op:
    """Upsert. Replayed on a file changed meanwhile, it is a three-way merge against ``base`` (what
    this unit of work had read): fields it did not change keep the other writer's value."""

    def apply(doc: ConversationDoc | None) -> ConversationDoc:
        if doc is None:
            return ConversationDoc(c)
        if base is None:
            return replace(doc, conversation=c)
        theirs = doc.conversation
        merged = Conversation(
            c.id,
            c.book_id if c.book_id != base.book_id else theirs.book_id,
            c.title if c.title != base.title else theirs.title,
            c.created_at if c.created_at != base.created_at else theirs.created_at,
            max(c.updated_at, theirs.updated_at),
        )
        return replace(doc, conversation=merged)

    return apply


def _op_title(cid: str, title: str) -> Op:
    def apply(doc: ConversationDoc | None) -> ConversationDoc:
        d = _existing(doc, cid)
        return replace(d, conversation=replace(d.conversation, title=title, auto_title=False))

    return apply


# Every turn rewrites its conversation's whole file: the store is for small libraries. Past this
# many messages a turn would cost seconds (100,000 messages: 20 s), so it is refused instead.
MAX_MESSAGES_PER_FILE = 5_000


def _op_messages(cid: str, batch: tuple[ChatMessage, ...], limit: int) -> Op:
    def apply(doc: ConversationDoc | None) -> ConversationDoc:
        d = _existing(doc, cid)
        if len(d.messages) + len(batch) > limit:
            raise ConversationError(
                f"Conversation {cid} is full: the JSON conversation store (for small libraries:"
                f" each turn rewrites the conversation's file) keeps at most"
                f" {limit} messages in one conversation. Start a new one, or use"
                " the default SQLite store (unset FOLIO_CONVERSATION_STORE)",
                code=ConversationErrorCode.INVALID_STATE,
            )
        taken = {(m.turn_number, m.seq) for m in d.messages}
        for m in batch:
            if (m.turn_number, m.seq) in taken:
                raise ConversationError(
                    f"Message {m.seq} of turn {m.turn_number} of {cid} already exists",
                    code=ConversationErrorCode.CONFLICT,
                )
            taken.add((m.turn_number, m.seq))
        latest = max([d.conversation.updated_at, *(m.created_at for m in batch)])
        return replace(
            d, messages=d.messages + batch, conversation=replace(d.conversation, updated_at=latest)
        )

    return apply


def _op_turn(turn: Turn) -> Op:
    def apply(doc: ConversationDoc | None) -> ConversationDoc:
        d = _existing(doc, turn.conversation_id)
        if any(t.turn_number == turn.turn_number for t in d.turns):
            raise ConversationError(
                f"Turn {turn.turn_number} of {turn.conversation_id} already exists",
                code=ConversationErrorCode.CONFLICT,
            )
        return replace(d, turns=(*d.turns, turn))

    return apply


def _op_clear_messages(cid: str) -> Op:
    return lambda doc: None if doc is None else replace(doc, messages=())


def _op_delete(cid: str) -> Op:
    def apply(doc: ConversationDoc | None) -> None:
        _existing(doc, cid)
        return None

    return apply


# --- the store ------------------------------------------------------------------------------------
class JsonConversationStore:
    """A directory of conversation files; ``unit_of_work()`` is the ``UnitOfWorkFactory``."""

    def __init__(
        self,
        directory: Path,
        *,
        lock_timeout: float = LOCK_TIMEOUT_S,
        max_messages: int = MAX_MESSAGES_PER_FILE,
    ) -> None:
        self.directory = Path(directory)
        self._files = ConversationFiles(self.directory, lock_timeout=lock_timeout)
        self._max_messages = max_messages

    def unit_of_work(self, *, read_only: bool = False) -> JsonUnitOfWork:
        """``read_only`` changes nothing here: writes are staged and applied at the commit."""
        return JsonUnitOfWork(self._files, max_messages=self._max_messages)


# --- the unit of work and its repositories --------------------------------------------------------
@dataclass
class _Staging:
    docs: dict[str, ConversationDoc | None] = field(default_factory=dict)
    ops: dict[str, list[Op]] = field(default_factory=dict)
    structural: bool = False  # creates, saves or deletes a conversation: needs the directory lock


class JsonUnitOfWork:
    """Stages operations; ``commit()`` replays them on the files under the locks (see above)."""

    def __init__(
        self, files: ConversationFiles, *, max_messages: int = MAX_MESSAGES_PER_FILE
    ) -> None:
        self._files = files
        self.max_messages = max_messages
        self._staging = _Staging()
        self.conversations = _Conversations(self)
        self.messages = _Messages(self)
        self.turns = _Turns(self)

    def __enter__(self) -> Self:
        self._staging = _Staging()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.rollback()

    def rollback(self) -> None:
        self._staging = _Staging()

    def commit(self) -> None:
        staging = self._staging
        with contextlib.ExitStack() as locks:
            if staging.structural:
                locks.enter_context(self._files.directory_lock())
            for cid in sorted(staging.ops):
                locks.enter_context(self._files.conversation_lock(cid))
            results: dict[str, ConversationDoc | None] = {}
            for cid, ops in staging.ops.items():
                doc = self._files.read(cid)
                for op in ops:
                    doc = op(doc)
                results[cid] = doc
            for cid, result in results.items():
                if result is None:
                    self._files.remove(cid)
                else:
                    self._files.write(result)
        self._staging = _Staging()

    # --- used by the repositories ---
    def current(self, conversation_id: str) -> ConversationDoc | None:
        if conversation_id in self._staging.docs:
            return self._staging.docs[conversation_id]
        return self._files.read(conversation_id)

    def stage(
        self, conversation_id: str, op: Op, *, structural: bool = False
    ) -> ConversationDoc | None:
        self._files.path_for(conversation_id)  # rejects ids that cannot be file names
        result = op(self.current(conversation_id))
        self._staging.docs[conversation_id] = result
        self._staging.ops.setdefault(conversation_id, []).append(op)
        self._staging.structural = self._staging.structural or structural
        return result

    def all_docs(self) -> list[ConversationDoc]:
        with self._files.directory_lock():
            ids = set(self._files.ids())
        ids |= set(self._staging.docs)
        docs = []
        for cid in sorted(ids):
            try:
                doc = self.current(cid)
            except ConversationError as e:
                log.warning("skipping conversation %s: %s", cid, e)
                continue
            if doc is not None:
                docs.append(doc)
        return docs


class _Conversations:
    def __init__(self, uow: JsonUnitOfWork) -> None:
        self._u = uow

    def save(self, conversation: Conversation) -> None:
        current = self._u.current(conversation.id)
        base = None if current is None else current.conversation
        self._u.stage(conversation.id, _op_save(conversation, base), structural=True)

    def get(self, conversation_id: str) -> Conversation:
        return _existing(self._u.current(conversation_id), conversation_id).conversation

    def get_by_book(self, book_id: str) -> list[Conversation]:
        return [c for c in self.list_all() if c.book_id == book_id]

    def list_all(self) -> list[Conversation]:
        return _most_recent_first([d.conversation for d in self._u.all_docs()])

    def delete(self, conversation_id: str) -> None:
        self._u.stage(conversation_id, _op_delete(conversation_id), structural=True)

    def update_title(self, conversation_id: str, title: str) -> Conversation:
        doc = self._u.stage(conversation_id, _op_title(conversation_id, validate_title(title)))
        return _existing(doc, conversation_id).conversation


def _most_recent_first(conversations: list[Conversation]) -> list[Conversation]:
    conversations.sort(key=lambda c: c.id)
    conversations.sort(key=lambda c: (c.updated_at, c.created_at), reverse=True)
    return conversations


class _Messages:
    def __init__(self, uow: JsonUnitOfWork) -> None:
        self._u = uow

    def save(self, message: ChatMessage) -> None:
        self.save_batch([message])

    def save_batch(self, messages: Sequence[ChatMessage]) -> None:
        by_conversation: dict[str, list[ChatMessage]] = {}
        for m in messages:
            by_conversation.setdefault(m.conversation_id, []).append(m)
        for cid, batch in by_conversation.items():
            self._u.stage(cid, _op_messages(cid, tuple(batch), self._u.max_messages))

    def get_by_conversation(self, conversation_id: str) -> list[ChatMessage]:
        doc = self._u.current(conversation_id)
        return [] if doc is None else ordered_messages(doc.messages)

    def delete_by_conversation(self, conversation_id: str) -> None:
        self._u.stage(conversation_id, _op_clear_messages(conversation_id))

    def last_turn_number(self, conversation_id: str) -> int:
        doc = self._u.current(conversation_id)
        if doc is None:
            return 0
        numbers = [m.turn_number for m in doc.messages] + [t.turn_number for t in doc.turns]
        return max(numbers, default=0)


class _Turns:
    def __init__(self, uow: JsonUnitOfWork) -> None:
        self._u = uow

    def save(self, turn: Turn) -> None:
        self._u.stage(turn.conversation_id, _op_turn(turn))

    def get_by_conversation(self, conversation_id: str) -> list[Turn]:
        doc = self._u.current(conversation_id)
        return [] if doc is None else sorted(doc.turns, key=lambda t: t.turn_number)
