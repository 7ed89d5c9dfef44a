"""Settings: defaults, then the config file, then the environment (the environment wins).

The data directory is ``FOLIO_HOME`` (default: the platform's user data folder). The config file is
``FOLIO_CONFIG`` or ``$FOLIO_HOME/config.toml``; keys are the field names below, e.g.::

    provider = "anthropic"
    model = "claude-sonnet-4-6"
    history_messages = 20
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir, user_data_dir

from folio.domain.errors import ConfigError

PROVIDERS = ("anthropic", "openai", "ollama", "offline", "scripted")
CONVERSATION_STORES = ("sqlite", "json")
GUARDRAILS = ("none", "retrieval", "llm")

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
}
_SECRETS = {"anthropic_api_key", "openai_api_key"}


@dataclass(frozen=True)
class Settings:
    home: Path = field(default_factory=lambda: Path(user_data_dir("folio", appauthor=False)))
    provider: str | None = None  # None: the first configured key, else offline
    model: str | None = None
    anthropic_api_key: str | None = None
    openai_api_key: str | None = None
    openai_base_url: str | None = None
    ollama_host: str | None = None
    # The packaged model, float32 or int8 ("all-MiniLM-L6-v2-int8"), or an ST model path.
    embedding_model: str = "all-MiniLM-L6-v2"
    conversation_store: str = "sqlite"
    history_messages: int = 20
    context_token_budget: int = 8000
    max_tool_rounds: int = 3
    guardrail: str = "retrieval"
    search_k: int = 5
    llm_timeout: float = 60.0
    llm_max_retries: int = 3
    debug: bool = False
    # Where the embedding model's one-time ONNX export is kept: per machine, not per library.
    model_cache: Path = field(
        default_factory=lambda: Path(user_cache_dir("folio", appauthor=False)) / "models"
    )
    config_file: Path | None = None

    @property
    def database_path(self) -> Path:
        return self.home / "folio.db"

    @property
    def conversations_dir(self) -> Path:
        return self.home / "conversations"

    @property
    def models_dir(self) -> Path:
        return self.model_cache

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

    def masked(self) -> dict[str, Any]:
        """The settings as printable data, secrets masked."""
        out: dict[str, Any] = {}
        for key, value in asdict(self).items():
            if key in _SECRETS and value:
                value = f"{value[:4]}…{value[-2:]}" if len(value) > 8 else "****"
            out[key] = str(value) if isinstance(value, Path) else value
        out["effective_provider"] = self.effective_provider()
        out["database_path"] = str(self.database_path)
        return out


def load_settings(env: dict[str, str] | None = None, **overrides: Any) -> Settings:
    """Settings from defaults, the config file and the environment, then explicit ``overrides``."""
    env = dict(os.environ) if env is None else env
    home = Path(env["FOLIO_HOME"]).expanduser() if env.get("FOLIO_HOME") else Settings().home
    config_file = Path(env.get("FOLIO_CONFIG") or home / "config.toml").expanduser()
    values: dict[str, Any] = {"home": home}
    if config_file.is_file():
        values.update(_read_config_file(config_file))
        values["config_file"] = config_file
    for var, name in _ENV.items():
        if env.get(var):
            values[name] = env[var]
    values.update({k: v for k, v in overrides.items() if v is not None})
    return _validated(values)


def _read_config_file(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"Cannot read config file {path}: {e}") from e
    known = {f.name for f in fields(Settings)} - {"home", "config_file"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"Unknown setting(s) in {path}: {', '.join(unknown)}")
    return data


def _validated(values: dict[str, Any]) -> Settings:
    types = {f.name: f.type for f in fields(Settings)}
    clean: dict[str, Any] = {}
    for name, value in values.items():
        kind = str(types[name])
        try:
            if kind == "int":
                clean[name] = int(value)
            elif kind == "float":
                clean[name] = float(value)
            elif kind == "bool":
                clean[name] = (
                    value
                    if isinstance(value, bool)
                    else str(value).lower() in {"1", "true", "yes", "on"}
                )
            elif kind == "Path" or name in {"home", "model_cache"}:
                clean[name] = Path(value).expanduser()
            else:
                clean[name] = value
        except (TypeError, ValueError) as e:
            raise ConfigError(f"Setting {name!r} has an invalid value {value!r}") from e
    settings = replace(Settings(), **clean)
    _check_choice("provider", settings.provider, PROVIDERS)
    _check_choice("conversation_store", settings.conversation_store, CONVERSATION_STORES)
    _check_choice("guardrail", settings.guardrail, GUARDRAILS)
    if settings.max_tool_rounds < 1 or settings.history_messages < 1 or settings.search_k < 1:
        raise ConfigError("max_tool_rounds, history_messages and search_k must be at least 1")
    return settings


def _check_choice(name: str, value: str | None, choices: tuple[str, ...]) -> None:
    if value is not None and value not in choices:
        raise ConfigError(f"Setting {name!r} must be one of {', '.join(choices)} (got {value!r})")
