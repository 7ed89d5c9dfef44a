"""Settings: defaults, then the config file, then the environment (the environment wins), then
explicit overrides. Every value is validated (type and range) by pydantic; a bad one is a
``ConfigError`` naming the setting, the bound and the value, never an OverflowError later.

The data directory is ``FOLIO_HOME`` (default: the platform's user data folder). The config file is
``FOLIO_CONFIG`` or ``$FOLIO_HOME/config.toml``; keys are the field names below, e.g.::

    provider = "anthropic"
    model = "claude-sonnet-4-6"
    history_messages = 20
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from platformdirs import user_cache_dir, user_data_dir
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from folio.domain.errors import ConfigError
from folio.domain.redaction import redact_url

PROVIDERS = ("anthropic", "openai", "ollama", "offline", "scripted")
CONVERSATION_STORES = ("sqlite", "json")
GUARDRAILS = ("none", "retrieval", "llm")
MB = 1024 * 1024
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")

# environment variable -> field name
_ENV = {
    "FOLIO_PROVIDER": "provider",
    "FOLIO_MODEL": "model",
    "ANTHROPIC_API_KEY": "anthropic_api_key",
    "OPENAI_API_KEY": "openai_api_key",
    "OPENAI_BASE_URL": "openai_base_url",
    "OLLAMA_HOST": "ollama_host",
    "FOLIO_EMBEDDING_MODEL": "embedding_model",
    "FOLIO_CONVERSATION_STORE": "conversation_store",
    "FOLIO_HISTORY_MESSAGES": "history_messages",
    "FOLIO_CONTEXT_TOKENS": "context_token_budget",
    "FOLIO_MAX_TOOL_ROUNDS": "max_tool_rounds",
    "FOLIO_GUARDRAIL": "guardrail",
    "FOLIO_SEARCH_K": "search_k",
    "FOLIO_LLM_TIMEOUT": "llm_timeout",
    "FOLIO_LLM_RETRIES": "llm_max_retries",
    "FOLIO_DEBUG": "debug",
    "FOLIO_MODELS_DIR": "model_cache",
    "FOLIO_MAX_MESSAGE_CHARS": "max_message_chars",
    "FOLIO_MAX_BOOK_MB": "max_book_mb",
    "FOLIO_MAX_UNPACKED_MB": "max_unpacked_mb",
    "FOLIO_MAX_IMPORT_MB": "max_import_mb",
    "FOLIO_MAX_IMPORT_MESSAGES": "max_import_messages",
    "FOLIO_MAX_HIGHLIGHTS_MB": "max_highlights_mb",
    "FOLIO_SCRIPT": "script_file",
    "FOLIO_MAX_REQUEST_MB": "max_request_mb",
    "FOLIO_MAX_CONCURRENT_TURNS": "max_concurrent_turns",
    "FOLIO_DATABASE_URL": "database_url",
    "FOLIO_DATABASE_POOL": "database_pool_size",
    "FOLIO_PG_VECTOR_SCAN": "pg_vector_scan",
    "FOLIO_ALLOWED_HOSTS": "allowed_hosts",
    "FOLIO_REQUIRE_TOKENS": "require_tokens",
    "FOLIO_METRICS_TOKEN": "metrics_token",
    "FOLIO_LOG_MESSAGE_TEXT": "log_message_text",
    "FOLIO_SYNC_MOVES_BACK": "sync_moves_back",
    "FOLIO_SYNC_LOGIN_FAILURES": "sync_login_failures",
    "FOLIO_SYNC_ADDRESS_FAILURES": "sync_address_failures",
    "FOLIO_SYNC_FAILURE_WINDOW_S": "sync_failure_window_s",
}
_SECRETS = {"anthropic_api_key", "openai_api_key", "metrics_token"}


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


Finite = Annotated[float, AfterValidator(_finite)]

_HOST_NAME = re.compile(r"^[A-Za-z0-9.:_-]{1,253}$")


def _host_names(value: Any) -> Any:
    """``FOLIO_ALLOWED_HOSTS`` is comma-separated; the config file may give a list."""
    if isinstance(value, str):
        value = [part for part in value.split(",")]
    if isinstance(value, (list, tuple)):
        names = [str(v).strip().lower().strip("[]") for v in value]
        bad = [n for n in names if not _HOST_NAME.fullmatch(n)]
        if bad:
            raise ValueError(f"not host names: {', '.join(map(repr, bad))} (names, no ports)")
        return tuple(n for n in names if n)
    return value


HostNames = Annotated[tuple[str, ...], BeforeValidator(_host_names)]

DATABASE_URL_SCHEMES = ("postgresql://", "postgres://")


def _postgres_url(value: str) -> str:
    if not value.startswith(DATABASE_URL_SCHEMES):
        raise ValueError(
            "must be a PostgreSQL URL (postgresql://user:password@host:5432/dbname); unset it to"
            " keep the library in SQLite under FOLIO_HOME"
        )
    return value


class Settings(BaseModel):
    """folio's settings. Build them with ``load_settings`` (environment + config file), which
    reads every source itself: the model only validates. Names are case-insensitive
    (``History_Messages = 5`` in the file is ``history_messages``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    home: Path = Field(default_factory=lambda: Path(user_data_dir("folio", appauthor=False)))
    provider: Literal["anthropic", "openai", "ollama", "offline", "scripted"] | None = None
    model: str | None = Field(default=None, max_length=200)
    anthropic_api_key: str | None = None
    openai_api_key: str | None = None
    openai_base_url: str | None = None
    ollama_host: str | None = None
    # The packaged model, float32 or int8 ("all-MiniLM-L6-v2-int8"), or an ST model path.
    embedding_model: str = Field(default="all-MiniLM-L6-v2", min_length=1, max_length=500)
    conversation_store: Literal["sqlite", "json"] = "sqlite"
    history_messages: int = Field(default=20, ge=1, le=1000)
    context_token_budget: int = Field(default=8000, ge=500, le=2_000_000)
    max_tool_rounds: int = Field(default=3, ge=1, le=10)
    # Off: a model keeps to the book itself, and offline answers say when nothing read answers.
    guardrail: Literal["none", "retrieval", "llm"] = "none"
    search_k: int = Field(default=5, ge=1, le=50)
    llm_timeout: Finite = Field(default=60.0, gt=0, le=3600)
    llm_max_retries: int = Field(default=3, ge=0, le=10)
    debug: bool = False
    # Where the int8 copy of the shipped embedding model is kept: per machine, not per library.
    model_cache: Path = Field(
        default_factory=lambda: Path(user_cache_dir("folio", appauthor=False)) / "models"
    )
    # Input bounds (documented in the README): a reader's message, a book file, an EPUB's
    # unpacked size, a conversation import file and its number of messages, a highlights file.
    max_message_chars: int = Field(default=8000, ge=100, le=200_000)
    max_book_mb: Finite = Field(default=100.0, gt=0, le=4096)
    max_unpacked_mb: Finite = Field(default=400.0, gt=0, le=16384)
    max_import_mb: Finite = Field(default=20.0, gt=0, le=1024)
    max_import_messages: int = Field(default=20_000, ge=10, le=1_000_000)
    max_highlights_mb: Finite = Field(default=20.0, gt=0, le=1024)
    # The scripted provider's JSON script (provider "scripted"): tests and benchmarks of a server.
    script_file: Path | None = None
    # HTTP API (folio serve): the largest request body of a route without its own bound (a book
    # upload: max_book_mb; an import: max_import_mb; a turn: max_message_chars), the turns one
    # user may run at once, the public names the server answers to besides the loopback names
    # (Host and Origin), and whether a bearer token is required even while no user exists.
    max_request_mb: Finite = Field(default=4.0, gt=0, le=4096)
    max_concurrent_turns: int = Field(default=4, ge=1, le=1000)
    allowed_hosts: HostNames = Field(default=(), max_length=100)
    require_tokens: bool = False
    # PostgreSQL for everything (users, books, vectors, conversations) instead of SQLite under
    # ``home``: several ``folio serve`` workers and machines then share one library. The pool
    # size is per process.
    database_url: Annotated[str, AfterValidator(_postgres_url)] | None = Field(
        default=None, max_length=2000
    )
    database_pool_size: int = Field(default=8, ge=1, le=200)
    # Where PostgreSQL's exact vector scan runs: "database" (pgvector's operator) or "client"
    # (numpy in folio, for pgvector builds that need a CPU feature the server lacks).
    pg_vector_scan: Literal["database", "client"] = "database"
    # Operating ``folio serve``: a bearer token that may read /metrics (besides the users'), and
    # a debugging aid that puts the reader's questions and the answers into the turns' log lines.
    metrics_token: str | None = Field(default=None, min_length=16, max_length=200)
    log_message_text: bool = False
    # Progress sync (KOReader): may a device's push move the position back? True: the latest
    # push wins; False: a push behind the position is kept but does not move it.
    sync_moves_back: bool = True
    # Failed sync logins: after this many failures of one login, or from one client address,
    # within the window (seconds from the first), further attempts are refused (429, Retry-After)
    # without a key check until the window ends; a success resets the login's count.
    sync_login_failures: int = Field(default=10, ge=1, le=10_000)
    sync_address_failures: int = Field(default=30, ge=1, le=100_000)
    sync_failure_window_s: Finite = Field(default=900.0, gt=0, le=86_400)
    config_file: Path | None = None
    # Where each value came from (``load_settings`` fills it): see ``source_of``.
    _sources: dict[str, str] = PrivateAttr(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _names_in_any_case(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k.lower() if isinstance(k, str) else k: v for k, v in data.items()}
        return data

    @model_validator(mode="after")
    def _conversations_beside_the_books(self) -> Settings:
        if self.database_url and self.conversation_store == "json":
            raise ValueError(
                "conversation_store 'json' keeps conversations in files on this machine, while"
                " database_url puts the library in PostgreSQL for every worker: unset"
                " FOLIO_CONVERSATION_STORE (conversations then live in PostgreSQL too)"
            )
        return self

    @property
    def database_path(self) -> Path:
        """The SQLite database (used when ``database_url`` is unset)."""
        return self.home / "folio.db"

    @property
    def uses_postgres(self) -> bool:
        return self.database_url is not None

    @property
    def database_description(self) -> str:
        """Where the library lives, for people: the SQLite file or the redacted server URL."""
        return redact_url(self.database_url) if self.database_url else str(self.database_path)

    @property
    def conversations_dir(self) -> Path:
        return self.home / "conversations"

    @property
    def models_dir(self) -> Path:
        return self.model_cache

    @property
    def max_book_bytes(self) -> int:
        return int(self.max_book_mb * MB)

    @property
    def max_unpacked_bytes(self) -> int:
        return int(self.max_unpacked_mb * MB)

    @property
    def max_request_bytes(self) -> int:
        return int(self.max_request_mb * MB)

    @property
    def max_import_bytes(self) -> int:
        return int(self.max_import_mb * MB)

    @property
    def max_highlights_bytes(self) -> int:
        return int(self.max_highlights_mb * MB)

    @property
    def served_hosts(self) -> tuple[str, ...]:
        """The names a request's Host (and a browser's Origin) may give: the loopback names,
        then ``allowed_hosts``."""
        return (*LOOPBACK_HOSTS, *self.allowed_hosts)

    def effective_provider(self) -> str:
        if self.provider:
            return self.provider
        if self.anthropic_api_key:
            return "anthropic"
        if self.openai_api_key or self.openai_base_url:
            return "openai"
        if self.ollama_host:
            return "ollama"
        return "offline"

    def replaced(self, **changes: Any) -> Settings:
        """A copy with ``changes`` applied and validated."""
        return _validated({**self.model_dump(exclude_defaults=True), **changes})

    def source_of(self, name: str) -> str:
        """Where setting ``name`` came from: ``default``, ``config file`` (``config_file``),
        ``env VARIABLE`` or ``override`` (given by the program, e.g. a command-line option)."""
        return self._sources.get(name, "default")

    def masked(self) -> dict[str, Any]:
        """The settings as printable data, secrets masked."""
        out: dict[str, Any] = {}
        for key, value in self.model_dump().items():
            if key in _SECRETS and value:
                value = f"{value[:4]}…{value[-2:]}" if len(value) > 8 else "****"
            if key == "database_url" and value:
                value = redact_url(value)
            out[key] = str(value) if isinstance(value, Path) else value
        out["effective_provider"] = self.effective_provider()
        out["database"] = self.database_description
        return out


def load_settings(env: dict[str, str] | None = None, **overrides: Any) -> Settings:
    """Settings from defaults, the config file and the environment, then explicit ``overrides``."""
    env = dict(os.environ) if env is None else env
    home = Path(env["FOLIO_HOME"]).expanduser() if env.get("FOLIO_HOME") else _default_home()
    config_file = Path(env.get("FOLIO_CONFIG") or home / "config.toml").expanduser()
    values: dict[str, Any] = {"home": home}
    sources = {"home": "env FOLIO_HOME"} if env.get("FOLIO_HOME") else {}
    if config_file.is_file():
        from_file = _read_config_file(config_file)
        values.update(from_file)
        values["config_file"] = config_file
        sources.update(dict.fromkeys(from_file, "config file"))
        sources["config_file"] = "env FOLIO_CONFIG" if env.get("FOLIO_CONFIG") else "default"
    for var, name in _ENV.items():
        if env.get(var):
            values[name] = env[var]
            sources[name] = f"env {var}"
    given = {k: v for k, v in overrides.items() if v is not None}
    values.update(given)
    sources.update(dict.fromkeys(given, "override"))
    settings = _validated(values)
    settings._sources = sources
    return settings


def _default_home() -> Path:
    return Path(user_data_dir("folio", appauthor=False))


def _read_config_file(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        with path.open("rb") as f:
            data = {str(k).lower(): v for k, v in tomllib.load(f).items()}
    except (OSError, UnicodeDecodeError, ValueError) as e:  # tomllib.TOMLDecodeError is one
        raise ConfigError(f"Cannot read config file {path}: {e}") from e
    known = set(Settings.model_fields) - {"home", "config_file"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"Unknown setting(s) in {path}: {', '.join(unknown)}")
    return data


def _validated(values: dict[str, Any]) -> Settings:
    try:
        return Settings(**values)
    except ValidationError as e:
        raise ConfigError(_explain(e)) from e


def _explain(error: ValidationError) -> str:
    """One line per bad setting: its name (and environment variable), the rule, the value."""
    env_of = {name: var for var, name in _ENV.items()}
    problems = []
    for item in error.errors():
        message = str(item["msg"]).removeprefix("Value error, ")
        if not item["loc"]:  # a rule about several settings together
            problems.append(f"settings: {message}")
            continue
        name = str(item["loc"][0])
        where = f" ({env_of[name]})" if name in env_of else ""
        given = item["input"]
        if name == "database_url" and isinstance(given, str):
            given = redact_url(given)
        message = message[:1].lower() + message[1:]
        problems.append(f"setting {name!r}{where} {message} (got {given!r})")
    return "Invalid " + "; ".join(problems)
