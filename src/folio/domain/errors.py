"""The one error hierarchy of folio, and the separate class for developers' mistakes.

Every error a user can cause or meet is a ``FolioError``. Adapters translate vendor exceptions into
these (``raise LLMError(...) from e``); entry points are the only place they become messages, exit
codes and HTTP statuses. Each error class has its OWN code enum: ``BookError`` takes only a
``BookErrorCode``, ``LLMError`` only an ``LLMErrorCode`` (another enum, or a bare string, is a
``TypeError`` at once), so entry points compare codes by enum member, never by string.

A mistake in folio's own code or configuration of code (a tool with an invalid JSON schema, two
tools with one name) is a ``ProgrammingError``: not a ``FolioError``, never shown to a reader as if
they had done something wrong.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar


class ProgrammingError(Exception):
    """A developer's mistake (not the user's): fix the code, do not show it as a user error."""


class FolioError(Exception):
    """Base of every error folio raises on purpose. ``codes`` is the class's code enum; ``code``
    its default member, replaced by the ``code`` argument."""

    codes: ClassVar[type[StrEnum]]
    code: StrEnum

    def __init__(self, message: str, *, code: StrEnum | None = None, **details: object) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            if not isinstance(code, self.codes):
                raise TypeError(
                    f"{type(self).__name__} takes a {self.codes.__name__}, not {code!r}"
                )
            self.code = code
        self.details: dict[str, object] = dict(details)

    def __str__(self) -> str:
        return self.message

    @property
    def is_not_found(self) -> bool:
        """Is this the class's own "not found" (a reference that resolves to nothing)?"""
        return self.code is getattr(self.codes, "NOT_FOUND", None)


class ConfigErrorCode(StrEnum):
    CONFIG = "CONFIG"


class ConfigError(FolioError):
    """Invalid settings or config file."""

    codes = ConfigErrorCode
    code: ConfigErrorCode = ConfigErrorCode.CONFIG


class StorageErrorCode(StrEnum):
    BUSY = "BUSY"  # another process holds the write lock longer than the busy timeout: retry
    READ_ONLY = "READ_ONLY"  # the data directory or file cannot be written
    DISK_FULL = "DISK_FULL"
    DAMAGED = "DAMAGED"  # not a folio database, or a damaged one
    CONFLICT = "CONFLICT"  # the target of a copy already holds some of what is copied
    STORAGE = "STORAGE"


class StorageError(FolioError):
    """The data directory or its database cannot be used (busy, read-only, full, damaged)."""

    codes: ClassVar[type[StrEnum]] = StorageErrorCode
    code: StorageErrorCode = StorageErrorCode.STORAGE


class BookErrorCode(StrEnum):
    NOT_FOUND = "NOT_FOUND"
    AMBIGUOUS = "AMBIGUOUS"
    INVALID_POSITION = "INVALID_POSITION"
    INVALID_INPUT = "INVALID_INPUT"


class BookError(FolioError):
    """A book reference that does not resolve, or an invalid operation on a book."""

    codes: ClassVar[type[StrEnum]] = BookErrorCode
    code: BookErrorCode = BookErrorCode.NOT_FOUND


class IngestErrorCode(StrEnum):
    UNSUPPORTED = "UNSUPPORTED"
    CORRUPT = "CORRUPT"
    EMPTY = "EMPTY"
    DUPLICATE = "DUPLICATE"
    NOT_FOUND = "NOT_FOUND"
    TOO_LARGE = "TOO_LARGE"
    INVALID_POSITION = "INVALID_POSITION"  # the reading position given names no place in it


class IngestError(FolioError):
    """A file that cannot become a book: unsupported, corrupt, empty, or already in the library."""

    codes: ClassVar[type[StrEnum]] = IngestErrorCode
    code: IngestErrorCode = IngestErrorCode.CORRUPT


class ConversationErrorCode(StrEnum):
    NOT_FOUND = "NOT_FOUND"
    INVALID_STATE = "INVALID_STATE"
    CONFLICT = "CONFLICT"
    INVALID_INPUT = "INVALID_INPUT"
    AMBIGUOUS = "AMBIGUOUS"  # an id prefix that starts several conversations' ids


class ConversationError(FolioError):
    codes: ClassVar[type[StrEnum]] = ConversationErrorCode
    code: ConversationErrorCode = ConversationErrorCode.NOT_FOUND


class LLMErrorCode(StrEnum):
    UNSUPPORTED_FEATURE = "UNSUPPORTED_FEATURE"
    AUTH = "AUTH"
    RATE_LIMITED = "RATE_LIMITED"
    TIMEOUT = "TIMEOUT"
    BAD_RESPONSE = "BAD_RESPONSE"
    UNAVAILABLE = "UNAVAILABLE"


class LLMError(FolioError):
    codes: ClassVar[type[StrEnum]] = LLMErrorCode
    code: LLMErrorCode = LLMErrorCode.UNAVAILABLE


class ToolErrorCode(StrEnum):
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    INVALID_ARGUMENTS = "INVALID_ARGUMENTS"
    EXCEPTION = "EXCEPTION"
    NOT_ALLOWED = "NOT_ALLOWED"  # past the position, or another's
    NOT_FOUND = "NOT_FOUND"  # nothing so named (a chapter, a passage)
    AMBIGUOUS = "AMBIGUOUS"  # several so named: asked back


class ToolError(FolioError):
    codes: ClassVar[type[StrEnum]] = ToolErrorCode
    code: ToolErrorCode = ToolErrorCode.EXCEPTION


class EmbeddingErrorCode(StrEnum):
    FAILED = "EMBEDDING"


class EmbeddingError(FolioError):
    """The embedding model failed on some text."""

    codes: ClassVar[type[StrEnum]] = EmbeddingErrorCode
    code: EmbeddingErrorCode = EmbeddingErrorCode.FAILED


class EvalDataErrorCode(StrEnum):
    INVALID = "INVALID_EVAL_DATA"


class EvalDataError(FolioError):
    """An evaluation file that is missing or malformed (the message names the line)."""

    codes: ClassVar[type[StrEnum]] = EvalDataErrorCode
    code: EvalDataErrorCode = EvalDataErrorCode.INVALID
