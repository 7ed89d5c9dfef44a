"""What a person sees while folio works: the import bars and the one-time preparation of the
embedding model, on stderr and on a terminal only."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from folio.entrypoints.cli.output import err_console, escape


class RichIngestProgress:
    """Shows the ingest stages (parse, chunk, embed, store) as a progress bar."""

    LABELS: ClassVar[dict[str, str]] = {
        "parse": "Reading",
        "chunk": "Splitting",
        "embed": "Embedding",
        "store": "Saving",
    }

    def __init__(self, progress: Progress, name: str) -> None:
        self._progress = progress
        self._name = name
        self._task: Any = None

    def stage(self, name: str, total: int | None = None) -> None:
        label = f"{self._name}: {self.LABELS.get(name, name)}"
        if self._task is None:
            self._task = self._progress.add_task(label, total=total)
        else:
            self._progress.update(self._task, description=label, total=total, completed=0)

    def advance(self, n: int = 1) -> None:
        if self._task is not None:
            self._progress.advance(self._task, n)


def ingest_progress(*, enabled: bool = True) -> Progress:
    """A progress display for imports, shown only on a terminal."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
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
            f"[dim]Note: {embedded * 100 // total}% of {escape(book.title)} is indexed for meaning"
            " so far; the rest is searched by keywords only until its import finishes (run"
            " `folio add` on the file again if that import was interrupted).[/]"
        )


def prepare_embedder(container: Any) -> None:
    """Run the embedding model's one-time preparation with a word about it, rather than have the
    first import or search pause silently."""
    embedder = container.embedder
    if getattr(embedder, "is_prepared", True):
        return
    err_console.print(
        f"Preparing the embedding model {embedder.name} for this machine: a one-time export of"
        " the packaged weights to ONNX, usually 10-30 s."
    )
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
    err_console.print("[dim]Model ready; later runs reuse it.[/]")
