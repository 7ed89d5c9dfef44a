"""4 real processes x 10 real chat turns on one conversation, for each store: every turn stored
once, numbered without a gap, and no error shown to anyone (benchmarks/stress_turns.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "stress_turns.py"


@pytest.mark.parametrize("store", ["sqlite", "json"])
def test_four_processes_times_ten_turns_on_one_conversation_lose_nothing(store: str) -> None:
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--stores", store, "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    (result,) = json.loads(run.stdout)
    assert (result["asked"], result["stored"], result["lost"], result["duplicated"]) == (
        40,
        40,
        0,
        0,
    ), result
    assert result["gap_free"] and result["errors_shown"] == 0, result
