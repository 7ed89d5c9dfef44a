"""Reading the conversational retrieval evaluation set and mapping its evidence onto a book.

Format (one conversation per line, see ``../shared/data/README.md``)::

    {"id": "...", "book": "file.txt", "turns": [{"question": "...", "answers": [...],
     "evidence": [[start, end], ...]}]}

``evidence`` spans are ``[start, end)`` offsets into the book *file* decoded as UTF-8. folio's
parsers may normalise that text (boilerplate, newlines), so spans are mapped onto the extracted text
by locating the span with its surrounding context (``EvidenceMapper``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from folio.domain.errors import EvalDataError

CONTEXT_CHARS = 40


@dataclass(frozen=True, slots=True)
class EvalTurn:
    question: str
    answers: tuple[str, ...]
    evidence: tuple[tuple[int, int], ...]
    quoted: bool = False  # asks for the words of its evidence (``chains.quote_turns``)


@dataclass(frozen=True, slots=True)
class EvalConversation:
    id: str
    book: str
    turns: tuple[EvalTurn, ...]
    switches: tuple[int, ...] = ()  # indices of the turns that start a new subject (chained)


def load_conversations(path: Path) -> list[EvalConversation]:
    """Parse a ``*.conversations.jsonl`` file; a malformed line raises ``EvalDataError`` naming
    it."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise EvalDataError(f"Cannot read {path}: {e}") from e
    out = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            out.append(_conversation(line, f"{path.name}:{number}"))
    if not out:
        raise EvalDataError(f"{path} holds no conversations")
    return out


def _conversation(line: str, where: str) -> EvalConversation:
    try:
        data = json.loads(line)
        turns = tuple(
            EvalTurn(
                question=str(t["question"]),
                answers=tuple(str(a) for a in t.get("answers", [])),
                evidence=tuple((int(s), int(e)) for s, e in t.get("evidence", [])),
            )
            for t in data["turns"]
        )
        return EvalConversation(id=str(data["id"]), book=str(data["book"]), turns=turns)
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise EvalDataError(f"{where}: not a conversation record ({e})") from e


def find_book_file(name: str, *, beside: Path, books_dir: Path | None) -> Path:
    """A conversation's book lives beside the ``.jsonl`` file or in ``books_dir``."""
    candidates = [beside / name] + ([books_dir / name] if books_dir else [])
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    tried = ", ".join(str(c) for c in candidates)
    raise EvalDataError(f"Book {name!r} not found (looked in {tried}); pass --books-dir")


class EvidenceMapper:
    """Maps ``[start, end)`` spans of the raw file text onto the book's extracted text."""

    def __init__(self, raw: str, extracted: str) -> None:
        self._raw = raw
        self._text = extracted
        self._identical = raw == extracted

    def map(self, start: int, end: int) -> tuple[int, int] | None:
        if self._identical:
            return start, end
        span = self._raw[start:end]
        if not span.strip():
            return None
        before = self._raw[max(0, start - CONTEXT_CHARS) : start]
        after = self._raw[end : end + CONTEXT_CHARS]
        for left, right in ((before, after), (before, ""), ("", after), ("", "")):
            found = self._find_unique(left + span + right)
            if found is not None:
                begin = found + len(left)
                return begin, begin + len(span)
        return self._nearest(span, start)

    def _find_unique(self, needle: str) -> int | None:
        first = self._text.find(needle)
        if first < 0 or self._text.find(needle, first + 1) >= 0:
            return None
        return first

    def _nearest(self, span: str, expected: int) -> tuple[int, int] | None:
        best: int | None = None
        pos = self._text.find(span)
        while pos >= 0:
            if best is None or abs(pos - expected) < abs(best - expected):
                best = pos
            pos = self._text.find(span, pos + 1)
        return None if best is None else (best, best + len(span))
