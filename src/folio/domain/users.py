"""Users: who owns a book or a conversation.

The local user (``LOCAL_USER_ID``) is the reader at this machine: the CLI and a ``folio serve``
without users act as it, and data without a recorded owner is its. Other users exist once created
(``folio users add NAME``) and are known to the HTTP API by a bearer token.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import ClassVar

from folio.domain.errors import FolioError

LOCAL_USER_ID = "local"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


class ResourceKind(StrEnum):
    BOOK = "book"
    CONVERSATION = "conversation"


class UserErrorCode(StrEnum):
    NOT_FOUND = "NOT_FOUND"
    INVALID_INPUT = "INVALID_INPUT"
    DUPLICATE = "DUPLICATE"
    UNAUTHORIZED = "UNAUTHORIZED"


class UserError(FolioError):
    codes: ClassVar[type[StrEnum]] = UserErrorCode
    code: UserErrorCode = UserErrorCode.NOT_FOUND


@dataclass(frozen=True, slots=True)
class User:
    id: str
    name: str
    created_at: datetime


def validate_user_name(name: str) -> str:
    """A name is 1-64 letters, digits or ``._@-``, starting with a letter or digit."""
    cleaned = name.strip()
    if not _NAME.fullmatch(cleaned) or cleaned == LOCAL_USER_ID:
        raise UserError(
            f"Invalid user name {name!r}: 1-64 letters, digits or . _ @ -, starting with a letter "
            f"or digit (and not {LOCAL_USER_ID!r})",
            code=UserErrorCode.INVALID_INPUT,
        )
    return cleaned
