"""The one composition root: settings -> adapters -> use cases.

The CLI, the HTTP API, ``folio eval``, the tests and library users all build a ``Container`` and ask
it for use cases. Adapters are created lazily on first use, so a command that never searches never
loads the embedding model. Any adapter can be replaced at construction, in the spirit of
cosmicpython's ``bootstrap(uow=...)``: ``Container(settings, provider=ScriptedChatProvider([...]),
uow=store.unit_of_work, library=InMemoryLibrary(), clock=fixed_clock)``. The agent's strategies
(which retrieval strategy, which fallback, which context window) are chosen here too, never inside
the use cases.

One module per capability wires what it owns, as a mixin of ``Container``: ``storage`` (the
database), ``library`` (books, search, ingest, imports), ``conversations``, ``chat`` (the turn, its
strategies and the book tools), ``providers`` (the chat models), ``sync`` (devices and highlights),
``users`` (accounts, ownership and ``UserScope``) and ``serving`` (what a server says it runs).
Each imports its adapters and use cases inside the function that builds them, so importing this
package loads nothing but the settings.
"""

from __future__ import annotations

from folio.bootstrap.container import Container
from folio.bootstrap.providers import make_provider, requires_extra
from folio.bootstrap.users import UserScope

__all__ = ["Container", "UserScope", "make_provider", "requires_extra"]
