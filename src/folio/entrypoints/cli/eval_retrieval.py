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
from rich.table import Column, Table

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
@click.option(
    "--haystack",
    "haystack_name",
    help="Whole-book scale: splice each conversation's excerpt into this long novel (a file, or "
    "a name in --books-dir / the data set's books) at a random paragraph boundary.",
)
@click.option(
    "--chain",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Join N consecutive conversations of a book into one session that changes subject "
    "(different stories of the anthology) and score the turns after each switch apart.",
)
@click.option(
    "--quotes",
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="Turn this share of the turns into 'Where does it say \"<words of the evidence>\"?' "
    "(chosen with --seed) and score them apart.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Where --haystack puts the excerpts; which turns --quotes rephrases.",
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
    haystack_name: str | None,
    chain: int,
    quotes: float,
    seed: int,
    as_json: bool,
) -> None:
    """Replay conversations turn by turn and score what was retrieved against the evidence.

    Every mode is also scored by turn depth (turns 1-3, 4-9, 10+), after a switch of subject
    with --chain (after switch 1-3, 4+) and on quote turns with --quotes (quotes)."""
    conversations = load_conversations(conversations_path)[:limit]
    conversations = _rephrased(conversations, conversations_path, books_dir, chain, quotes, seed)
    settings = lazy.get().settings
    cache = cache_dir or settings.home / "eval"
    if haystack_name:
        conversations, books_dir = _in_haystack(
            conversations, conversations_path, books_dir, haystack_name, seed, cache
        )
        conversations_path = books_dir / "conversations.jsonl"
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
    report = {mode: _merged(parts, ks).summary() for mode, parts in sorted(scores.items())}
    report = dict(sorted(report.items(), key=lambda kv: _row_order(kv[0])))
    _output(report, ks, as_json)
    if plot:
        _plot(report, ks, plot)


def _row_order(key: str) -> tuple[int, int, int]:
    """agent, agent turns 1-3, 4-9, 10+, agent after switch 1-3, 4+, agent quotes, question, ..."""
    mode, _, bucket = key.partition(" ")
    kinds = ("", "turns", "after", "quotes")
    words = bucket.split() or [""]
    kind, first = words[0], words[-1].split("-")[0].rstrip("+")
    return (
        MODES.index(mode) if mode in MODES else len(MODES),
        kinds.index(kind) if kind in kinds else len(kinds),
        int(first) if first.isdigit() else 0,
    )


def _rephrased(
    conversations: list[Any],
    conversations_path: Path,
    books_dir: Path | None,
    chain: int,
    quotes: float,
    seed: int,
) -> list[Any]:
    """The conversations with a share of quote turns (``quote_turns``, on each book's own
    text) and joined ``chain`` at a time into sessions that change subject."""
    if chain <= 1 and quotes <= 0:
        return conversations
    from folio.app.evaluation.chains import chain_conversations, quote_turns

    if quotes > 0:
        by_book: dict[str, list[Any]] = defaultdict(list)
        for conversation in conversations:
            by_book[conversation.book].append(conversation)
        conversations = []
        for name, items in by_book.items():
            path = find_book_file(name, beside=conversations_path.parent, books_dir=books_dir)
            text = path.read_bytes().decode("utf-8")  # the spans index it as it is
            conversations += quote_turns(items, text, quotes, seed=seed)
    return chain_conversations(conversations, chain)


def _in_haystack(
    conversations: list[Any],
    conversations_path: Path,
    books_dir: Path | None,
    name: str,
    seed: int,
    cache: Path,
) -> tuple[list[Any], Path]:
    """The conversations moved into a long novel (``build_haystack``), with the directory where
    the spliced book was written (its name says the novel and the seed)."""
    from dataclasses import replace

    from folio.app.evaluation.haystack import build_haystack

    candidates = [Path(name)]
    if books_dir is not None:
        candidates.append(books_dir / name)
    candidates.append(conversations_path.parent.parent / "books" / name)
    novel_path = next((p for p in candidates if p.is_file()), None)
    if novel_path is None:
        raise click.BadParameter(f"no such book: {name}", param_hint="--haystack")
    novel = novel_path.read_text(encoding="utf-8")
    out: list[Any] = []
    folder = cache / "haystacks"
    folder.mkdir(parents=True, exist_ok=True)
    by_book: dict[str, list[Any]] = defaultdict(list)
    for conversation in conversations:
        by_book[conversation.book].append(conversation)
    for book_name, items in by_book.items():
        source = find_book_file(book_name, beside=conversations_path.parent, books_dir=books_dir)
        hay = build_haystack(source.read_text(encoding="utf-8"), items, novel, seed=seed)
        target = f"{Path(book_name).stem}-in-{novel_path.stem}-seed{seed}.txt"
        (folder / target).write_text(hay.text, encoding="utf-8")
        out += [replace(c, book=target) for c in hay.conversations]
        err_console.print(
            f"{len(items)} conversations spliced into {novel_path.name} "
            f"({len(hay.text):,} characters, {hay.insertions} excerpts, seed {seed})"
        )
    return out, folder


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
    # The eval's index is a private SQLite cache, even when the library lives in PostgreSQL.
    container = Container(
        settings.replaced(home=cache / key, conversation_store="sqlite", database_url=None)
    )
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
    table = Table(Column("mode", no_wrap=True), *headers)
    for mode, row in report.items():
        table.add_row(mode, *(str(row[c]) for c in columns))
    Console(width=max(100, Console().width)).print(table)


def _plot(report: dict[str, dict[str, float | int]], ks: tuple[int, ...], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise click.ClickException(
            "--plot needs matplotlib: pip install 'folio-reader[plot]'"
        ) from e
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
