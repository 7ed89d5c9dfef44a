"""The layers of ../shared/design/ARCHITECTURE.md as import-linter checks them (the contracts are in
pyproject.toml): ``make lint`` runs ``lint-imports``, and so does the suite, in its own process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_layer_imports_what_the_architecture_forbids() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    assert lint_imports.is_file(), f"no {lint_imports}: pip install -e '.[dev]'"
    done = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert " 0 broken" in done.stdout, done.stdout
