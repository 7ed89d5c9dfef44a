"""Serving: what answers here, as ``folio serve`` and the web page say it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from folio.config import Settings
    from folio.domain.ports import ChatProvider


class ServingWiring:
    """The provider, model and database a server runs on, for the people who use it."""

    if TYPE_CHECKING:
        settings: Settings

        def chat_provider(
            self, name: str | None = None, model: str | None = None
        ) -> ChatProvider: ...

    def serving(self) -> dict[str, str]:
        """What answers here, as ``folio serve`` and the page say it: ``provider``, ``model``
        (or why there is none), ``database`` ("SQLite" | "PostgreSQL") and ``location`` (the
        file, or the URL with its password hidden)."""
        from folio.domain.errors import FolioError

        try:
            model = self.chat_provider().model_name
        except FolioError as e:  # the turns will say so too; the server still starts
            model = f"not available: {e.message}"
        return {
            "provider": self.settings.effective_provider(),
            "model": model,
            "database": "PostgreSQL" if self.settings.uses_postgres else "SQLite",
            "location": self.settings.database_description,
        }
