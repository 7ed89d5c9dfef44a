"""The offline policy: how folio answers without a model (the zero-configuration default).

Only the composition root (``folio.bootstrap``) imports this package; an import-linter contract
keeps the tools, the strategies, the context, the prompts, the use cases and the entry points
from it, so no rule of it ever runs in a model's turn.
"""
