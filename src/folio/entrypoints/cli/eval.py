"""``folio eval``: measure retrieval on conversations and query reformulation."""

from __future__ import annotations

import click

from folio.entrypoints.cli.eval_reformulation import reformulation_cmd
from folio.entrypoints.cli.eval_retrieval import retrieval_cmd


@click.group("eval")
def eval_group() -> None:
    """Evaluate folio on the shared evaluation sets (retrieval, reformulation)."""


eval_group.add_command(retrieval_cmd)
eval_group.add_command(reformulation_cmd)
