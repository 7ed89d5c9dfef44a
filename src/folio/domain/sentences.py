"""Sentence boundaries for any text folio handles (chunking, quoting), by ``sentencex``
(Wikimedia's rule-based segmenter: abbreviations such as Mr., Mrs., Dr., St., e.g., p.m. do not end
a sentence; a blank line always does). Measured on Frankenstein (419k characters): 3.5 ms for the
whole book, 1.5 ms to import, 4 MB installed.

Invariant: every span ``(s, e)`` of ``sentence_spans(text, start, end)`` lies in ``[start, end)``,
``text[s:e]`` starts and ends with non-space, and spans are in order and do not overlap.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import sentencex

LANGUAGE = "en"
_SPACES_LINE = re.compile(r"^[ \t]+$", re.MULTILINE)
# a number alone on the line opening a sentence ("26" over Song of Myself's section 26): no part of
# its first sentence ("26 Now I will do nothing but listen,")
_NUMBER_LINE = re.compile(r"(\d{1,4})[ \t]*\n\s*")
_OPENING_LEFT = re.compile(r"\s(['\"‘“])$")  # a mark after a space, the sentence's last
# a speech ending in a question or an exclamation, and the few words after it that say who spoke
# ('"Where is the cup?" / "Bill asked anxiously."): one sentence, as "asked Bill" would be
_ASKED = re.compile(r"[?!][”\"’']$")
_TAG = re.compile(r"^[^\"“”‘’']{1,40}\.$")
MAX_TAG_WORDS = 4
# a play's speech prefix: a line opening with the speaker's name or its abbreviation and a full
# stop ("  Macb. So foule and faire", "FRENCH SAILOR. Hist, boys!", "  1. Where hast thou
# beene"), or a name in capitals alone on its line over the speech ("HAMLET.\nTo be, or not")
_PREFIX = re.compile(
    r"^[ \t]*(?P<tag>[A-Z][a-z'’]{0,14}|[A-Z][A-Z'’]{2,}(?:[ \t][A-Z][A-Z'’]+){0,2}|\d{1,2})\."
    r"(?:[ \t]+(?=\S)|[ \t]*\n(?=[ \t]*[^\s\d]))",
    re.MULTILINE,
)
_ROMAN_WORD = re.compile(r"\b[IVXLC]+\b")  # "BOOK II.", "II. The Algerine Porpoise": headings
# the words a play's directions open with, as printed since the Folio (Latin: "Exeunt", "Manet")
_STAGED = r"\[?_?(?:Enter|Exit|Exeunt|Manet|Manent)\b"
_ENTRY = re.compile(rf"^[ \t]*{_STAGED}", re.MULTILINE)
_DIRECTS = re.compile(_STAGED)
_BLANK = re.compile(r"\n[ \t]*\n")
_LOWER_WORD = re.compile(r"\b[a-z][a-z'’]{3,}")  # a word of prose, not of a title
# a text is a play's when this many of its lines open with a speech prefix (the witches are "1.",
# "2.", "3."), and this share of them for a longer one (a chapter, a book): on the books of
# ../shared/data the plays have about one line in four so, a novel one in a hundred at most (a
# name ending a wrapped line)
MIN_SPEECHES = 3
PLAY_SHARE = 0.05


def sentence_spans(
    text: str, start: int = 0, end: int | None = None, *, opening: bool = False
) -> list[tuple[int, int]]:
    """The sentences of ``text[start:end]`` as ``(start, end)`` offsets into ``text``, trimmed.
    ``opening``: the text opens a chapter, so a first line that reads as a heading (no word of
    four letters or more in lower case: "Chapter 1", "The Whiteness of the Whale") is a sentence
    of its own: a PDF's text has no blank line after it ("Chapter 1\nI am by birth a Genevese"
    was one sentence, quoted so in the story so far)."""
    stop = len(text) if end is None else end
    if opening:
        lead = len(text[start:stop]) - len(text[start:stop].lstrip())
        line = text.find("\n", start + lead, stop)
        titled = line != -1 and not _LOWER_WORD.search(text, start + lead, line)
        if titled and text[line:stop].strip():
            head = sentence_spans(text, start, line)
            return [(head[0][0], head[-1][1]), *sentence_spans(text, line, stop)]
    piece = text[start:stop]
    spans: list[tuple[int, int]] = []
    # a line of spaces is a blank line (Paradise Lost's "[Paradise Lost by John Milton 1667] \n
    # \n \nBook I\n\n Of Man's first disobedience" was one sentence): made one for the segmenter,
    # each space a line break, so that every offset stays the text's
    read = _SPACES_LINE.sub(lambda m: "\n" * len(m.group()), piece)
    for boundary in sentencex.get_sentence_boundaries(LANGUAGE, read):
        s, e = int(boundary["start_index"]), int(boundary["end_index"])
        chunk = piece[s:e]
        stripped = chunk.strip()
        if not stripped:
            continue
        lead = len(chunk) - len(chunk.lstrip())
        first = start + s + lead
        numbered = _NUMBER_LINE.match(stripped)  # a poem's section number on its own line
        if numbered and numbered.end() < len(stripped):
            spans.append((first, first + len(numbered.group(1))))
            first += numbered.end()
            stripped = stripped[numbered.end() :]
        spans.append((first, first + len(stripped)))
    return spans


def split_sentences(text: str, *, opening: bool = False) -> list[str]:
    """The sentences of ``text``, each on one line (inner whitespace runs become one space). A
    quote mark the segmenter left at a sentence's end after a space opens the next one ("...
    did not name himself. 'Twas a foolish whim": "'Twas" starts the next sentence).
    ``opening``: its first line is a chapter's heading (``sentence_spans``)."""
    out = [" ".join(text[s:e].split()) for s, e in sentence_spans(text, opening=opening)]
    for i, sentence in enumerate(out):
        mark = _OPENING_LEFT.search(sentence)
        if mark is not None:
            out[i] = sentence[: mark.start()]
            if i + 1 < len(out):
                out[i + 1] = mark.group(1) + out[i + 1]
    for i in range(len(out) - 1, 0, -1):  # a dialogue tag the segmenter cut off its speech
        tag = out[i]
        if _ASKED.search(out[i - 1]) and _TAG.match(tag) and len(tag.split()) <= MAX_TAG_WORDS:
            out[i - 1], out[i] = f"{out[i - 1]} {tag}", ""
    return [sentence for sentence in out if sentence]


def is_prose(sentence: str, headings: Iterable[str | None] = ()) -> bool:
    """A sentence of the story: more than two words, not a line of a chapter's heading among
    ``headings`` ("The Duel of Dr Hirsch" under "III. The Duel of Dr Hirsch") nor a note in
    square brackets ("[Illustration]", a transcriber's title line "[The Wisdom of Father Brown by
    G. K. Chesterton 1914]")."""
    bracketed = sentence.startswith("[") and sentence.rstrip(".").endswith("]")
    many = len(_words(sentence).split()) > 2
    return many and not in_heading(sentence, headings) and not bracketed


def in_heading(text: str, headings: Iterable[str | None]) -> bool:
    """Are the words of ``text`` those of one of ``headings``, or of a part of it ("The Duel of
    Dr Hirsch" of "III. The Duel of Dr Hirsch", "Scena Tertia." of "Actus Primus, Scena
    Tertia")?"""
    words = _words(text)
    return bool(words) and any(words in _words(h) for h in headings if h)


def opens_with(text: str, heading: str, *, min_words: int = 1) -> bool:
    """Does ``text`` open with the words of ``heading`` (of ``min_words`` or more): a title page
    run into its contents in a PDF's text ("Frankenstein; or, the Modern Prometheus by Mary ...
    CONTENTS ...")?"""
    words, lead = _words(text).split(), _words(heading).split()
    return len(lead) >= min_words and words[: len(lead)] == lead


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


@dataclass(frozen=True, slots=True)
class Speech:
    """A part of a passage: one speech of a play (``speaker``: its prefix as written, "Macb";
    None for a number, "1." of the First Witch), a stage direction (``staged``: a paragraph of a
    play's passage that no prefix opens, after a speech: "Thunder. Enter the three Witches."), or
    the whole passage of a book that is no play. ``start``/``end`` index the passage's text,
    after the prefix."""

    start: int
    end: int
    speaker: str | None = None
    staged: bool = False
    prefix: int | None = None  # where its prefix begins ("Macb."), when it has one


def speeches(text: str, *, opening: bool = False) -> list[Speech]:
    """``text`` (a passage or a chapter, lines as the book has them) cut into its speeches
    when it is a play's (``_a_play``), else one part; then every prefix set apart from prose
    opens a speech ("La." of Lady Macbeth too). Text before the first prefix may be the end of a
    speech begun in the passage before: a part with no speaker, not a stage direction, unless the
    passage is ``opening`` its scene (its first line is the heading)."""
    found = _prefixes(text)
    if not _a_play(text, found):
        return [Speech(0, len(text))]  # a passage of a novel, or a whole chapter of one
    out: list[Speech] = []
    if text[: found[0].start()].strip():
        out += _directed(text, 0, found[0].start(), None, first=True, opening=opening)
    for m, after in zip(found, [*found[1:], None], strict=True):
        tag = m.group("tag")
        end = after.start() if after else len(text)
        out += _directed(text, m.end(), end, None if tag.isdigit() else tag, m.start("tag"))
    return out


def speakers(text: str) -> list[tuple[int, str]]:
    """(offset, prefix) of every speech of ``text`` (a whole book) when it is a play's: its
    named prefixes alone make it one (``_a_play``: a novel's few wrapped lines opening with a
    name do not, nor does Moby Dick's one chapter set as a play); else none. The prefixes
    written as numbers ("1." of the First Witch) name no one."""
    found = [m for m in _prefixes(text) if not m.group("tag").isdigit()]
    return [(m.start("tag"), m.group("tag")) for m in found] if _a_play(text, found) else []


def _a_play(text: str, prefixes: Sequence[re.Match[str]]) -> bool:
    """Is ``text`` a play's? ``MIN_SPEECHES`` of its ``prefixes``, and ``PLAY_SHARE`` of its
    lines for a longer text, are ones the segmenter ends a sentence after ("Mr." opening a line
    of a novel is none)."""
    lines = sum(1 for line in text.splitlines() if line.strip())
    said = sum(_ends_sentence(m.group("tag")) for m in prefixes)
    return said >= max(MIN_SPEECHES, PLAY_SHARE * lines)


def _prefixes(text: str) -> list[re.Match[str]]:
    """The speech prefixes of ``text`` set apart from prose: indented, in capitals, or a
    speaker's twice (not a wrapped line opening with a word that ends its sentence, "Killer.
    Both are outlaws"; "Thunder. Enter the three Witches." is a direction), not a numeral
    heading ("II. The Algerine Porpoise")."""
    found = [
        m
        for m in _PREFIX.finditer(text)
        if not _ROMAN_WORD.search(m.group("tag")) and not _DIRECTS.match(text, m.end())
    ]  # "Flourish. Enter King, Lenox..." is a direction, however often "Flourish." opens one
    lines = Counter(m.group("tag") for m in found)
    return [
        m
        for m in found
        if m.group().startswith((" ", "\t"))
        or m.start() == 0  # a passage's first line, its indent trimmed ("Mur. May we do so?")
        or m.group("tag").isupper()
        or lines[m.group("tag")] > 1
    ]


def spoken_spans(
    text: str, start: int = 0, end: int | None = None, *, opening: bool = False
) -> list[tuple[int, int]]:
    """``sentence_spans`` of ``text[start:end]``, a play's by its speeches (``speeches``; its
    scene's start when ``opening``): none runs from one speech into the next, none is a stage
    direction, and the first of a speech starts at its prefix ("Macb. If it were done, when
    'tis done..."), so it says who speaks."""
    stop = len(text) if end is None else end
    parts = speeches(text[start:stop], opening=opening)
    if len(parts) == 1 and parts[0].prefix is None and not parts[0].staged:
        return sentence_spans(text, start, stop, opening=opening)
    out: list[tuple[int, int]] = []
    for part in parts:
        if part.staged:
            continue
        spans = sentence_spans(text, start + part.start, start + part.end)
        if spans and part.prefix is not None and part.speaker is not None:
            spans[0] = (start + part.prefix, spans[0][1])
        out += spans
    return out


def is_direction(sentence: str) -> bool:
    """Does ``sentence`` open with the stage's own words ("Enter Caesar, Antony...", "Exeunt.")?
    A play's direction, when it is a play's sentence."""
    return _DIRECTS.match(sentence.lstrip()) is not None


def _directed(
    text: str,
    start: int,
    end: int,
    speaker: str | None,
    prefix: int | None = None,
    *,
    first: bool = False,
    opening: bool = False,
) -> list[Speech]:
    """``text[start:end]``, a speech (``speaker``'s; or the ``first`` part, before a passage's
    first prefix: the end of a speech begun before, whatever paragraphs it holds, or a stage
    direction when the passage is ``opening`` its scene), and the direction closing it: a
    paragraph after the speech, or a line opening with the stage's own words ("Enter Macbeth
    and Banquo." closing the witches' "All." with no blank line)."""
    blank = None if first else _BLANK.search(text, start, end)
    cuts = [c.start() for c in (blank, _ENTRY.search(text, start, end)) if c]
    stop = min(cuts, default=end)
    parts = [Speech(start, stop, speaker, opening, prefix)] if text[start:stop].strip() else []
    if text[stop:end].strip():
        parts.append(Speech(stop + (text[stop] == "\n"), end, staged=True))
    return parts


@lru_cache(maxsize=4096)
def _ends_sentence(tag: str) -> bool:
    """Does the segmenter end a sentence at "``tag``." before a name (not a title: "Mr.")?"""
    return len(sentencex.get_sentence_boundaries(LANGUAGE, f"{tag}. Smith")) > 1
