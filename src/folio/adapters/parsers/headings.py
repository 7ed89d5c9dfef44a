"""Chapter headings in plain text ("CHAPTER IV", "Letter 3", "BOOK II", "ACT I", "PART 2", ...).

A play's scenes are its chapters, its acts folded into them like parts ("ACT II, SCENE I"; the
First Folio's "Actus Secundus. Scena Prima" too).

Used by the plain-text and PDF parsers. A heading line may carry its title ("CHAPTER 1.
Loomings.") or be followed by a short title paragraph ("CHAPTER 42" / "The Whiteness of The
Whale."). Headings with no body before the next heading are a table of contents and are dropped,
except that a part/volume heading directly before a chapter heading is folded into it ("PART I,
CHAPTER I. THE TRAIL OF THE MEAT").

Invariant: the returned offsets are sorted and point at the first character of a heading line.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

_ROMAN = r"(?=[MDCLXVI])M{0,3}(?:C[MD]|D?C{0,3})(?:X[CL]|L?X{0,3})(?:I[XV]|V?I{0,3})"
_WORDS = (
    r"(?i:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|first|second|third|fourth|fifth|sixth|"
    r"seventh|eighth|ninth|tenth|last|"
    # the First Folio's Latin: "Actus Secundus. Scena Prima", "Scaena Tertia"
    r"(?:prim|secund|terti|quart|quint|sext|septim|octa[uv]|non|decim)(?:us|a))"
)
_NUMBER = rf"(?:\d{{1,3}}|{_ROMAN}|{_WORDS})"
# a play's divisions: a line after their heading is a stage direction ("Enter Polonius, and
# Reynoldo."), not a title
_ACTS = ("ACT", "ACTUS")
_SCENES = ("SCENE", "SCENA", "SCAENA", "SCOENA")
_STAGED = frozenset((*_ACTS, *_SCENES))
# a heading of these may be folded into the chapter (or scene) after it
_MAJOR = ("VOLUME", "BOOK", "PART", *_ACTS)
_KEYWORDS = ("CHAPTER", "LETTER", "STAVE", "CANTO", *_SCENES, *_MAJOR)
_KEYWORD = "|".join(f"{k}|{k.title()}" for k in _KEYWORDS)
_NUMBERED = re.compile(rf"^\s{{0,40}}\[?(?P<head>(?P<kw>{_KEYWORD})\s+{_NUMBER})\b(?P<rest>.*)$")
_NAMED = re.compile(r"^\s{0,40}(?P<head>EPILOGUE|Epilogue|PROLOGUE|Prologue)\.?\s*$")
_ROMAN_TITLED = re.compile(rf"^\s{{0,40}}(?P<head>{_ROMAN})\.\s+(?P<title>[A-Z][^,;]{{0,60}})$")
_REST_EMPTY = re.compile(r"^[\s.:\]]*$")
_FIRST_VERSE = re.compile(r"^1:1\s")
_REST_PUNCT_TITLE = re.compile(r"^\s*[.:\-—–]+\s*(?P<title>[\w\"'‘“].{0,80}?)\s*\]?\s*$")
_REST_CAPS_TITLE = re.compile(r"^\s+(?P<title>[A-Z][A-Z0-9 ,;:'’\-]{1,80}?)\s*\]?\s*$")
_TITLE_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_SMALL_WORDS = frozenset(
    {"a", "an", "and", "as", "at", "but", "by", "for", "from", "in", "into", "is", "of", "on", "or"}
    | {"the", "to", "with", "which"}
)
_TITLE_DECORATION = "_*}{ "
MIN_SHOUTED = 5  # titles in capitals a text without other headings needs for them to count
MAX_SHOUTED_CHARS = 60
MAX_SHOUTED_REPEATS = 3  # "HOLY THURSDAY" of Innocence and of Experience
_CAPITALS = re.compile(r"[A-Z]{2}")
MAX_TITLE_WORDS = 16
MAX_TITLE_CHARS = 100


@dataclass(frozen=True, slots=True)
class _Line:
    start: int  # offset of the first non-space character
    text: str  # stripped


@dataclass(frozen=True, slots=True)
class _Heading:
    line: int  # index of the heading line
    last_line: int  # index of its last line (the subtitle's, when it has one)
    start: int
    title: str
    major: bool
    head: str  # "Volume II" of "Volume II. The Return"


def _lines(text: str) -> list[_Line]:
    out = []
    offset = 0
    for raw in text.split("\n"):
        stripped = raw.strip()
        out.append(_Line(offset + (len(raw) - len(raw.lstrip())), stripped))
        offset += len(raw) + 1
    return out


def _clean_head(head: str) -> str:
    return " ".join(head.split()).rstrip(".:]")


def _match_heading(lines: list[_Line], i: int) -> tuple[str, str | None, bool] | None:
    """(head, inline title or None, is_major) when line ``i`` is a heading line."""
    text = lines[i].text
    if not text or len(text) > 100:
        return None
    if m := _NUMBERED.match(text):
        rest = m.group("rest")
        major = m.group("kw").upper() in _MAJOR
        if _REST_EMPTY.match(rest):
            return _clean_head(m.group("head")), None, major
        titled = _REST_PUNCT_TITLE.match(rest) or _REST_CAPS_TITLE.match(rest)
        # a scene's title is where it is set, in sentence case: "SCENE I. Elsinore. A platform
        # before the castle."
        staged = m.group("kw").upper() in _STAGED
        if titled and (staged or _title_like(titled.group("title"))):
            return _clean_head(m.group("head")), titled.group("title"), major
        return None
    if m := _NAMED.match(text):
        return _clean_head(m.group("head")), None, False
    m = _ROMAN_TITLED.match(text)
    if m and _stands_alone(lines, i) and _title_like(m.group("title")):
        return m.group("head"), m.group("title"), False
    if _stands_alone(lines, i) and _title_like(text) and _opens_verses(lines, i):
        return " ".join(text.split()), None, False
    return None


def _shouted(lines: list[_Line], i: int) -> bool:
    """A short line in capitals standing alone: "THE SICK ROSE", "NURSE'S SONG"."""
    text = lines[i].text
    return (
        _stands_alone(lines, i)
        and len(text) <= MAX_SHOUTED_CHARS
        and text.upper() == text
        and _CAPITALS.search(text) is not None
        and not text.startswith("[")
    )


def _opens_verses(lines: list[_Line], i: int) -> bool:
    """Does the first paragraph after line ``i`` open with chapter 1, verse 1 ("1:1 In the
    beginning...")? Then line ``i`` names a book of scripture ("The Book of Ruth", "Ezra")."""
    j = i + 1
    while j < len(lines) and j <= i + 3 and not lines[j].text:
        j += 1
    return j < len(lines) and _FIRST_VERSE.match(lines[j].text) is not None


def _blank(lines: list[_Line], i: int) -> bool:
    return i < 0 or i >= len(lines) or not lines[i].text


def _stands_alone(lines: list[_Line], i: int) -> bool:
    return _blank(lines, i - 1) and _blank(lines, i + 1)


def _title_like(text: str) -> bool:
    """Short, and its words (bar small ones) capitalised: "The Whiteness of The Whale."."""
    words: list[str] = _TITLE_WORD.findall(text)
    content = [w for w in words if w.lower() not in _SMALL_WORDS]
    if not content or len(words) > MAX_TITLE_WORDS or len(text) > MAX_TITLE_CHARS:
        return False
    return sum(w[0].isupper() for w in content) >= 0.75 * len(content)


def _subtitle(lines: list[_Line], i: int) -> tuple[str, int] | None:
    """A short title paragraph (one or two lines, within two blank lines) after heading line ``i``:
    its text and the index of its last line."""
    j = i + 1
    while j < len(lines) and j <= i + 3 and not lines[j].text:
        j += 1
    if j >= len(lines) or not lines[j].text or lines[j].text.startswith("["):
        return None
    for last in (j, j + 1):
        if last < len(lines) and lines[last].text and _blank(lines, last + 1):
            parts = [lines[k].text for k in range(j, last + 1)]
            if any(_match_heading(lines, k) for k in range(j, last + 1)):
                return None
            text = " ".join(parts).strip(_TITLE_DECORATION)
            return (text, last) if _title_like(text) and not text.endswith((",", ";")) else None
    return None


def _candidates(lines: list[_Line]) -> Iterator[_Heading]:
    for i in range(len(lines)):
        found = _match_heading(lines, i)
        if found is None:
            continue
        head, title, major = found
        last = i
        staged = head.split()[0].upper() in _STAGED
        if title is None and not staged and (sub := _subtitle(lines, i)) is not None:
            title, last = sub
        full = f"{head}. {title}" if title else head
        yield _Heading(i, last, lines[i].start, full, major, head)


def _has_body(lines: list[_Line], after: int, before: int) -> bool:
    return any(lines[k].text for k in range(after + 1, before))


def find_headings(text: str) -> list[tuple[int, str]]:
    """``(char_start, title)`` of each chapter heading in ``text``, in order; in a text with no
    heading of those, its titles in capitals standing alone (a book of poems: "THE TIGER"), when
    it has ``MIN_SHOUTED`` of them."""
    lines = _lines(text)
    found = list(_candidates(lines))
    if not found:
        shouted = [_Heading(i, i, lines[i].start, lines[i].text, False, lines[i].text)
                   for i in range(len(lines)) if _shouted(lines, i)]  # fmt: skip
        # a line on every page (a running head: "THE GREAT GATSBY") titles nothing
        times = Counter(h.title for h in shouted)
        shouted = [h for h in shouted if times[h.title] <= MAX_SHOUTED_REPEATS]
        found = shouted if len(shouted) >= MIN_SHOUTED else []
    out: list[tuple[int, str]] = []
    run: list[_Heading] = []
    within = ""  # the part (act, volume) the chapters since its heading lie in: "Volume II"
    for k, heading in enumerate(found):
        run.append(heading)
        next_line = found[k + 1].line if k + 1 < len(found) else len(lines)
        if not _has_body(lines, heading.last_line, next_line):
            continue
        last = run[-1]
        before = run[-2] if len(run) >= 2 else None
        if before is not None and before.major and not last.major:
            out.append((before.start, f"{before.title}, {last.title}"))
            within = before.head
        elif last.major:
            out.append((last.start, last.title))
            within = last.head
        else:  # named with its part: Emma's three "Chapter II" are "Volume II, Chapter II"...
            out.append((last.start, f"{within}, {last.title}" if within else last.title))
        run = []
    return out
