"""The files of the JSON conversation store: one ``<conversation id>.json`` per conversation, and
the locks that serialise writers.

Invariants: a file is replaced atomically (temporary file, ``fsync``, ``os.replace``), so a reader
never sees half a file and needs no lock; a file name is always a safe conversation id (anything
else is ``NOT_FOUND``, never a path outside the directory); a corrupt file or one holding another
conversation raises ``ConversationError(INVALID_STATE)`` naming the file; a lock not obtained
within the timeout raises ``ConversationError(CONFLICT)``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from folio.adapters.storage.conversation_codec import (
    conversation_from_dict,
    conversation_to_dict,
    message_from_dict,
    message_to_dict,
    turn_from_dict,
    turn_to_dict,
)
from folio.domain.conversations import ChatMessage, Conversation, Turn
from folio.domain.errors import ConversationError, ConversationErrorCode

FILE_FORMAT = "folio.conversation-file"
FILE_VERSION = 1
LOCK_TIMEOUT_S = 30.0
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True, slots=True)
class ConversationDoc:
    """What one conversation file holds."""

    conversation: Conversation
    messages: tuple[ChatMessage, ...] = ()
    turns: tuple[Turn, ...] = ()


def not_found(conversation_id: str) -> ConversationError:
    return ConversationError(
        f"No conversation {conversation_id!r}", code=ConversationErrorCode.NOT_FOUND
    )


class ConversationFiles:
    """A directory of conversation files and their locks."""

    def __init__(self, directory: Path, *, lock_timeout: float = LOCK_TIMEOUT_S) -> None:
        self.directory = Path(directory)
        self._lock_timeout = lock_timeout

    def path_for(self, conversation_id: str) -> Path:
        if not _SAFE_ID.match(conversation_id):
            raise not_found(conversation_id)
        return self.directory / f"{conversation_id}.json"

    def read(self, conversation_id: str) -> ConversationDoc | None:
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

    def write(self, doc: ConversationDoc) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.path_for(doc.conversation.id)
        data = {
            "format": FILE_FORMAT,
            "version": FILE_VERSION,
            "conversation": conversation_to_dict(doc.conversation),
            "messages": [message_to_dict(m) for m in ordered_messages(doc.messages)],
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


def ordered_messages(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    return sorted(messages, key=lambda m: (m.turn_number, m.seq))


def _decode(path: Path, text: str) -> ConversationDoc:
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
    return ConversationDoc(conversation, messages, turns)
