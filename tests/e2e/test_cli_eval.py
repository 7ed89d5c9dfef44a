"""``folio eval retrieval`` and ``folio eval reformulation`` through the real entry point (a
subprocess), with FOLIO_HOME in a temporary directory, on small copies of the shared evaluation
files. The hashing embedder keeps these fast; one slow test runs the default ONNX model."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import run_folio_in

pytestmark = pytest.mark.data

MODES = ("agent", "question", "history")
KEYS = ("recall@5", "recall@10", "mrr", "turns_scored", "llm_calls_per_turn", "searches_per_turn")


def folio(
    home: Path, *args: str, embedder: str | None = "hashing"
) -> subprocess.CompletedProcess[str]:
    return run_folio_in(home, *args, env={"COLUMNS": "200"}, embedding=embedder)


def ok_json(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def coqa(shared_data: Path, tmp_path: Path) -> Path:
    """The first 4 conversations of the CoQA dev set, with its book beside them."""
    source = shared_data / "eval" / "coqa_anthology_dev.conversations.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()[:4]
    target = tmp_path / "data" / "small.conversations.jsonl"
    target.parent.mkdir()
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copy(shared_data / "eval" / "coqa_anthology_dev.txt", target.parent)
    return target


def expected_turns(path: Path, limit: int) -> tuple[int, int]:
    conversations = [json.loads(line) for line in path.read_text().splitlines()[:limit]]
    turns = [t for c in conversations for t in c["turns"]]
    return len(turns), sum(bool(t["evidence"]) for t in turns)


def test_eval_retrieval_prints_json_scores_for_each_mode(coqa: Path, folio_home: Path) -> None:
    report = ok_json(
        folio(
            folio_home, "eval", "retrieval", "--conversations", str(coqa), "--limit", "3", "--json"
        )
    )
    turns, scored = expected_turns(coqa, 3)
    assert {key.split(" ")[0] for key in report} == set(MODES)
    for mode in MODES:  # every mode also by turn depth, the depths adding up to the whole
        depths = [report[f"{mode} turns {d}"] for d in ("1-3", "4-9", "10+")]
        assert sum(d["turns_scored"] for d in depths) == report[mode]["turns_scored"]
        row = report[mode]
        assert set(KEYS) <= set(row)
        assert (row["turns"], row["turns_scored"]) == (turns, scored)
        assert 0 <= row["mrr"] <= row["recall@5"] <= row["recall@10"] <= 1
    assert report["question"]["llm_calls_per_turn"] == 0
    assert report["history"]["searches_per_turn"] == 1
    # the agent (offline) searches when it needs to (a second time for the sentence that says
    # who a name is, or before an honest "not yet"), with no model call at all
    assert 0 < report["agent"]["searches_per_turn"] <= 1.5
    assert report["agent"]["llm_calls_per_turn"] == 0
    # the earlier turns help follow-ups: the whole point of the evaluation
    assert report["history"]["recall@10"] > report["question"]["recall@10"]


def test_a_second_run_reuses_the_imported_book(coqa: Path, folio_home: Path) -> None:
    args = (
        "eval",
        "retrieval",
        "--conversations",
        str(coqa),
        "--limit",
        "1",
        "--json",
        "--mode",
        "question",
    )
    started = time.perf_counter()
    first = folio(folio_home, *args)
    first_s = time.perf_counter() - started
    started = time.perf_counter()
    second = folio(folio_home, *args)
    second_s = time.perf_counter() - started
    assert "Importing coqa_anthology_dev.txt" in first.stderr
    assert "Importing" not in second.stderr
    assert ok_json(first) == ok_json(second)
    assert len(list((folio_home / "eval").iterdir())) == 1  # one cached library for the book
    assert second_s < first_s * 1.5  # no import: not slower (timing is noisy on a shared box)


def test_plot_writes_a_png(coqa: Path, folio_home: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    plot = tmp_path / "out.png"
    result = folio(
        folio_home,
        "eval",
        "retrieval",
        "--conversations",
        str(coqa),
        "--limit",
        "1",
        "--mode",
        "question",
        "--mode",
        "history",
        "--plot",
        str(plot),
    )
    assert result.returncode == 0, result.stderr
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "question" in result.stdout and "history" in result.stdout  # the table still prints


def test_gold_history_runs_the_agent_mode_on_reference_answers(
    coqa: Path, folio_home: Path
) -> None:
    own = ok_json(
        folio(
            folio_home,
            "eval",
            "retrieval",
            "--conversations",
            str(coqa),
            "--limit",
            "2",
            "--mode",
            "agent",
            "--json",
        )
    )
    gold = ok_json(
        folio(
            folio_home,
            "eval",
            "retrieval",
            "--conversations",
            str(coqa),
            "--limit",
            "2",
            "--mode",
            "agent",
            "--gold-history",
            "--json",
        )
    )
    assert {key.split(" ")[0] for key in gold} == {"agent"}
    assert gold["agent"]["turns"] == own["agent"]["turns"]
    # each question sees the reference exchanges, not the system's long quoted answers
    assert gold["agent"]["tokens_per_turn"] < own["agent"]["tokens_per_turn"]


def test_a_malformed_conversations_file_is_one_clear_error(
    folio_home: Path, tmp_path: Path
) -> None:
    path = tmp_path / "bad.conversations.jsonl"
    path.write_text('{"id": "1", "book": "b.txt", "turns": []}\n{oops\n', encoding="utf-8")
    result = folio(folio_home, "eval", "retrieval", "--conversations", str(path))
    assert result.returncode != 0
    assert "bad.conversations.jsonl:2" in result.stderr + result.stdout
    assert "Traceback" not in result.stderr


def test_a_missing_book_is_one_clear_error(coqa: Path, folio_home: Path, tmp_path: Path) -> None:
    alone = tmp_path / "alone.conversations.jsonl"
    shutil.copy(coqa, alone)
    result = folio(folio_home, "eval", "retrieval", "--conversations", str(alone), "--limit", "1")
    assert result.returncode != 0
    assert "coqa_anthology_dev.txt" in result.stderr + result.stdout
    assert "Traceback" not in result.stderr


def test_eval_reformulation_prints_f1_per_source_against_the_copy_baseline(
    shared_data: Path, folio_home: Path
) -> None:
    data = shared_data / "eval" / "reformulation_dev.jsonl"
    report = ok_json(
        folio(
            folio_home,
            "eval",
            "reformulation",
            "--data",
            str(data),
            "--limit",
            "50",
            "--json",
            embedder=None,
        )
    )
    assert "overall" in report
    assert report["overall"]["copy"]["n"] == 50
    for row in report.values():
        # offline there is no rewriter (no rule guesses a pronoun): the copy baseline alone
        assert set(row) == {"copy"}
        assert all(0 <= v["f1"] <= 1 and 0 <= v["em"] <= 1 for v in row.values())


@pytest.mark.slow
def test_eval_retrieval_with_the_default_model(coqa: Path, folio_home: Path) -> None:
    report = ok_json(
        folio(
            folio_home,
            "eval",
            "retrieval",
            "--conversations",
            str(coqa),
            "--limit",
            "3",
            "--json",
            embedder=None,
        )
    )
    assert {key.split(" ")[0] for key in report} == set(MODES)
    assert report["agent"]["recall@10"] >= report["question"]["recall@10"]
    assert any((folio_home / "eval").iterdir())


def test_the_cli_offers_the_evaluation_modes_without_loading_numpy_at_start_up() -> None:
    from folio.app.evaluation.retrieval import MODES as APP_MODES
    from folio.entrypoints.cli.eval_retrieval import MODES as CLI_MODES

    assert CLI_MODES == APP_MODES == MODES
    code = "import sys, folio.entrypoints.cli.main; print('numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_eval_retrieval_at_whole_book_scale_in_a_haystack(
    coqa: Path, folio_home: Path, shared_data: Path
) -> None:
    """--haystack: the excerpts hidden in a whole novel; the evidence still scores."""
    args = ("eval", "retrieval", "--conversations", str(coqa), "--limit", "2", "--json",
            "--mode", "question", "--mode", "history", "--books-dir",
            str(shared_data / "books"))  # fmt: skip
    small = ok_json(folio(folio_home, *args))
    spliced = folio(folio_home, *args, "--haystack", "austen-persuasion.txt", "--seed", "3")
    whole = ok_json(spliced)
    assert "spliced into austen-persuasion.txt" in spliced.stderr
    assert whole["history"]["turns_scored"] == small["history"]["turns_scored"] > 0
    assert 0 < whole["history"]["recall@10"] <= 1
    assert any((folio_home / "eval" / "haystacks").glob("*-in-austen-persuasion-seed3.txt"))


def test_chained_sessions_switch_subject_and_score_the_turns_after_each_switch(
    coqa: Path, folio_home: Path
) -> None:
    """--chain 2: two stories in one session; the same turns, only the context changes, so the
    question alone scores as before and the turns after the switch have their own rows."""
    args = ("eval", "retrieval", "--conversations", str(coqa), "--limit", "4", "--json")
    plain = ok_json(folio(folio_home, *args))
    chained = ok_json(folio(folio_home, *args, "--chain", "2"))
    assert chained["question"] == plain["question"]
    assert chained["history"]["turns_scored"] == plain["history"]["turns_scored"]
    assert "history after switch 1-3" not in plain
    for mode in MODES:  # two sessions, one switch each, three scored turns after it
        assert chained[f"{mode} after switch 1-3"]["turns_scored"] == 6
    keys = list(chained)
    assert (
        keys.index("agent turns 10+")
        < keys.index("agent after switch 1-3")
        < keys.index("agent after switch 4+")
        < keys.index("question")
    )
    quoted = ok_json(folio(folio_home, *args, "--mode", "agent", "--quotes", "0.3"))
    assert 0 < quoted["agent quotes"]["turns_scored"] < quoted["agent"]["turns_scored"]
