"""``folio read``: the book's own text of a page, a chapter or a cited passage, never past the
reading position (every read goes through ``Library.read``, which cuts there)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import click
from rich.text import Text

from folio.entrypoints.cli.errors import handle_errors
from folio.entrypoints.cli.output import clean, show_long


@dataclass(frozen=True, slots=True)
class _Span:
    """What to read (``start``..``end``), what to mark in it, and how to name it."""

    start: int
    end: int
    mark: tuple[int, int] | None = None
    label: str = ""
    volume: Any = None  # an earlier volume of the series the cited source is in


@click.command("read")
@click.argument("book")
@click.option("--page", help="The page to read: its printed label or number.")
@click.option("--pages", type=click.IntRange(1, 20), default=1, show_default=True,
              help="How many pages from --page.")  # fmt: skip
@click.option(
    "--chapter",
    help="The chapter to read, as the book names it (as `folio position --chapter`): '5', "
    "'Chapter 5', 'V', 'Letter 2' or words of its title.",
)
@click.option(
    "--cited",
    type=click.IntRange(1, 99),
    help="The page of source N of the last answer (the [N] of its Sources line), the quote marked.",
)
@click.option(
    "--conversation",
    "--cid",
    "conversation_ref",
    help="With --cited: the conversation (id or prefix; default: the book's most recent).",
)
@click.pass_obj
@handle_errors
def read_cmd(
    lazy: Any,
    book: str,
    page: str | None,
    pages: int,
    chapter: str | None,
    cited: int | None,
    conversation_ref: str | None,
) -> None:
    """Read BOOK's own text: a page (a citation's "p. 45"), a chapter, or the page of a source
    of the last answer, never past your reading position. On a terminal a long text opens in a
    pager.

    \b
    Examples:
      folio read frankenstein --page 45
      folio read frankenstein --chapter 'Letter 2'
      folio read frankenstein --cited 2       source [2] of the last answer
    """
    if sum(x is not None for x in (page, chapter, cited)) != 1:
        raise click.UsageError("give one of --page, --chapter or --cited")
    if conversation_ref is not None and cited is None:
        raise click.UsageError("--conversation goes with --cited")
    container = lazy.get()
    found = container.library.resolve(book)
    if page is not None:
        span = _pages(found, page, pages)
    elif chapter is not None:
        named = found.chapter_named(chapter)
        span = _Span(named.char_start, found.chapter_end(named))
    else:
        assert cited is not None
        span = _cited(container, found, cited, conversation_ref)
    show_long(_render(container.library, found, span))


def _pages(book: Any, label: str, count: int) -> _Span:
    first = book.page_by_label(label.strip())
    if first is None:
        raise click.UsageError(f"{book.name} has no page {label!r} (pages 1 to {len(book.pages)})")
    last = book.pages[min(first.number - 1 + count, len(book.pages)) - 1]
    return _Span(first.char_start, last.char_end)


def _cited(container: Any, book: Any, number: int, ref: str | None) -> _Span:
    """The pages of source ``number`` of the last turn of the conversation, its quote marked."""
    conversations = container.conversations
    if ref is not None:
        conversation = conversations.resolve(ref)
        if conversation.book_id != book.id:
            raise click.UsageError(f"Conversation {conversation.id[:8]} is about another book")
        conversation_id = conversation.id
    else:
        summaries = conversations.summaries(book.id)
        if not summaries:
            raise click.UsageError(f"No conversation about {book.name} yet: nothing was cited")
        conversation_id = summaries[0].conversation.id
    turns = conversations.get(conversation_id).turns
    sources = turns[-1].sources if turns else ()
    if not 1 <= number <= len(sources):
        have = f"sources 1 to {len(sources)}" if sources else "no sources"
        raise click.UsageError(f"The last answer has {have}; there is no source {number}")
    source = sources[number - 1]
    volume = container.books.get(source.book_id) if source.book_id else None
    pages = volume or book
    first = pages.page_at(source.char_start)
    last = pages.page_at(max(source.char_start, source.char_end - 1))
    return _Span(
        first.char_start,
        last.char_end,
        mark=(source.char_start, source.char_end),
        label=f" · source [{number}]",
        volume=volume,
    )


def _render(library: Any, book: Any, span: _Span) -> Text:
    """The header, the text read (the marked span in bold), and a line saying where the reading
    position cut it or how to go on."""
    from folio.app.library import MAX_READ_CHARS  # here: the CLI starts without numpy

    end = min(span.end, span.start + MAX_READ_CHARS)
    volume_id = span.volume.id if span.volume is not None else None
    passage = library.read(book.id, span.start, end, volume_id=volume_id)
    body = clean(passage.text)
    lead = len(body) - len(body.lstrip())
    text = Text(f"{clean(book.name)} — {clean(passage.location)}{clean(span.label)}\n\n")
    body_text = Text(body.strip())
    if span.mark is not None:
        a, b = (x - passage.char_start - lead for x in span.mark)
        body_text.stylize("bold underline", max(a, 0), max(b, 0))
    text.append_text(body_text)
    if span.volume is not None:
        pass  # an earlier volume is read in full: nothing cuts it
    elif passage.char_end < end:  # cut at the reading position
        text.append(f"\n\n[Your reading position ({book.describe_position()}) ends here.]")
    elif end < span.end:
        nxt = book.page_at(end).label
        text.append(f"\n\n[Continues: folio read {book.id[:8]} --page {nxt}]")
    return text
