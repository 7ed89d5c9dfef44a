"""Ids as folio prints them: ``folio books`` and ``folio conversations`` show the first 8
characters of an id, and every surface (the CLI, the HTTP API) takes any unique prefix of one.

Invariant: a reference names one id or none. Several matches are never guessed between: the
caller says how many there are and how many characters tell them apart. Callers pass only the ids
the user owns, so another user's ids neither match nor make a prefix ambiguous.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise


def ids_starting(ref: str, ids: Iterable[str]) -> list[str]:
    """``[ref]`` when ``ref`` is one of ``ids``; else the ids that start with it, case ignored
    (none for an empty ``ref``)."""
    wanted = ref.strip()
    if not wanted:
        return []
    known = list(dict.fromkeys(ids))
    if wanted in known:
        return [wanted]
    folded = wanted.casefold()
    return [i for i in known if i.casefold().startswith(folded)]


def chars_to_tell_apart(ids: Iterable[str]) -> int:
    """How many leading characters tell each of ``ids`` apart from all the others."""
    ordered = sorted({i.casefold() for i in ids})
    longest = max((_common_prefix(a, b) for a, b in pairwise(ordered)), default=0)
    return longest + 1


def ambiguous_prefix(ref: str, kind: str, ids: list[str]) -> str:
    """The message for a prefix ``ref`` that starts several of the ``kind``'s ``ids``."""
    return (
        f"{ref.strip()!r} starts the ids of {len(ids)} {kind}s; "
        f"give at least {chars_to_tell_apart(ids)} characters of the id"
    )


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
