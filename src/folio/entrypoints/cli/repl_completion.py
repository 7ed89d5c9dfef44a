"""Tab in ``folio chat``: completes a slash command (the commands of ``/help``), what ``/read``
opens (a source of the last answer, a chapter the reader has reached, a page) and, in a question,
the names of the people the reader has met (the book's own names, as the people tool lists them
from the text up to the reading position).

Invariant: nothing past the reading position is offered. Chapters come from the reading window
(``ReadingWindow.chapters``: those starting inside the text read), names from the people tool
run on that window, sources from the conversation's last stored answer. A completion never raises:
whatever fails offers nothing.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Iterator
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

_HELP_LINE = re.compile(r"^  (/[a-z]+)\S*(?: \S+)*?\s{2,}(\S.*)$", re.MULTILINE)
_LEAVE = (("/quit", "leave (the conversation is saved)"), ("/exit", "leave"))
_PAGE_WORDS = ("p.", "page")
MIN_NAME_PREFIX = 2


def slash_commands(help_text: str) -> list[tuple[str, str]]:
    """``(command, what it does)`` for each command ``help_text`` lists, each once."""
    seen: dict[str, str] = {}
    for command, meaning in _HELP_LINE.findall(help_text):
        seen.setdefault(command, meaning.strip())
    for command, meaning in _LEAVE:
        seen.setdefault(command, meaning)
    return list(seen.items())


class ChatCompleter(Completer):
    """Completions for the REPL of ``session`` (a ``chat.ChatSession``: its book and position are
    read at each Tab, so a ``/position`` or ``/next`` is followed at once)."""

    def __init__(self, session: Any, commands: list[tuple[str, str]]) -> None:
        self._session = session
        self._commands = commands
        self._names: tuple[Any, list[str]] | None = None  # (position key, names)

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        text = document.text_before_cursor
        try:
            if text.startswith("/"):
                command, space, arg = text.partition(" ")
                if not space:
                    yield from self._slash(command)
                elif command == "/read":
                    yield from self._read_targets(arg)
                return
            yield from self._people(document.get_word_before_cursor())
        except Exception:  # a completion must never break the prompt or print a traceback
            return

    def _slash(self, typed: str) -> Iterator[Completion]:
        for command, meaning in self._commands:
            if command.startswith(typed.lower()):
                yield Completion(command, -len(typed), display_meta=meaning)

    def _read_targets(self, typed: str) -> Iterator[Completion]:
        """Source numbers of the last answer, then chapters reached, then "p. " for a page."""
        session = self._session
        turns = session.conversations.get(session.conversation_id).turns
        sources = turns[-1].sources if turns else ()
        for n, source in enumerate(sources, 1):
            if str(n).startswith(typed.strip()):
                yield Completion(str(n), -len(typed), display_meta=source.location)
        folded = typed.strip().casefold()
        window = session.container.library.window(session.book)
        for chapter in window.chapters():
            label = chapter_label(chapter.title)
            if _starts(folded, label, chapter.title):
                yield Completion(_quoted(label), -len(typed), display_meta=chapter.title)
        for word in _PAGE_WORDS:
            if folded and word.startswith(folded) and folded != word:
                yield Completion(f"{word} ", -len(typed), display_meta="a page by its number")

    def _people(self, typed: str) -> Iterator[Completion]:
        if len(typed) < MIN_NAME_PREFIX or not typed[0].isalpha():
            return
        folded = typed.casefold()
        for name in self._met():
            if name.casefold().startswith(folded) and name != typed:
                yield Completion(name, -len(typed), display_meta="met so far")

    def _met(self) -> list[str]:
        """The names and other names of the people met so far (built once per position)."""
        book = self._session.book
        key = (book.id, book.position)
        if self._names is None or self._names[0] != key:
            self._names = (key, people_met(self._session.container, book))
        return self._names[1]


def people_met(container: Any, book: Any) -> list[str]:
    """The names of the people met up to ``book``'s position, most mentioned first, then their
    other names: the people tool's list, as a chat turn runs it."""
    from folio.agent.tools import ToolContext
    from folio.domain.passages import PEOPLE, PeopleList

    window = container.library.window(book)
    services = container.tool_services(container.books, None)
    result = container.tools.execute(PEOPLE, ToolContext.of(window), services)
    found = result.data if result.success else None
    if not isinstance(found, PeopleList):
        return []
    names = [p.name for p in found.people] + [a for p in found.people for a in p.aliases]
    return list(dict.fromkeys(names))


def chapter_label(title: str) -> str:
    """What ``/read`` is given for a chapter: its label ("Letter 4" of "Letter 4. To Mrs.
    Saville, England"), or its whole title when it has none."""
    return re.split(r"[.:]\s", title, maxsplit=1)[0].strip() or title


def _starts(folded: str, *texts: str) -> bool:
    if not folded:
        return True
    return any(t.casefold().startswith(folded) for t in _words_and_wholes(texts))


def _words_and_wholes(texts: Iterable[str]) -> Iterator[str]:
    for text in texts:
        yield text
        yield from text.split()


def _quoted(label: str) -> str:
    """``label`` as ``/read`` splits it (shell words): quoted only when it must be."""
    try:
        plain = shlex.split(label) == label.split()
    except ValueError:  # an apostrophe: "The Giant's Causeway"
        plain = False
    return label if plain else shlex.quote(label)
