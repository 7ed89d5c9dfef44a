"""Kindle's ``My Clippings.txt``: records separated by a line of ``==========``, each
``Title (Author)``, then ``- Your Highlight on page 12 | Location 170-172 | Added on <date>``
(``Note``/``Bookmark`` likewise; ``at location`` on some firmware), a blank line, and the text.

A Kindle writes that line in the language it is set to; folio reads the languages in
``LANGUAGES``, as their devices write them (samples from public clippings parsers' tests):

- German ``- Ihre Markierung auf Seite 9 | Position 130-131 | Hinzugefügt am Montag, ...``
  (``Ihre Notiz``, ``Ihr Lesezeichen``)
- French ``- Votre surlignement sur la page 5 | emplacement 1234-1236 | Ajouté le lundi ...``
  (``Votre note``, ``Votre signet``)
- Spanish ``- Tu subrayado en la página 6 | posición 36-40 | Añadido el lunes, ...``
  (``Tu nota``, ``Tu marcador``)
- Italian ``- La tua evidenziazione alla pagina 6 | posizione 36-40 | Aggiunto in data ...``
  (``La tua nota``, ``Il tuo segnalibro``)
- Portuguese ``- Seu destaque na página 33 | posição 410-412 | Adicionado: terça-feira, ...``
  (``Sua nota``, ``Seu marcador``)
- Dutch ``- Je markering op pagina 6 | locatie 36-40 | Toegevoegd op maandag ...``
  (``Je notitie``, ``Je bladwijzer``)
- Japanese ``- 26ページ|位置No. 295-296のハイライト |作成日: 2023年9月4日月曜日 22:53:55``
  (``のメモ``, ``のブックマーク``)
- Chinese ``- 您在第 47 页（位置 #708-710）的标注 | 添加于 2021年3月5日星期五 上午1:26:56``
  (``的笔记``, ``的书签``)

Invariant: a record folio cannot read (no metadata line) is skipped, never half-read; a file of
which no record reads is refused with the languages folio reads.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from folio.domain.highlights import (
    MAX_FILE_BYTES,
    SOURCE_KINDLE,
    HighlightError,
    HighlightKind,
    ImportedHighlight,
    clip,
)

SEPARATOR = "=========="
LANGUAGES = ("English", "German", "French", "Spanish", "Italian", "Portuguese", "Dutch",
             "Japanese", "Chinese")  # fmt: skip
# each kind as the languages above name it, in that order
_KIND_WORDS = {
    HighlightKind.HIGHLIGHT: r"Your Highlight|Ihre Markierung|Votre surlign\w*|\w+ subrayado"
    r"|La tua evidenziazione|Seu destaque|Je markering|のハイライト|的标注",
    HighlightKind.NOTE: r"Your Note|Ihre Notiz|Votre note|Tu nota|La tua nota|Sua nota"
    r"|Je notitie|のメモ|的笔记",
    HighlightKind.BOOKMARK: r"Your Bookmark|Ihr Lesezeichen|Votre signet|Tu marcador"
    r"|Il tuo segnalibro|Seu marcador|Je bladwijzer|のブックマーク|的书签",
}
_KINDS = [(kind, re.compile(words, re.I)) for kind, words in _KIND_WORDS.items()]
# at most 9 digits: a longer number is no page or location (and would not fit an int column)
_PAGE = re.compile(
    r"(?:\b(?:page|Seite|página|pagina)\s+(?P<page>\d{1,9})\b)"
    r"|(?:(?<!\d)(?P<jp>\d{1,9})\s*ページ)|(?:第\s*(?P<zh>\d{1,9})\s*页)",
    re.I,
)
_LOCATION = re.compile(
    r"(?:\b(?:location|Position|emplacement|posición|posizione|posição|locatie)\s+"
    r"|位置No\.\s*|位置\s*#)(?P<loc>\d{1,9}(?:-\d{1,9})?)(?!\d)",
    re.I,
)
_ADDED = re.compile(
    r"(?:\bAdded on|\bHinzugefügt am|\bAjouté le|\bAñadido el|\bAggiunto(?: in data| il)?"
    r"|\bAdicionado:?|\bToegevoegd op|作成日[:：]|添加于)\s*(?P<date>.+)$",
    re.I,
)
_AUTHOR = re.compile(r"^(?P<title>.*?)\s*\((?P<author>[^()]*)\)\s*$")


def read_clippings(path: Path, *, max_bytes: int | None = None) -> list[ImportedHighlight]:
    """Every highlight, note and bookmark of a ``My Clippings.txt`` of at most ``max_bytes``
    (default ``MAX_FILE_BYTES``)."""
    bound = MAX_FILE_BYTES if max_bytes is None else max_bytes
    if path.stat().st_size > bound:
        raise HighlightError(f"{path.name} is larger than {bound / 1024**2:.4g} MB")
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    found = parse_clippings(text)
    if not found and SEPARATOR not in text:
        raise HighlightError(f"{path.name} is not a Kindle clippings file (no '{SEPARATOR}')")
    if not found and any(r.strip().lstrip("\ufeff") for r in text.split(SEPARATOR)):
        # records folio cannot read, as a Kindle set to another language writes them
        raise HighlightError(
            f"{path.name}: no record has a line folio reads as a Kindle's '- Your Highlight ...'"
            f" (folio reads the clippings of a Kindle set to {', '.join(LANGUAGES[:-1])} or"
            f" {LANGUAGES[-1]})"
        )
    return found


def parse_clippings(text: str) -> list[ImportedHighlight]:
    """The file's records; a note whose location falls in the highlight just before it (the
    way a Kindle stores a note made on a highlight) becomes that highlight's note."""
    out: list[ImportedHighlight] = []
    for record in text.replace("\r\n", "\n").split(SEPARATOR):
        clipping = _record(record)
        if clipping is None:
            continue
        if out and _notes_on(clipping, out[-1]):
            out[-1] = replace(out[-1], note=clipping.note)
            continue
        out.append(clipping)
    return out


def _span(value: ImportedHighlight) -> tuple[int, int] | None:
    found = _LOCATION.search(value.location or "")
    if found is None:
        return None
    a, _, b = found.group("loc").partition("-")
    return int(a), int(b or a)


def _notes_on(note: ImportedHighlight, highlight: ImportedHighlight) -> bool:
    if note.kind is not HighlightKind.NOTE or highlight.kind is not HighlightKind.HIGHLIGHT:
        return False
    if highlight.note or (note.title, note.author) != (highlight.title, highlight.author):
        return False
    at, span = _span(note), _span(highlight)
    return at is not None and span is not None and span[0] <= at[0] <= span[1]


def _record(record: str) -> ImportedHighlight | None:
    lines = [line.strip().lstrip("\ufeff") for line in record.strip().split("\n")]
    if len(lines) < 2 or not lines[0] or not lines[1].startswith("-"):
        return None
    rest = lines[1]
    kind = next((k for k, words in _KINDS if words.search(rest)), None)
    if kind is None:
        return None
    title, author = lines[0], None
    named = _AUTHOR.match(lines[0])
    if named and named.group("title"):
        title, author = named.group("title"), clip(named.group("author"))
    found = _PAGE.search(rest)
    page = next((g for g in found.groups() if g), None) if found else None
    location = _LOCATION.search(rest)
    added = _ADDED.search(rest)
    where = [f"page {page}" if page else "",
             f"Location {location.group('loc')}" if location else ""]  # fmt: skip
    body = clip("\n".join(lines[2:])) or ""
    return ImportedHighlight(
        title=clip(title) or "",
        author=author,
        kind=kind,
        text="" if kind is HighlightKind.NOTE else body,
        note=body if kind is HighlightKind.NOTE and body else None,
        location=", ".join(w for w in where if w) or None,
        page=int(page) if page else None,
        created=clip(added.group("date")) if added else None,
        source=SOURCE_KINDLE,
    )
