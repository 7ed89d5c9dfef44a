"""Chat providers: the one chosen from the settings, its vendor SDK imported only then.

``requires_extra`` turns an optional dependency that is not installed into a ``ConfigError`` that
names the extra to install; the database and the CLI's optional commands use it too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from folio.config import Settings
    from folio.domain.ports import ChatProvider


@contextmanager
def requires_extra(extra: str, what: str) -> Iterator[None]:
    """Turn an optional dependency that is not installed into a ``ConfigError`` naming the extra
    that brings it (the runtime install is what offline chat in the terminal needs)."""
    try:
        yield
    except ImportError as e:
        from folio.domain.errors import ConfigError

        raise ConfigError(
            f"{what} needs {e.name or 'a package'}, which is not installed:"
            f" pip install 'folio-reader[{extra}]'"
        ) from e


def make_provider(
    settings: Settings, *, name: str | None = None, model: str | None = None
) -> ChatProvider:
    """Build a chat provider from settings; vendor SDKs are imported only for the one chosen."""
    from folio.domain.errors import ConfigError

    chosen = name or settings.effective_provider()
    model = model or settings.model
    timeout, retries = settings.llm_timeout, settings.llm_max_retries
    if chosen in ("anthropic", "openai"):  # a missing key is said before the SDK is loaded
        from folio.adapters.llm._common import check_credentials

        key = settings.anthropic_api_key if chosen == "anthropic" else settings.openai_api_key
        check_credentials(chosen, key, settings.openai_base_url)
    if chosen == "anthropic":
        with requires_extra("anthropic", "The Anthropic provider"):
            from folio.adapters.llm.anthropic import AnthropicProvider

        return AnthropicProvider(
            api_key=settings.anthropic_api_key, model=model, timeout=timeout, max_retries=retries
        )
    if chosen == "openai":
        with requires_extra("openai", "The OpenAI provider"):
            from folio.adapters.llm.openai import OpenAIProvider

        return OpenAIProvider(
            api_key=settings.openai_api_key,
            base_url=settings.openai_base_url,
            model=model,
            timeout=timeout,
            max_retries=retries,
        )
    if chosen == "ollama":
        from folio.adapters.llm.ollama import OllamaProvider

        return OllamaProvider(
            host=settings.ollama_host, model=model, timeout=timeout, max_retries=retries
        )
    if chosen == "scripted":
        from folio.adapters.llm.scripted import load_script

        if settings.script_file is None:
            raise ConfigError("The scripted provider needs a script file: set FOLIO_SCRIPT")
        return load_script(settings.script_file)
    if chosen == "offline":
        from folio.adapters.llm.offline import OfflineChatProvider

        return OfflineChatProvider()
    raise ConfigError(f"Unknown provider {chosen!r}: choose anthropic, openai, ollama or offline")
