"""What a person sees while folio works: the import bar's rate and time left, and the one-time
model preparation announced with what it is and how long it usually takes."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest
from rich.console import Console
from rich.progress import Progress

from folio.entrypoints.cli import progress as view


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def render(progress: Progress) -> str:
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(progress.make_tasks_table(progress.tasks))
    return out.getvalue()


def test_the_embedding_stage_shows_its_rate_and_the_time_left_within_80_columns() -> None:
    clock = Clock()
    progress = view.ingest_progress()
    progress.get_time = clock  # type: ignore[method-assign]
    for task in progress.tasks:
        progress.remove_task(task.id)
    bar = view.RichIngestProgress(progress, "frankenstein-a-very-long-file-name.epub")
    bar.stage("parse")
    clock.now += 3.0
    assert "0:03 so far" in render(progress)
    assert "left" not in render(progress) and "?" not in render(progress)
    bar.stage("embed", total=400)
    for _ in range(10):
        clock.now += 1.0
        bar.advance(20)

    line = render(progress)
    assert "frankenstein-a-very-lon…: Embedding" in line and "200/400" in line
    assert "20/s" in line and "0:00:10 left" in line
    assert len(line.rstrip("\n").splitlines()) == 1, line  # one line within 80 columns


class FakeEmbedder:
    name = "all-MiniLM-L6-v2-int8"

    def __init__(self) -> None:
        self.is_prepared = False
        self.steps: list[str] = []

    def prepare(self, on_step: Callable[[str], None]) -> None:
        for step in ("quantising the model to int8",):
            on_step(step)
            self.steps.append(step)
        self.is_prepared = True


class Container:
    def __init__(self) -> None:
        self.embedder = FakeEmbedder()


def test_the_one_time_preparation_is_announced_with_what_it_is_and_how_long_it_takes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    monkeypatch.setattr(view, "err_console", Console(file=out, width=200, color_system=None))
    container = Container()

    view.prepare_embedder(container)
    view.prepare_embedder(container)  # prepared: nothing more is said

    said = out.getvalue()
    assert said.count("Preparing the embedding model all-MiniLM-L6-v2-int8") == 1
    assert f"usually {view.PREPARE_SECONDS}" in said and "(once)" in said
    assert "Model ready in " in said and "later runs reuse it" in said
    assert container.embedder.steps == ["quantising the model to int8"]
