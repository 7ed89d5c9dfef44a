"""Reciprocal rank fusion: equal or weighted votes of several rankings."""

from __future__ import annotations

import pytest

from folio.domain.search import reciprocal_rank_fusion


def test_an_item_both_rankings_hold_beats_one_only_one_ranks_first() -> None:
    fused = reciprocal_rank_fusion({"a": 1, "both": 2}, {"b": 1, "both": 2}, k=10)

    assert fused["both"] == pytest.approx(2 / 12)
    assert max(fused, key=lambda c: fused[c]) == "both"


def test_a_weight_counts_a_ranking_that_many_times() -> None:
    own, prior = {"a": 1, "t": 8}, {"t": 1, "a": 6}

    equal = reciprocal_rank_fusion(own, prior)
    weighted = reciprocal_rank_fusion(own, prior, weights=(1.0, 2.0))

    assert equal["a"] > equal["t"]
    assert weighted["t"] == pytest.approx(1 / 18 + 2 / 11)
    assert weighted["t"] > weighted["a"]


def test_weights_must_match_the_rankings() -> None:
    with pytest.raises(ValueError, match="one weight per ranking"):
        reciprocal_rank_fusion({"a": 1}, {"b": 1}, weights=(1.0,))
