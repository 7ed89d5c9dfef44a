"""``folio demo``: import the bundled book (once) and chat with it, offline.

On a terminal it opens the chat; otherwise (CI, ``make demo < /dev/null``) it runs a scripted tour
of several turns as a reader early in the novel (through Chapter 5): a question, a pronoun
follow-up, small talk, and a question about a later event, answered without the spoiler.
The book is found again by its content hash, so it is imported only on the first run.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path
from typing import Any

import click
from rich.rule import Rule

from folio.entrypoints.cli.chat import ChatSession, _repl
from folio.entrypoints.cli.errors import handle_errors
from folio.entrypoints.cli.output import console, escape
from folio.entrypoints.cli.progress import RichIngestProgress, ingest_progress, prepare_embedder

TOUR = (
    "Who is Henry Clerval?",
    "What happens to him?",
    "thanks!",
)
SPOILER_QUESTION = "Who is murdered?"  # the first murder comes in Chapter 7
LIMIT_CHAPTER = "Chapter 5"  # early: after the four letters and five chapters


def bundled_book() -> Path:
    return Path(str(resources.files("folio") / "data" / "frankenstein.txt"))


def ensure_demo_book(container: Any) -> Any:
    """The bundled book, imported on first use."""
    path = bundled_book()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    existing = container.books.find_by_hash(digest)
    if existing is not None:
        return existing
    console.print("Importing the demo book (Frankenstein, Project Gutenberg #84)…")
    prepare_embedder(container)
    with ingest_progress() as progress:
        result = container.ingest.execute(path, progress=RichIngestProgress(progress, path.name))
    return result.book


@click.command("demo")
@click.option(
    "--tour/--interactive",
    default=None,
    help="Force the scripted tour or the interactive chat (default: chat on a terminal).",
)
@click.option("--provider", "-p", help="Provider to use (default: offline unless configured).")
@click.pass_obj
@handle_errors
def demo_cmd(lazy: Any, tour: bool | None, provider: str | None) -> None:
    """Import the bundled demo book and chat with it (no model or network needed)."""
    import sys

    container = lazy.get()
    book = ensure_demo_book(container)
    chat = container.chat(provider=provider or "offline")
    run_tour = tour if tour is not None else not sys.stdin.isatty()
    conversation = container.conversations.create(book.id, title="Demo" if run_tour else None)
    session = ChatSession(container, book, chat, conversation.id, verbose=run_tour, created=True)
    if not run_tour:
        _repl(session, interactive=True)
        return
    _tour(container, session)


def _tour(container: Any, session: ChatSession) -> None:
    """The tour reads as someone early in the novel; the library's position is restored after."""
    book = session.book
    before = book.position
    console.print(Rule(f"folio demo: {escape(book.name)}"))
    console.print("A scripted tour (offline: answers are passages quoted from the book).\n")
    limited = container.library.set_position(book.id, chapter=LIMIT_CHAPTER)
    session.book = limited
    chapter = limited.position_chapter
    through = escape(chapter.title) if chapter else ""
    console.print(
        Rule(
            f"Reading position: {escape(limited.describe_position())} "
            f"(folio position --chapter '{LIMIT_CHAPTER}')"
        )
    )
    console.print(f"Nothing after {through} can be searched or quoted.\n")
    try:
        for question in (*TOUR, SPOILER_QUESTION):
            console.print(f"[bold]you>[/] {question}", highlight=False)
            session.ask(question, live=False)
            console.print()
    finally:
        container.books.set_position(book.id, before)
    console.print()
    console.print(Rule())
    console.print(
        f"Resume this conversation: folio chat {book.id[:8]} --conversation "
        f"{session.conversation_id[:8]}\nSee it with tool calls: "
        f"folio conversations show {session.conversation_id[:8]} --verbose"
    )
