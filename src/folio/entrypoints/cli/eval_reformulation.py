"""``folio eval reformulation``: score query rewriting against human rewrites (CANARD, TREC CAsT).

Thin: loads the file, runs ``folio.app.evaluation.reformulation.evaluate_reformulation`` (the
copy-the-question baseline, and with ``--llm`` the LLM rewriter on the configured provider),
prints the table or JSON. To be added to the ``eval`` group of ``folio.entrypoints.cli.main``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from folio.entrypoints.cli.errors import handle_errors

if TYPE_CHECKING:
    from folio.domain.ports import QueryRewriter


@click.command("reformulation")
@click.option(
    "--data",
    "data_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A reformulation_dev.jsonl file (one follow-up with its human rewrites per line).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
@click.option(
    "--llm",
    "with_llm",
    is_flag=True,
    help="Also score the LLM rewriter on the configured provider (one model call per item).",
)
@click.option("--limit", type=click.IntRange(min=1), help="Score only the first N items.")
@click.pass_obj
@handle_errors
def reformulation_cmd(
    lazy: Any, data_path: Path, as_json: bool, with_llm: bool, limit: int | None
) -> None:
    """Token F1 and exact match of query rewriters against human rewrites, per source, beside
    the copy-the-question baseline."""
    # Imported here: the rewriters load numpy, which the CLI's start-up should not pay for.
    from folio.agent.reformulation import LLMQueryRewriter
    from folio.app.evaluation.reformulation import evaluate_reformulation, load_reformulation_items

    items = load_reformulation_items(data_path)[:limit]
    rewriters: dict[str, QueryRewriter] = {}
    if with_llm:
        provider = lazy.get().chat_provider()
        rewriters[f"llm:{provider.provider_name}"] = LLMQueryRewriter(provider)
    report = evaluate_reformulation(items, rewriters)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        click.echo(report.format_table())
