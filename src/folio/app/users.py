"""User management and authentication: add, list, remove, rotate a token, authenticate.

A token is shown once, when created or rotated, and stored only as its SHA-256 hash (tokens are
256 random bits, so a fast hash is enough; no salt is needed for such secrets).
"""

from __future__ import annotations

import builtins
import hashlib
import secrets
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from folio.domain.errors import FolioError
from folio.domain.ports import UserRepository
from folio.domain.users import LOCAL_USER_ID, User, UserError, UserErrorCode, validate_user_name

TOKEN_PREFIX = "folio_"
MAX_TOKEN_CHARS = 200


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def _utcnow() -> datetime:
    return datetime.now(UTC)


class Users:
    def __init__(
        self,
        users: UserRepository,
        *,
        clock: Callable[[], datetime] = _utcnow,
        token: Callable[[], str] = new_token,
    ) -> None:
        self._users = users
        self._clock = clock
        self._token = token
        self._tokens_required = False

    def add(self, name: str) -> tuple[User, str]:
        """A new user and its bearer token (shown once)."""
        user = User(uuid.uuid4().hex, validate_user_name(name), self._clock())
        token = self._token()
        self._users.add(user, hash_token(token))
        return user, token

    def list(self) -> builtins.list[User]:
        return self._users.list()

    def remove(self, name: str) -> User:
        user = self._users.get_by_name(name.strip())
        self._users.delete(user.id)
        return user

    def rotate(self, name: str) -> str:
        """A new token for the user; the old one stops working at once."""
        user = self._users.get_by_name(name.strip())
        token = self._token()
        self._users.set_token_hash(user.id, hash_token(token))
        return token

    def any(self) -> bool:
        return self._users.count() > 0

    def require_tokens(self) -> None:
        """From now on every request needs a valid token, even if the last user is removed (a
        server fixes its mode when it starts; it never opens up while running)."""
        self._tokens_required = True

    def tokens_required(self) -> bool:
        """Whether a token is required: once users have been seen, for good."""
        if not self._tokens_required and self.any():
            self._tokens_required = True
        return self._tokens_required

    def authenticate_header(self, authorization: str) -> str:
        """``authenticate`` with the token of an HTTP ``Authorization: Bearer TOKEN`` header
        (any other scheme, or none, is no token)."""
        scheme, _, token = authorization.partition(" ")
        return self.authenticate(token.strip() if scheme.lower() == "bearer" else None)

    def authenticate(self, token: str | None) -> str:
        """The id of the user a request acts as: the local user until tokens are required (a
        user has been seen, or ``require_tokens``); then the user of ``token``, even once no user
        is left. Raises ``UserError(UNAUTHORIZED)``."""
        if not self.tokens_required():
            return LOCAL_USER_ID
        if not token:
            raise UserError(
                "A bearer token is required (Authorization: Bearer TOKEN; `folio users add NAME` "
                "creates one)",
                code=UserErrorCode.UNAUTHORIZED,
            )
        user = (
            self._users.get_by_token_hash(hash_token(token))
            if len(token) <= MAX_TOKEN_CHARS
            else None
        )
        if user is None:
            raise UserError("Invalid or revoked token", code=UserErrorCode.UNAUTHORIZED)
        return user.id

    def named_token_user(self, name: str, token: str) -> str | None:
        """The id of the user called ``name`` (in any case) when ``token`` is that user's folio
        token, else None: a login (HTTP Basic) that gives a token as its password."""
        try:
            user_id = self.authenticate(token)
        except FolioError:
            return None
        names = {u.id: u.name for u in self.list()}
        return user_id if names.get(user_id, "").casefold() == name.strip().casefold() else None
