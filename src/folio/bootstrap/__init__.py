"""The one composition root: settings -> adapters -> use cases (see ``container``)."""

from __future__ import annotations

from folio.bootstrap.container import Container, UserScope, make_provider, requires_extra

__all__ = ["Container", "UserScope", "make_provider", "requires_extra"]
