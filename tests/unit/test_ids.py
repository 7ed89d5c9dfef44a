"""Ids as folio prints them: a unique prefix names one id; several are never guessed between."""

from __future__ import annotations

import pytest

from folio.app.ids import ambiguous_prefix, chars_to_tell_apart, ids_starting

IDS = ["5f4e43b4-aa", "5f4e9000-bb", "70aa0000-cc"]


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("5f4e43b4", ["5f4e43b4-aa"]),
        ("5F4E4", ["5f4e43b4-aa"]),
        ("5f4e", ["5f4e43b4-aa", "5f4e9000-bb"]),
        (" 70 ", ["70aa0000-cc"]),
        ("71", []),
        ("", []),
        ("  ", []),
    ],
)
def test_ids_starting_a_reference(ref: str, expected: list[str]) -> None:
    assert ids_starting(ref, IDS) == expected


def test_an_exact_id_wins_over_the_longer_ids_it_starts() -> None:
    assert ids_starting("ab", ["ab", "abc"]) == ["ab"]


@pytest.mark.parametrize(
    ("ids", "chars"),
    [
        (["5f4e43b4", "5f4e9000"], 5),
        (["abc1", "abc2", "ab9"], 4),  # the closest pair decides, not the first two
        (["a", "b"], 1),
        (["only"], 1),
    ],
)
def test_chars_to_tell_apart_is_one_past_the_longest_shared_start(
    ids: list[str], chars: int
) -> None:
    assert chars_to_tell_apart(ids) == chars
    assert len({i[:chars] for i in ids}) == len(ids)


def test_the_ambiguity_message_counts_the_ids_and_names_the_length() -> None:
    message = ambiguous_prefix("5f4e", "book", IDS[:2])
    assert message == "'5f4e' starts the ids of 2 books; give at least 5 characters of the id"
