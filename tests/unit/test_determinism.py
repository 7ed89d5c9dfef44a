"""The same question on the same book gets the same passages and the same answer in every process:
ties are broken by rank and order of appearance, never by Python's per-process string hashing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

FUSION = """
from folio.domain.search import reciprocal_rank_fusion
own = {f"own-{i}": i for i in range(1, 31)}
prior = {f"prior-{i}": i for i in range(1, 31)}
fused = reciprocal_rank_fusion(own, prior)
print(sorted(fused, key=lambda c: -fused[c])[:10])
"""

LEXICON = """
from folio.domain.lexicon import Lexicon
text = ("When they came in, Mr. Stuyvesant looked at the door. Then Phonny went out. "
        "Later Phonny and Stuyvesant knocked at the door of Miss Stuyvesant. "
        "At home Mr. Stuyvesant and Phonny ate supper with Miss Stuyvesant. ") * 3
lexicon = Lexicon.of(text)
print([(n.name, sorted(n.aliases), c) for n, c, _ in lexicon.people(0, len(text), 10)])
print(lexicon.find("Stuyvesant").name)
"""


def _in_processes(code: str) -> set[str]:
    outputs = set()
    for seed in ("1", "2", "3", "4", "5"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.add(done.stdout)
    return outputs


def test_fused_rankings_break_ties_the_same_way_in_every_process() -> None:
    outputs = _in_processes(FUSION)
    assert len(outputs) == 1
    # a tie between the query's n-th passage and the conversation's n-th: the query's first
    assert outputs.pop().startswith("['own-1', 'prior-1', 'own-2', 'prior-2'")


def test_the_books_lexicon_is_the_same_in_every_process() -> None:
    outputs = _in_processes(LEXICON)
    assert len(outputs) == 1
    assert "Miss Stuyvesant" in outputs.pop()
