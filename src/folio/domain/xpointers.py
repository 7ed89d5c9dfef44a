"""From folio's text to KOReader's xpointers and back, on one EPUB's ``Fragment`` structure
(``adapters/parsers/crengine_dom`` builds it by crengine's rules).

- Reading (``place_in_fragment``, progress sync): the element or text node the xpointer names,
  else its nearest ancestor folio knows, gives how many non-blank characters of the spine
  document come before it (its anchor). In a text node the offset counts the node's characters as
  crengine keeps them (``PreProcessXmlString`` in crengine/src/lvxml.cpp: entities are one
  character, a run of blanks is one space, each blank one inside ``<pre>``): it is walked over
  folio's text from the node's first non-blank character, each non-blank character one step and
  each run of blanks one step, after the blanks the node starts with (its point anchor
  ``<path>.<n>``). At an element the offset is a child index (``ldomXPointer``), not
  characters: the element's start.
- Writing (``xpointer_at``, citations): the text node holding the place is the one whose anchor
  is the last at or before it; the offset is the same walk the other way. The xpointer is
  written in crengine's classic form (``/body/DocFragment[N]/body/div/p[3]/text().45``: an index
  only among several siblings of one name), which every KOReader reads, or with
  ``explicit_first`` in the form of its DOM 20260812 (every step indexed, ``toStringV2``'s
  ``explicitFirstIndex``).

Invariant: the xpointer written for ``offset``, read back on the same fragment and text, gives
the place just after the first non-blank character at or after ``offset``: inside a passage that
starts there. A spine document without text (an image or SVG page) holds no place.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice

from folio.domain.sync import Fragment, XPointer, canonical_path, offset_after_nonblank

# elements whose text crengine keeps blank for blank (fb2def.h: white-space pre)
PRE_ELEMENTS = frozenset({"pre", "listing", "textarea", "plaintext", "xmp"})


def fragment_at(fragments: Sequence[Fragment], offset: int) -> Fragment | None:
    """The spine document holding ``offset`` of folio's text (the next one for an offset
    between two documents); ``None`` past the last. A DocFragment without text (an image
    page) holds no offset."""
    for fragment in sorted(fragments, key=lambda f: f.char_start):
        if offset < fragment.char_end and fragment.char_start < fragment.char_end:
            return fragment
    return None


def place_in_fragment(fragment: Fragment, pointer: XPointer, text: str) -> int:
    """Where ``pointer`` lies in ``text`` (folio's text of ``fragment``): just after the
    non-blank characters before it. In a text node folio knows, the offset is walked over
    ``text`` as crengine counts it (each run of blanks one character, a leading blank as the
    node's point anchor says; an offset past the node's end at that end); at an element (its
    offset is a child index) or at a node folio does not know (then its nearest known
    ancestor), its start."""
    anchors = _canonical(fragment.anchors)
    target = canonical_path(pointer.path)
    current = target
    while current and current not in anchors:
        current = current.rsplit("/", 1)[0]
    if not current:
        return 0
    count = anchors[current]
    if current != target or not _is_text_step(target.rsplit("/", 1)[-1]):
        return offset_after_nonblank(text, count)
    lead = _lead(anchors, target)
    seen = _nonblank_within(text, count, pointer.text_offset - lead, pre=_in_pre(target))
    # an offset past the node's end stays in the node: the next node starts at the next count
    following = [c for c in anchors.values() if c > count]
    if following:
        seen = min(seen, min(following) - count)
    return offset_after_nonblank(text, count + seen)


def xpointer_at(fragment: Fragment, text: str, offset: int, *, explicit_first: bool = False) -> str:
    """The xpointer of ``offset`` (an offset of folio's text) in ``fragment``, whose text in
    folio is ``text`` (from ``fragment.char_start`` to ``fragment.char_end``): in crengine's
    classic form, or with ``explicit_first`` in the form of its DOM 20260812 (every step
    indexed: ``/body[1]/DocFragment[3]/body[1]/p[1]/text()[1].0``)."""
    local = min(max(0, offset - fragment.char_start), len(text))
    before = _nonblank(text[:local])
    total = before + _nonblank(text[local:])
    wanted = min(before, max(0, total - 1))  # the non-blank character to point into (0-based)
    path, anchor = _text_node(fragment, wanted)
    head = f"/body/DocFragment[{fragment.index}]"
    if path is None:
        return _form(f"{head}/body", explicit_first)
    lead = _lead(_canonical(fragment.anchors), canonical_path(path))
    pre = _in_pre(canonical_path(path))
    raw = lead + _crengine_chars(text, anchor, wanted + 1 - anchor, pre=pre)
    return _form(f"{head}{path}", explicit_first) + f".{raw}"


def _canonical(anchors: dict[str, int]) -> dict[str, int]:
    return {_canonical_key(key): count for key, count in anchors.items()}


def _canonical_key(key: str) -> str:
    """An anchor's key without ``[1]`` indexes, a point anchor's ``.<n>`` kept."""
    head, _, last = key.rpartition("/")
    if _is_text_step(last) and "." in last:
        step, point = last.split(".", 1)
        return f"{canonical_path(f'{head}/{step}')}.{point}"
    return canonical_path(key)


def _is_text_step(step: str) -> bool:
    return step.startswith("text()")


def _in_pre(path: str) -> bool:
    """Is the node inside an element crengine keeps blanks in (fb2def.h: ``css_ws_pre``)?"""
    return any(step.split("[", 1)[0] in PRE_ELEMENTS for step in path.split("/"))


def _lead(anchors: dict[str, int], text_path: str) -> int:
    """How many blank characters start the text node (its point anchor ``<path>.<n>``)."""
    prefix = text_path + "."
    return next((int(k[len(prefix) :]) for k in anchors if k.startswith(prefix)), 0)


def _start_of(text: str, count: int) -> int:
    """The index of the non-blank character after ``count`` others (``len(text)`` if none)."""
    return offset_after_nonblank(text, count + 1) - 1 if count < _nonblank(text) else len(text)


def _walk(text: str, count: int, *, pre: bool) -> Iterator[int]:
    """A text node's characters as crengine counts them (a run of blanks is one, each blank in
    ``pre``), the node starting at the non-blank character after ``count`` others of ``text``:
    after each, how many non-blank characters have been passed."""
    seen = 0
    i = _start_of(text, count)
    while i < len(text):
        if text[i].isspace() and not pre:
            while i < len(text) and text[i].isspace():
                i += 1
        else:
            seen += 0 if text[i].isspace() else 1
            i += 1
        yield seen


def _nonblank_within(text: str, count: int, chars: int, *, pre: bool = False) -> int:
    """How many non-blank characters the first ``chars`` characters of a text node hold (the
    node as ``_walk`` reads it)."""
    return max(islice(_walk(text, count, pre=pre), max(0, chars)), default=0)


def _crengine_chars(text: str, count: int, nonblank: int, *, pre: bool = False) -> int:
    """How many characters, as crengine counts them, a text node (as ``_walk`` reads it) holds
    up to its ``nonblank``-th non-blank character, included (the inverse of
    ``_nonblank_within``)."""
    walked = 0
    if nonblank <= 0:
        return walked
    for seen in _walk(text, count, pre=pre):
        walked += 1
        if seen >= nonblank:
            break
    return walked


def _form(path: str, explicit_first: bool) -> str:
    """``path`` with ``[1]`` on every step that has no index (DOM 20260812), or as it is."""
    if not explicit_first:
        return path
    steps = path.split("/")
    return "/".join(s if not s or s.endswith("]") else f"{s}[1]" for s in steps)


def _nonblank(text: str) -> int:
    return sum(1 for c in text if not c.isspace())


def _text_node(fragment: Fragment, wanted: int) -> tuple[str | None, int]:
    """The path and anchor of the text node holding the ``wanted``-th non-blank character: the
    last text node starting at or before it (each anchored text node holds a non-blank
    character, so their anchors increase in document order)."""
    best: tuple[str | None, int] = (None, 0)
    for path, count in fragment.anchors.items():
        last = path.rsplit("/", 1)[-1]
        if not _is_text_step(last) or "." in last or count > wanted:
            continue
        if best[0] is None or count > best[1]:
            best = (path, count)
    return best
