"""`folio books` loads only what listing needs: no numpy, no embedding, parsing, conversation or
model modules (issue 27: a one-shot listing is a fraction of a second)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from folio.bootstrap import Container
from folio.config import load_settings
from folio.entrypoints.cli.demo import bundled_book

NOT_FOR_LISTING = (
    "numpy",
    "rich.progress",
    "folio.domain.ports",
    "folio.domain.conversations",
    "folio.domain.llm",
    "folio.domain.passages",
    "folio.domain.telemetry",
    "folio.adapters.embeddings",
    "folio.adapters.parsers",
)


@pytest.fixture(scope="module")
def home_with_a_book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("startup")
    env = {"FOLIO_HOME": str(home), "FOLIO_EMBEDDING_MODEL": "hashing"}
    Container(load_settings(env=env)).ingest.execute(bundled_book())
    return home


def run_cli_reporting_imports(
    args: list[str], heavy: tuple[str, ...], env: dict[str, str]
) -> tuple[str, list[str]]:
    """Run ``folio ARGS`` through its entry point in a new interpreter; its output, and which
    of ``heavy`` it imported."""
    code = (
        "import sys\n"
        "from folio.entrypoints.cli.main import main\n"
        f"sys.argv = ['folio', *{args!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        f"print('IMPORTED', [m for m in {heavy!r} if m in sys.modules], file=sys.stderr)\n"
    )
    env = {**os.environ, **env}
    env.pop("FOLIO_CONFIG", None)
    env.pop("FOLIO_DATABASE_URL", None)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    reported = [line for line in result.stderr.splitlines() if line.startswith("IMPORTED ")]
    assert reported, result.stderr
    return result.stdout, ast.literal_eval(reported[-1].removeprefix("IMPORTED "))


@pytest.mark.parametrize("args", [["books"], ["books", "--json"]])
def test_books_imports_nothing_listing_does_not_need(
    home_with_a_book: Path, args: list[str]
) -> None:
    env = {"FOLIO_HOME": str(home_with_a_book), "COLUMNS": "120"}
    out, imported = run_cli_reporting_imports(args, NOT_FOR_LISTING, env)

    assert "Frankenstein" in out
    assert imported == []


def test_the_vectors_alias_is_still_importable_at_run_time() -> None:
    import numpy as np
    import numpy.typing as npt

    from folio.domain import ports
    from folio.domain.ports import Vectors

    assert Vectors == npt.NDArray[np.float32]
    with pytest.raises(AttributeError):
        ports.NoSuchPort  # type: ignore[attr-defined]  # noqa: B018


def test_adding_a_text_file_imports_no_other_formats_library(tmp_path: Path) -> None:
    """The parsers are imported when a file of their format comes: adding a text file pays for
    neither the PDF nor the Markdown library."""
    heavy = ("pypdf", "markdown_it", "folio.adapters.parsers.pdf")
    env = {"FOLIO_HOME": str(tmp_path), "FOLIO_EMBEDDING_MODEL": "hashing"}
    out, imported = run_cli_reporting_imports(["add", str(bundled_book())], heavy, env)

    assert "Added Frankenstein" in out
    assert imported == []


def test_each_parser_loaded_on_first_use_reads_the_formats_it_is_registered_for() -> None:
    import importlib

    from folio.adapters.parsers.registry import DEFAULT_PARSERS, OnFirstUse

    lazy = [p for p in DEFAULT_PARSERS if isinstance(p, OnFirstUse)]
    assert len(lazy) == 4
    for parser in lazy:
        module, name = parser._where
        assert getattr(importlib.import_module(module), name).formats == parser.formats
