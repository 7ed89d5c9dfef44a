"""What a person sees while folio works: the import bars (stage, count, rate, time left) and the
one-time preparation of the embedding model. All of it goes to stderr, on a terminal only: piped
output and ``--json`` stay clean. Nothing that may take over a second is silent."""

from __future__ import annotations

import time
from typing import Any, ClassVar

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from folio.entrypoints.cli.output import err_console, escape

# What the one-time preparation (quantising the shipped model to int8, when that model is
# configured) takes on the reference machine (2 cores, loaded: 8 s): said before it starts.
PREPARE_SECONDS = "5-15 s"
NAME_CHARS = 24  # of a file name in an import bar: the bar stays within 80 columns


class CountColumn(MofNCompleteColumn):
    """``64/141`` for a stage with a known total; nothing (not ``0/?``) for one without."""

    def render(self, task: Task) -> Text:
        return Text("") if task.total is None else super().render(task)


class RateColumn(ProgressColumn):
    """``34/s``: the rate of a stage with a known total (in the unit its count shows)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        if speed is None or task.total is None:
            return Text("")
        shown = f"{speed:.1f}" if speed < 10 else f"{speed:.0f}"
        return Text(f"{shown}/s", style="progress.data.speed")


class LeftColumn(TimeRemainingColumn):
    """``0:00:12 left`` once the rate of a stage is known; the time so far for a stage without a
    total (reading a long PDF), so that no stage looks stuck."""

    def render(self, task: Task) -> Text:
        if task.total is None:
            elapsed = int(task.finished_time or task.elapsed or 0)
            return Text(f"{elapsed // 60}:{elapsed % 60:02d} so far", style="progress.elapsed")
        if task.speed is None or task.finished:
            return Text("")
        left = super().render(task)
        return Text(f"{left.plain} left", style="progress.remaining")


class RichIngestProgress:
    """Shows the ingest stages (parse, chunk, embed, store) as one bar per file."""

    LABELS: ClassVar[dict[str, str]] = {
        "parse": "Reading",
        "chunk": "Splitting",
        "embed": "Embedding",
        "sentences": "Embedding sentences",
        "store": "Saving",
    }

    def __init__(self, progress: Progress, name: str) -> None:
        self._progress = progress
        self._name = name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"
        self._task: Any = None

    def stage(self, name: str, total: int | None = None) -> None:
        label = f"{self._name}: {self.LABELS.get(name, name)}"
        if self._task is None:
            self._task = self._progress.add_task(label, total=total)
        else:
            self._progress.reset(self._task, description=label, total=total)

    def advance(self, n: int = 1) -> None:
        if self._task is not None:
            self._progress.advance(self._task, n)


def ingest_progress(*, enabled: bool = True) -> Progress:
    """A progress display for imports, shown only on a terminal: the file and its stage, a bar,
    the count, the rate and the time left (within 80 columns)."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(bar_width=12),
        CountColumn(),
        RateColumn(),
        LeftColumn(),
        console=err_console,
        transient=True,
        disable=not (enabled and err_console.is_terminal),
    )


def embedding_note(container: Any, book: Any) -> None:
    """Say so on stderr when the book's vectors are still being filled in (an import running in
    another process, or an interrupted one): search then works on keywords for the rest."""
    embedded, total = container.searcher.vector_coverage(book)
    if embedded < total:
        err_console.print(
            f"[dim]Note: {embedded * 100 // total}% of {escape(book.name)} is indexed for meaning"
            " so far; the rest is searched by keywords only until its import finishes (run"
            " `folio add` on the file again if that import was interrupted).[/]"
        )


def prepare_embedder(container: Any) -> None:
    """Run the embedding model's one-time preparation (the int8 model's quantising; the shipped
    float32 model has none) with a word about it (what it is, how long it usually takes, then each
    step with the time so far), rather than have the first import or search pause silently."""
    embedder = container.embedder
    if getattr(embedder, "is_prepared", True):
        return
    err_console.print(
        f"Preparing the embedding model {embedder.name} for this machine (once): quantising its"
        f" packaged weights, usually {PREPARE_SECONDS}."
    )
    started = time.perf_counter()
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    ) as progress:
        task = progress.add_task("starting", total=None)
        embedder.prepare(on_step=lambda step: progress.update(task, description=step))
    err_console.print(
        f"[dim]Model ready in {time.perf_counter() - started:.0f} s; later runs reuse it.[/]"
    )
