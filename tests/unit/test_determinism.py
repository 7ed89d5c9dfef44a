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

ANSWER = """
from folio.agent.offline.extractive import best_sentences
from folio.domain.passages import Passage
texts = [
    "When they came in, Stuyvesant looked at the door. Then Phonny went out.",
    "Later Phonny and Stuyvesant knocked at the door of the shop.",
    "The boys ran home. At home Stuyvesant and Phonny ate supper.",
]
passages = [Passage(f"c{i}", "Chapter 7", "3", "3", 0, len(t), t) for i, t in enumerate(texts)]
print(best_sentences("Who knocked on the door?", passages, 3))
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


def test_offline_answers_pick_the_same_sentences_in_every_process() -> None:
    assert len(_in_processes(ANSWER)) == 1
