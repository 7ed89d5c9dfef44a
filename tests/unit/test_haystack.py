"""Whole-book evaluation: excerpts spliced into a novel keep their evidence; depth buckets."""

from __future__ import annotations

from folio.app.evaluation.conversations import EvalConversation, EvalTurn
from folio.app.evaluation.haystack import build_haystack, excerpt_spans
from folio.app.evaluation.retrieval import depth_bucket

ANTHOLOGY = (
    "CHAPTER 1. The Mill\n\nThe miller had a daughter named Ann who sang.\n\n"
    "CHAPTER 2. The Sea\n\nA boat named Gull left the harbour at dawn.\n"
)
NOVEL = (
    "*** START OF THE PROJECT GUTENBERG EBOOK X ***\n\n"
    + "\n\n".join(f"Paragraph {n} of the long novel, plain and quiet." for n in range(40))
    + "\n\n*** END OF THE PROJECT GUTENBERG EBOOK X ***\nlicence text\n"
)


def _conversation(cid: str, phrase: str) -> EvalConversation:
    start = ANTHOLOGY.index(phrase)
    turn = EvalTurn("q", ("a",), ((start, start + len(phrase)),))
    return EvalConversation(cid, "anthology.txt", (turn, turn))


def test_excerpts_are_the_chapters_of_the_anthology() -> None:
    spans = excerpt_spans(ANTHOLOGY)
    assert [ANTHOLOGY[s:e].split(".")[0] for s, e in spans] == ["CHAPTER 1", "CHAPTER 2"]


def test_every_evidence_span_points_at_the_same_text_in_the_haystack() -> None:
    conversations = [_conversation("c1", "named Ann"), _conversation("c2", "named Gull")]
    for seed in range(5):
        hay = build_haystack(ANTHOLOGY, conversations, NOVEL, seed=seed)
        assert hay.insertions == 2
        for before, after in zip(conversations, hay.conversations, strict=True):
            for t0, t1 in zip(before.turns, after.turns, strict=True):
                for (s, e), (s2, e2) in zip(t0.evidence, t1.evidence, strict=True):
                    assert hay.text[s2:e2] == ANTHOLOGY[s:e]
        # the novel is whole and in order, and nothing went into the Gutenberg licence
        body = hay.text.split("*** END OF")[0]
        assert "named Ann" in body and "named Gull" in body
        positions = [hay.text.index(f"Paragraph {n} of") for n in range(40)]
        assert positions == sorted(positions)
    same = build_haystack(ANTHOLOGY, conversations, NOVEL, seed=1)
    assert same.text == build_haystack(ANTHOLOGY, conversations, NOVEL, seed=1).text


def test_turns_fall_in_depth_buckets() -> None:
    assert [depth_bucket(n) for n in (1, 3, 4, 9, 10, 25)] == [
        "turns 1-3", "turns 1-3", "turns 4-9", "turns 4-9", "turns 10+", "turns 10+"
    ]  # fmt: skip
