"""From folio's text back to KOReader: the xpointer of a place in an EPUB, so that a citation
opens its passage on the device (``GotoXPointer``).

It is the inverse of ``folio.domain.sync``'s reading of a pushed xpointer (``parse_xpointer``,
``nonblank_before``, ``offset_after_nonblank``), on the same ``Fragment`` structure: a place is the
count of non-blank characters of its spine document before it; the text node holding that
character is the one whose anchor is the last at or before the count; the offset inside the node
is the count past the anchor, in the node's own characters (the fragment's ``density`` converts).
The xpointer is written in crengine's classic form (``/body/DocFragment[N]/body/div/p[3]/
text().45``: an index only among siblings of one name), which every KOReader reads.

Invariant: parsing the xpointer written for ``offset`` back (``parse_xpointer``, then
``nonblank_before`` and ``offset_after_nonblank`` on the same fragment and text) gives the place
just after the first non-blank character at or after ``offset``: inside a passage that starts
there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from folio.domain.sync import Fragment

_TEXT_NODE = "/text()"


def fragment_at(fragments: Sequence[Fragment], offset: int) -> Fragment | None:
    """The spine document holding ``offset`` of folio's text (the next one for an offset
    between two documents); ``None`` past the last."""
    for fragment in sorted(fragments, key=lambda f: f.char_start):
        if offset < fragment.char_end:
            return fragment
    return None


def xpointer_at(fragment: Fragment, text: str, offset: int) -> str:
    """The xpointer of ``offset`` (an offset of folio's text) in ``fragment``, whose text in
    folio is ``text`` (from ``fragment.char_start`` to ``fragment.char_end``)."""
    local = min(max(0, offset - fragment.char_start), len(text))
    before = _nonblank(text[:local])
    total = before + _nonblank(text[local:])
    wanted = min(before, max(0, total - 1))  # the non-blank character to point into (0-based)
    path, anchor = _text_node(fragment, wanted)
    head = f"/body/DocFragment[{fragment.index}]"
    if path is None:
        return f"{head}/body"
    return f"{head}{path}.{_raw_offset(wanted + 1 - anchor, fragment.density)}"


def _nonblank(text: str) -> int:
    return sum(1 for c in text if not c.isspace())


def _text_node(fragment: Fragment, wanted: int) -> tuple[str | None, int]:
    """The path and anchor of the text node holding the ``wanted``-th non-blank character: the
    last text node starting at or before it (each anchored text node holds a non-blank
    character, so their anchors increase in document order)."""
    best: tuple[str | None, int] = (None, 0)
    for path, count in fragment.anchors.items():
        if _TEXT_NODE not in path or count > wanted:
            continue
        if best[0] is None or count > best[1]:
            best = (path, count)
    return best


def _raw_offset(count: int, density: float) -> int:
    """The smallest offset in a text node's own characters that ``nonblank_before`` reads as
    ``count`` non-blank characters (``int(offset * density)``)."""
    if count <= 0:
        return 0
    d = density if 0 < density <= 1 else 1.0
    raw = max(0, math.ceil(count / d))
    while raw > 0 and int((raw - 1) * d) >= count:
        raw -= 1
    while int(raw * d) < count:
        raw += 1
    return raw
