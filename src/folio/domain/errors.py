"""The one error hierarchy of folio.

Every error a user can cause or meet is a ``FolioError``. Adapters translate vendor exceptions into
these (``raise LLMError(...) from e``); entry points are the only place they become messages, exit
codes and HTTP statuses. Each error carries a machine-readable ``code`` besides its human message.
"""

from __future__ import annotations

from enum import StrEnum


class FolioError(Exception):
    """Base of every error folio raises on purpose."""

    code: str = "ERROR"

    def __init__(self, message: str, *, code: str | None = None, **details: object) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details: dict[str, object] = dict(details)

    def __str__(self) -> str:
        return self.message


class ConfigError(FolioError):
    """Invalid settings or config file."""

    code: str = "CONFIG"


class StorageErrorCode(StrEnum):
    BUSY = "BUSY"  # another process holds the write lock longer than the busy timeout: retry
    READ_ONLY = "READ_ONLY"  # the data directory or file cannot be written
    DISK_FULL = "DISK_FULL"
    DAMAGED = "DAMAGED"  # not a folio database, or a damaged one
    STORAGE = "STORAGE"


class StorageError(FolioError):
    """The data directory or its database cannot be used (busy, read-only, full, damaged)."""

    code: str = StorageErrorCode.STORAGE


class BookErrorCode(StrEnum):
    NOT_FOUND = "NOT_FOUND"
    AMBIGUOUS = "AMBIGUOUS"
    INVALID_POSITION = "INVALID_POSITION"
    INVALID_INPUT = "INVALID_INPUT"


class BookError(FolioError):
    """A book reference that does not resolve, or an invalid operation on a book."""

    code: str = BookErrorCode.NOT_FOUND


class IngestErrorCode(StrEnum):
    UNSUPPORTED = "UNSUPPORTED"
    CORRUPT = "CORRUPT"
    EMPTY = "EMPTY"
    DUPLICATE = "DUPLICATE"
    NOT_FOUND = "NOT_FOUND"
    TOO_LARGE = "TOO_LARGE"


class IngestError(BookError):
    """A file that cannot become a book: unsupported, corrupt, empty, or already in the library."""

    code: str = IngestErrorCode.CORRUPT


class ConversationErrorCode(StrEnum):
    NOT_FOUND = "NOT_FOUND"
    INVALID_STATE = "INVALID_STATE"
    CONFLICT = "CONFLICT"
    INVALID_INPUT = "INVALID_INPUT"


class ConversationError(FolioError):
    code: str = ConversationErrorCode.NOT_FOUND


class LLMErrorCode(StrEnum):
    UNSUPPORTED_FEATURE = "UNSUPPORTED_FEATURE"
    AUTH = "AUTH"
    RATE_LIMITED = "RATE_LIMITED"
    TIMEOUT = "TIMEOUT"
    BAD_RESPONSE = "BAD_RESPONSE"
    UNAVAILABLE = "UNAVAILABLE"


class LLMError(FolioError):
    code: str = LLMErrorCode.UNAVAILABLE


class ToolErrorCode(StrEnum):
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    INVALID_ARGUMENTS = "INVALID_ARGUMENTS"
    EXCEPTION = "EXCEPTION"
    DUPLICATE_TOOL = "DUPLICATE_TOOL"
    NOT_ALLOWED = "NOT_ALLOWED"


class ToolError(FolioError):
    code: str = ToolErrorCode.EXCEPTION
