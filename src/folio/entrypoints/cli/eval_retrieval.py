"""``folio eval retrieval``: recall@k and MRR of follow-up retrieval on real conversations.

Thin: each book is imported once into a cached evaluation data directory (reused while the file and
the embedding model are unchanged), then ``folio.app.evaluation.retrieval`` replays every
conversation.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from folio.app.evaluation.conversations import (
    EvalConversation,
    EvidenceMapper,
    find_book_file,
    load_conversations,
)
from folio.entrypoints.cli.errors import handle_errors

if TYPE_CHECKING:
    from folio.app.evaluation.retrieval import ModeScore, RetrievalEvaluation

# = folio.app.evaluation.retrieval.MODES, not imported at start-up: that module loads numpy, which
# every folio command would then pay for (tests/e2e/test_cli_eval.py checks they agree).
MODES = ("agent", "question", "history")

err_console = Console(stderr=True)
# Bump when chunking or indexing changes, so cached evaluation imports are rebuilt.
INDEX_FORMAT = b"index-2"


@click.command("retrieval")
@click.option(
    "--conversations",
    "conversations_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A *.conversations.jsonl file.",
)
@click.option(
    "--books-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Where the books live when they are not beside the .jsonl file.",
)
@click.option(
    "--k",
    "ks",
    type=click.IntRange(1, 100),
    multiple=True,
    default=(5, 10),
    show_default=True,
    help="Cut-offs for recall@k (repeatable).",
)
@click.option(
    "--mode",
    "modes",
    type=click.Choice(MODES),
    multiple=True,
    help="agent (what the chat searched), question, history (default: all three).",
)
@click.option(
    "--provider",
    "-p",
    default="offline",
    show_default=True,
    help="Chat provider for the agent mode.",
)
@click.option(
    "--gold-history",
    is_flag=True,
    help="Agent mode: earlier turns hold the reference answers, not the system's own.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N conversations.")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where imported books are kept between runs (default: FOLIO_HOME/eval).",
)
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write a PNG of recall@k by mode.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the scores as one JSON object.")
@click.pass_obj
@handle_errors
def retrieval_cmd(
    lazy: Any,
    conversations_path: Path,
    books_dir: Path | None,
    ks: tuple[int, ...],
    modes: tuple[str, ...],
    provider: str,
    gold_history: bool,
    limit: int | None,
    cache_dir: Path | None,
    plot: Path | None,
    as_json: bool,
) -> None:
    """Replay conversations turn by turn and score what was retrieved against the evidence."""
    conversations = load_conversations(conversations_path)[:limit]
    settings = lazy.get().settings
    cache = cache_dir or settings.home / "eval"
    by_book: dict[str, list[EvalConversation]] = defaultdict(list)
    for conversation in conversations:
        by_book[conversation.book].append(conversation)
    ks = tuple(sorted(set(ks)))
    modes = modes or MODES
    total_turns = sum(len(c.turns) for c in conversations)
    scores: dict[str, list[ModeScore]] = defaultdict(list)
    with _progress(as_json) as progress:
        task = progress.add_task("Replaying turns", total=total_turns)
        for name, items in by_book.items():
            path = find_book_file(name, beside=conversations_path.parent, books_dir=books_dir)
            evaluation = _evaluation(settings, cache, path, ks, modes, provider, gold_history)
            for conversation in items:
                evaluation.run(conversation, on_turn=lambda: progress.advance(task))
            for mode, score in evaluation.scores.items():
                scores[mode].append(score)
    report = {mode: _merged(parts, ks).summary() for mode, parts in scores.items()}
    _output(report, ks, as_json)
    if plot:
        _plot(report, ks, plot)


def _progress(quiet: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=quiet or not err_console.is_terminal,
    )


def _evaluation(
    settings: Any,
    cache: Path,
    path: Path,
    ks: tuple[int, ...],
    modes: tuple[str, ...],
    provider: str,
    gold_history: bool,
) -> RetrievalEvaluation:

    from folio.app.evaluation.retrieval import RetrievalEvaluation
    from folio.app.evaluation.sessions import ReplaySession
    from folio.bootstrap import Container

    raw = path.read_bytes()
    key = hashlib.sha256(raw + settings.embedding_model.encode() + INDEX_FORMAT).hexdigest()[:16]
    container = Container(settings.replaced(home=cache / key, conversation_store="sqlite"))
    book = container.books.find_by_hash(hashlib.sha256(raw).hexdigest())
    if book is None:
        err_console.print(f"Importing {path.name} into {cache / key} (once)…")
        book = container.ingest.execute(path).book
    mapper = EvidenceMapper(raw.decode("utf-8"), container.books.get_text(book.id))
    chat = container.chat(provider=provider) if "agent" in modes else None

    def new_session() -> ReplaySession:
        assert chat is not None
        return ReplaySession(
            chat,
            container.conversations,
            container.conversation_uow,
            book.id,
            gold_history=gold_history,
        )

    return RetrievalEvaluation(
        book,
        container.searcher,
        mapper,
        ks=ks,
        modes=modes,
        new_session=new_session,
        gold_history=gold_history,
    )


def _merged(parts: list[ModeScore], ks: tuple[int, ...]) -> ModeScore:
    from folio.app.evaluation.retrieval import ModeScore

    total = ModeScore(ks)
    for p in parts:
        total.turns += p.turns
        total.scored += p.scored
        total.reciprocal_ranks += p.reciprocal_ranks
        total.searches += p.searches
        total.llm_calls += p.llm_calls
        total.tokens += p.tokens
        for k, hits in p.hits_at.items():
            total.hits_at[k] = total.hits_at.get(k, 0) + hits
    return total


def _output(report: dict[str, dict[str, float | int]], ks: tuple[int, ...], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    columns = [f"recall@{k}" for k in ks] + [
        "mrr",
        "turns_scored",
        "searches_per_turn",
        "llm_calls_per_turn",
        "tokens_per_turn",
    ]
    headers = [
        c.replace("recall@", "R@").replace("_per_turn", "/turn").replace("_", " ") for c in columns
    ]
    table = Table("mode", *headers)
    for mode, row in report.items():
        table.add_row(mode, *(str(row[c]) for c in columns))
    Console(width=max(100, Console().width)).print(table)


def _plot(report: dict[str, dict[str, float | int]], ks: tuple[int, ...], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise click.ClickException("--plot needs matplotlib: pip install 'folio[plot]'") from e
    fig, ax = plt.subplots(figsize=(6, 4))
    for mode, row in report.items():
        ax.plot(ks, [row[f"recall@{k}"] for k in ks], marker="o", label=mode)
    ax.set_xlabel("k")
    ax.set_ylabel("recall@k")
    ax.set_ylim(0, 1)
    ax.set_xticks(list(ks))
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("Follow-up retrieval by mode")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    err_console.print(f"Plot written to {path}")
