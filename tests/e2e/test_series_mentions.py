"""In a series, "who is X?" looks across the whole reading window: a person met in an earlier
volume is met, so the answer quotes them instead of saying that nothing mentions them (issue 35:
the mention check looked at the current volume only and contradicted the quotes below it). A name
no read volume holds still gets the one plain sentence, and a later volume is never read."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import RunFolio, ok
from tests.series_books import write_epub

FILLER = "The rain fell on the old forum while the crowd waited in the square below the steps."


def _volume(folder: Path, number: int, name: str) -> Path:
    chapters = [
        (f"Chapter {c}", [
            f"{name} stood by the column and he spoke to the senators about the city. {FILLER}",
            f"Everyone said that {name} was honourable and grave, and {name} nodded. {FILLER}",
        ])
        for c in (1, 2, 3)
    ]  # fmt: skip
    return write_epub(folder / f"v{number}.epub", f"Ides Volume {number}", chapters,
                      series="Ides", index=str(number))  # fmt: skip


def test_a_person_of_an_earlier_volume_is_met_and_quoted(
    run_folio: RunFolio, tmp_path: Path
) -> None:
    paths = [_volume(tmp_path, n, name) for n, name in ((1, "Brutus"), (2, "Cassius"),
                                                        (3, "Octavius"))]  # fmt: skip
    ok(run_folio("add", str(paths[0]), "--position", "whole"))
    ok(run_folio("add", str(paths[1]), "--position", "Chapter 1"))
    ok(run_folio("add", str(paths[2]), "--position", "not started"))
    answer = json.loads(ok(run_folio("chat", "Ides Volume 2", "-m", "Who is Brutus?", "--json")))
    text = answer["answer"]
    assert "mentions Brutus" not in text and "Brutus" in text, text
    assert "(Ides Volume 1, Chapter 1, p. 1)" in text, text
    later = json.loads(ok(run_folio("chat", "Ides Volume 2", "-m", "Who is Octavius?", "--json")))
    assert later["answer"] == "Nothing up to Chapter 1 mentions Octavius.", later["answer"]
