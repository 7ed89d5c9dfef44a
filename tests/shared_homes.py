"""Data directories that cost a real-model import, built ONCE for the whole test run.

Under pytest-xdist every worker is its own session, so a session fixture would import the same
book once per worker. ``built_once`` builds a directory in the run's shared temporary folder under
a file lock: the first worker to ask builds it, the others wait and reuse it. Nobody opens a
built directory in place: tests copy it (``copy_home``) and work on their copy. ``computed_once``
does the same for a value (pickled), such as the turns of a conversation played once.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from filelock import FileLock

BUILT = ".built"
T = TypeVar("T")


def run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder all workers of this run share (the session's own without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """``root/name``, made by ``build(path)`` on first use in this run; a failed build leaves
    nothing behind, so the next caller tries again (and fails the same way, with its error)."""
    target = run_root(tmp_path_factory) / name
    with FileLock(str(target) + ".lock"):
        if (target / BUILT).exists():
            return target
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        try:
            build(target)
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
        (target / BUILT).touch()
    return target


def computed_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, compute: Callable[[Path], T]
) -> T:
    """What ``compute(folder)`` returns, computed by the first worker of the run that asks and
    pickled for the others: for a module fixture whose tests pytest-xdist spreads over several
    workers, which would each compute it again. ``folder`` is the build's own directory."""

    def build(root: Path) -> None:
        (root / "value.pickle").write_bytes(pickle.dumps(compute(root)))

    root = built_once(tmp_path_factory, name, build)
    value: T = pickle.loads((root / "value.pickle").read_bytes())
    return value


def save_process(result: subprocess.CompletedProcess[str], path: Path) -> None:
    path.write_text(json.dumps([result.args, result.returncode, result.stdout, result.stderr]))


def load_process(path: Path) -> subprocess.CompletedProcess[str]:
    args, code, out, err = json.loads(path.read_text())
    return subprocess.CompletedProcess(args, code, out, err)
