"""The reformulation evaluation on the shared CANARD / TREC CAsT file, and its input checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from folio.app.evaluation.reformulation import (
    COPY,
    OVERALL,
    EvalDataError,
    ReformulationItem,
    evaluate_reformulation,
    load_reformulation_items,
)

pytestmark = pytest.mark.data


@pytest.fixture(scope="module")
def items(shared_data: Path) -> list[ReformulationItem]:
    return load_reformulation_items(shared_data / "eval" / "reformulation_dev.jsonl")


def test_copy_baseline_matches_the_published_reference_point(
    items: list[ReformulationItem],
) -> None:
    report = evaluate_reformulation(items, {})
    assert 0.66 <= report.scores["CANARD dev"][COPY].f1 <= 0.72
    assert report.to_dict()[OVERALL][COPY]["n"] == len(items)


def test_a_canard_topic_reaches_the_rewriter_as_a_leading_exchange() -> None:
    item = ReformulationItem(
        "x", "CANARD", "What was his style?", ("r",), (), "Y. A. Tittle / Style"
    )
    assert item.context() == (("Y. A. Tittle", "Style"),)


def test_a_malformed_line_is_reported_with_its_number(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    good = '{"question": "Why?", "rewrites": ["Why did he go?"], "history": [["q", null]]}'
    path.write_text(f"{good}\n{{not json\n", encoding="utf-8")
    with pytest.raises(EvalDataError, match="line 2"):
        load_reformulation_items(path)


def test_missing_rewrites_and_bad_history_are_rejected(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"question": "Why?", "rewrites": []}\n', encoding="utf-8")
    with pytest.raises(EvalDataError, match="line 1: 'rewrites'"):
        load_reformulation_items(path)
    path.write_text(
        '{"question": "Why?", "rewrites": ["a"], "history": [["q"]]}\n', encoding="utf-8"
    )
    with pytest.raises(EvalDataError, match="history"):
        load_reformulation_items(path)


def test_an_unreadable_or_empty_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EvalDataError, match="cannot read"):
        load_reformulation_items(tmp_path / "absent.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(EvalDataError, match="no items"):
        load_reformulation_items(empty)


def test_the_cli_command_prints_json_scores_and_a_clear_error_for_a_bad_file(
    tmp_path: Path,
) -> None:
    from click.testing import CliRunner

    from folio.entrypoints.cli.eval_reformulation import reformulation_cmd

    data = tmp_path / "r.jsonl"
    line = (
        '{"source": "S (x)", "history": [["Who is Elizabeth Lavenza?", null]], '
        '"question": "Where was she born?", "rewrites": ["Where was Elizabeth Lavenza born?"]}'
    )
    data.write_text(line + "\n", encoding="utf-8")
    result = CliRunner().invoke(reformulation_cmd, ["--data", str(data), "--json"], obj=None)
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    assert scores["S"]["copy"]["em"] == 0.0 and set(scores["S"]) == {"copy"}
    data.write_text(line + "\n[1, 2]\n", encoding="utf-8")
    bad = CliRunner().invoke(reformulation_cmd, ["--data", str(data)], obj=None)
    assert bad.exit_code == 1 and "line 2" in bad.output and "Traceback" not in bad.output
