"""An xpointer whose text offset runs past the end of its text node (a careless client, or a node
crengine counts longer than folio's text of it) is placed at the end of that node, never in the
paragraphs after it: the device is in that node, and a place past it would show text it has not
reached (``domain.xpointers.place_in_fragment``)."""

from __future__ import annotations

from folio.domain.sync import Fragment, parse_xpointer
from folio.domain.xpointers import place_in_fragment

TEXT = "One two three.\nFour five six.\nSeven eight nine."
FRAGMENT = Fragment(
    index=2,
    char_start=0,
    char_end=len(TEXT),
    anchors={
        "/body": 0,
        "/body/p[1]": 0,
        "/body/p[1]/text()": 0,
        "/body/p[2]": 12,
        "/body/p[2]/text()": 12,
        "/body/p[3]": 24,
        "/body/p[3]/text()": 24,
    },
)


def _place(xpointer: str) -> int:
    pointer = parse_xpointer(xpointer)
    assert pointer is not None
    return place_in_fragment(FRAGMENT, pointer, TEXT)


def test_an_offset_inside_a_node_lands_on_its_character() -> None:
    assert TEXT[: _place("/body/DocFragment[2]/body/p[2]/text().4")] == "One two three.\nFour"


def test_an_offset_past_the_end_of_a_node_stays_in_that_node() -> None:
    end_of_p2 = TEXT.index("six.") + len("six.")
    assert _place("/body/DocFragment[2]/body/p[2]/text().14") == end_of_p2
    assert _place("/body/DocFragment[2]/body/p[2]/text().99999") == end_of_p2
    assert _place("/body/DocFragment[2]/body/p[1]/text().500") == TEXT.index("three.") + 6


def test_the_last_node_of_a_fragment_ends_with_the_fragment() -> None:
    assert _place("/body/DocFragment[2]/body/p[3]/text().99999") == len(TEXT)
