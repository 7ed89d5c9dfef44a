"""Conversations as plain JSON files: one ``<conversation id>.json`` per conversation (seed 003).

Each file holds the conversation, its messages and its turns. Invariants:

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

The encoding functions here (``message_to_dict`` ...) also serve the SQLite store's JSON columns.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from filelock import FileLock, Timeout

from folio.domain.conversations import (
    ChatMessage,
    Conversation,
    MessageRole,
    Source,
    Turn,
    validate_title,
)
from folio.domain.errors import ConversationError, ConversationErrorCode
from folio.domain.llm import ToolInvocation

log = logging.getLogger(__name__)

FILE_FORMAT = "folio.conversation-file"
FILE_VERSION = 1
LOCK_TIMEOUT_S = 30.0
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


# --- encoding (shared with the SQLite store) ------------------------------------------------------
def encode_datetime(value: datetime) -> str:
    """UTC, fixed width (microseconds always present) so that string order is time order. A naive
    datetime is taken to be UTC."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="microseconds")


def decode_datetime(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def invocation_to_dict(inv: ToolInvocation) -> dict[str, Any]:
    return {
        "tool_name": inv.tool_name,
        "tool_use_id": inv.tool_use_id,
        "arguments": dict(inv.arguments),
        "parse_error": inv.parse_error,
    }


def invocation_from_dict(d: Mapping[str, Any]) -> ToolInvocation:
    return ToolInvocation(
        d["tool_name"], d["tool_use_id"], dict(d.get("arguments") or {}), d.get("parse_error")
    )


def source_to_dict(s: Source) -> dict[str, Any]:
    return {
        "chunk_id": s.chunk_id,
        "chapter": s.chapter,
        "page_start": s.page_start,
        "page_end": s.page_end,
        "char_start": s.char_start,
        "char_end": s.char_end,
        "quote": s.quote,
        "score": s.score,
    }


def source_from_dict(d: Mapping[str, Any]) -> Source:
    return Source(
        d["chunk_id"], d.get("chapter"), str(d["page_start"]), str(d["page_end"]),
        int(d["char_start"]), int(d["char_end"]), d.get("quote", ""), float(d.get("score", 0.0)),
    )  # fmt: skip


def conversation_to_dict(c: Conversation) -> dict[str, Any]:
    return {
        "id": c.id,
        "book_id": c.book_id,
        "title": c.title,
        "created_at": encode_datetime(c.created_at),
        "updated_at": encode_datetime(c.updated_at),
    }


def conversation_from_dict(d: Mapping[str, Any]) -> Conversation:
    return Conversation(
        d["id"], d["book_id"], d["title"], decode_datetime(d["created_at"]),
        decode_datetime(d["updated_at"]),
    )  # fmt: skip


def message_to_dict(m: ChatMessage) -> dict[str, Any]:
    return {
        "id": m.id,
        "turn_number": m.turn_number,
        "seq": m.seq,
        "role": m.role.value,
        "content": m.content,
        "created_at": encode_datetime(m.created_at),
        "tool_use_id": m.tool_use_id,
        "tool_invocations": [invocation_to_dict(i) for i in m.tool_invocations],
        "tool_name": m.tool_name,
        "is_error": m.is_error,
    }


def message_from_dict(d: Mapping[str, Any], conversation_id: str) -> ChatMessage:
    return ChatMessage(
        id=d["id"],
        conversation_id=conversation_id,
        turn_number=int(d["turn_number"]),
        seq=int(d["seq"]),
        role=MessageRole(d["role"]),
        content=d["content"],
        created_at=decode_datetime(d["created_at"]),
        tool_use_id=d.get("tool_use_id"),
        tool_invocations=tuple(invocation_from_dict(i) for i in d.get("tool_invocations", [])),
        tool_name=d.get("tool_name"),
        is_error=bool(d.get("is_error", False)),
    )


def turn_to_dict(t: Turn) -> dict[str, Any]:
    return {
        "turn_number": t.turn_number,
        "created_at": encode_datetime(t.created_at),
        "queries": list(t.queries),
        "retrieval_attempts": t.retrieval_attempts,
        "sources": [source_to_dict(s) for s in t.sources],
        "reasoning_steps": list(t.reasoning_steps),
        "guardrail_score": t.guardrail_score,
        "provider": t.provider,
        "model": t.model,
        "input_tokens": t.input_tokens,
        "output_tokens": t.output_tokens,
        "llm_calls": t.llm_calls,
        "latency_ms": t.latency_ms,
        "strategy": t.strategy,
        "extra": dict(t.extra),
    }


def turn_from_dict(d: Mapping[str, Any], conversation_id: str) -> Turn:
    score = d.get("guardrail_score")
    return Turn(
        conversation_id=conversation_id,
        turn_number=int(d["turn_number"]),
        created_at=decode_datetime(d["created_at"]),
        queries=tuple(d.get("queries", [])),
        retrieval_attempts=int(d.get("retrieval_attempts", 0)),
        sources=tuple(source_from_dict(s) for s in d.get("sources", [])),
        reasoning_steps=tuple(d.get("reasoning_steps", [])),
        guardrail_score=None if score is None else float(score),
        provider=d.get("provider", ""),
        model=d.get("model", ""),
        input_tokens=int(d.get("input_tokens", 0)),
        output_tokens=int(d.get("output_tokens", 0)),
        llm_calls=int(d.get("llm_calls", 0)),
        latency_ms=float(d.get("latency_ms", 0.0)),
        strategy=d.get("strategy", ""),
        extra=dict(d.get("extra") or {}),
    )


# --- one conversation file and the operations a unit of work replays on it ------------------------
@dataclass(frozen=True, slots=True)
class _Doc:
    conversation: Conversation
    messages: tuple[ChatMessage, ...] = ()
    turns: tuple[Turn, ...] = ()


Op = Callable[["_Doc | None"], "_Doc | None"]


def _not_found(conversation_id: str) -> ConversationError:
    return ConversationError(
        f"No conversation {conversation_id!r}", code=ConversationErrorCode.NOT_FOUND
    )


def _existing(doc: _Doc | None, conversation_id: str) -> _Doc:
    if doc is None:
        raise _not_found(conversation_id)
    return doc


def _op_save(c: Conversation, base: Conversation | None) -> Op:
    """Upsert. Replayed on a file changed meanwhile, it is a three-way merge against ``base`` (what
    this unit of work had read): fields it did not change keep the other writer's value."""

    def apply(doc: _Doc | None) -> _Doc:
        if doc is None:
            return _Doc(c)
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
    def apply(doc: _Doc | None) -> _Doc:
        d = _existing(doc, cid)
        return replace(d, conversation=replace(d.conversation, title=title))

    return apply


def _op_messages(cid: str, batch: tuple[ChatMessage, ...]) -> Op:
    def apply(doc: _Doc | None) -> _Doc:
        d = _existing(doc, cid)
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
    def apply(doc: _Doc | None) -> _Doc:
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
    def apply(doc: _Doc | None) -> None:
        _existing(doc, cid)
        return None

    return apply


# --- the store: files and locks -------------------------------------------------------------------
class JsonConversationStore:
    """A directory of conversation files; ``unit_of_work()`` is the ``UnitOfWorkFactory``."""

    def __init__(self, directory: Path, *, lock_timeout: float = LOCK_TIMEOUT_S) -> None:
        self.directory = Path(directory)
        self._lock_timeout = lock_timeout

    def unit_of_work(self) -> JsonUnitOfWork:
        return JsonUnitOfWork(self)

    def path_for(self, conversation_id: str) -> Path:
        if not _SAFE_ID.match(conversation_id):
            raise _not_found(conversation_id)
        return self.directory / f"{conversation_id}.json"

    def read(self, conversation_id: str) -> _Doc | None:
        path = self.path_for(conversation_id)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        return _decode(path, text)

    def ids(self) -> list[str]:
        if not self.directory.is_dir():
            return []
        return sorted(p.stem for p in self.directory.glob("*.json") if _SAFE_ID.match(p.stem))

    def write(self, doc: _Doc) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.path_for(doc.conversation.id)
        data = {
            "format": FILE_FORMAT,
            "version": FILE_VERSION,
            "conversation": conversation_to_dict(doc.conversation),
            "messages": [message_to_dict(m) for m in _ordered_messages(doc.messages)],
            "turns": [turn_to_dict(t) for t in sorted(doc.turns, key=lambda t: t.turn_number)],
        }
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{path.stem}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, ensure_ascii=False, indent=1)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise

    def remove(self, conversation_id: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path_for(conversation_id).unlink()

    @contextlib.contextmanager
    def directory_lock(self) -> Iterator[None]:
        with self._lock("_directory"):
            yield

    @contextlib.contextmanager
    def conversation_lock(self, conversation_id: str) -> Iterator[None]:
        with self._lock(f"conversation-{conversation_id}"):
            yield

    @contextlib.contextmanager
    def _lock(self, name: str) -> Iterator[None]:
        locks = self.directory / ".locks"
        locks.mkdir(parents=True, exist_ok=True)
        try:
            with FileLock(locks / f"{name}.lock", timeout=self._lock_timeout):
                yield
        except Timeout as e:
            raise ConversationError(
                f"Another process holds the lock on {name} (waited {self._lock_timeout:g}s)",
                code=ConversationErrorCode.CONFLICT,
            ) from e


def _ordered_messages(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    return sorted(messages, key=lambda m: (m.turn_number, m.seq))


def _decode(path: Path, text: str) -> _Doc:
    try:
        data = json.loads(text)
        if data.get("format") != FILE_FORMAT or data.get("version") != FILE_VERSION:
            raise ValueError(f"not a {FILE_FORMAT} version {FILE_VERSION} file")
        conversation = conversation_from_dict(data["conversation"])
        cid = conversation.id
        messages = tuple(message_from_dict(m, cid) for m in data["messages"])
        turns = tuple(turn_from_dict(t, cid) for t in data["turns"])
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ConversationError(
            f"Conversation file {path} is corrupt ({type(e).__name__}: {e}); "
            "move it away or restore it from a backup",
            code=ConversationErrorCode.INVALID_STATE,
            path=str(path),
        ) from e
    if path.stem != cid:
        raise ConversationError(
            f"Conversation file {path} holds conversation {cid!r}",
            code=ConversationErrorCode.INVALID_STATE,
            path=str(path),
        )
    return _Doc(conversation, messages, turns)


# --- the unit of work and its repositories --------------------------------------------------------
@dataclass
class _Staging:
    docs: dict[str, _Doc | None] = field(default_factory=dict)
    ops: dict[str, list[Op]] = field(default_factory=dict)
    structural: bool = False  # creates, saves or deletes a conversation: needs the directory lock


class JsonUnitOfWork:
    """Stages operations; ``commit()`` replays them on the files under the locks (see above)."""

    def __init__(self, store: JsonConversationStore) -> None:
        self._store = store
        self._staging = _Staging()
        self.conversations = _Conversations(self)
        self.messages = _Messages(self)
        self.turns = _Turns(self)

    def __enter__(self) -> Self:
        self._staging = _Staging()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.rollback()

    def rollback(self) -> None:
        self._staging = _Staging()

    def commit(self) -> None:
        staging = self._staging
        with contextlib.ExitStack() as locks:
            if staging.structural:
                locks.enter_context(self._store.directory_lock())
            for cid in sorted(staging.ops):
                locks.enter_context(self._store.conversation_lock(cid))
            results: dict[str, _Doc | None] = {}
            for cid, ops in staging.ops.items():
                doc = self._store.read(cid)
                for op in ops:
                    doc = op(doc)
                results[cid] = doc
            for cid, result in results.items():
                if result is None:
                    self._store.remove(cid)
                else:
                    self._store.write(result)
        self._staging = _Staging()

    # --- used by the repositories ---
    def current(self, conversation_id: str) -> _Doc | None:
        if conversation_id in self._staging.docs:
            return self._staging.docs[conversation_id]
        return self._store.read(conversation_id)

    def stage(self, conversation_id: str, op: Op, *, structural: bool = False) -> _Doc | None:
        self._store.path_for(conversation_id)  # rejects ids that cannot be file names
        result = op(self.current(conversation_id))
        self._staging.docs[conversation_id] = result
        self._staging.ops.setdefault(conversation_id, []).append(op)
        self._staging.structural = self._staging.structural or structural
        return result

    def all_docs(self) -> list[_Doc]:
        with self._store.directory_lock():
            ids = set(self._store.ids())
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
            self._u.stage(cid, _op_messages(cid, tuple(batch)))

    def get_by_conversation(self, conversation_id: str) -> list[ChatMessage]:
        doc = self._u.current(conversation_id)
        return [] if doc is None else _ordered_messages(doc.messages)

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
