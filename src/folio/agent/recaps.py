"""Recaps of whole chapters written by a chat model, once per chapter, kept with the book.

``ModelChapterRecaps.recap`` returns the kept recap of a chapter, or asks the model for one (from
``prompts/chapter_recap_prompt.md``, with that chapter's text only) and keeps it through the book
repository port, so a chapter costs one model call for every reader and conversation after.

Invariants: only a chapter the reader has read to its end is recapped (the model sees that
chapter's text and nothing after it; the prompt forbids what it may know of the book from
elsewhere); a failed or empty answer is never kept, and the caller falls back to the extractive
recap (``None``).
"""

from __future__ import annotations

import logging

from folio.agent.prompt_builder import PromptBuilder
from folio.domain.books import Book, Chapter
from folio.domain.errors import LLMError
from folio.domain.llm import PromptMessage
from folio.domain.ports import BookRepository, ChatProvider

log = logging.getLogger(__name__)

CHAPTER_RECAP_PROMPT = "chapter_recap_prompt.md"
MAX_CHAPTER_CHARS = 60_000  # about 15k tokens: a long chapter is recapped from its beginning
MAX_RECAP_CHARS = 1_500


class ModelChapterRecaps:
    """A chapter's recap by ``provider``, generated once and kept in ``books``."""

    def __init__(self, provider: ChatProvider, books: BookRepository) -> None:
        self._provider = provider
        self._books = books

    @property
    def model(self) -> str:
        return f"{self._provider.provider_name}/{self._provider.model_name}"

    def recap(self, book: Book, chapter: Chapter) -> str | None:
        """The kept recap of ``chapter`` (a whole chapter of ``book``), else a new one from the
        model, kept; ``None`` when the model fails or says nothing."""
        kept = self._books.chapter_recap(book.id, chapter.index)
        if kept:
            return kept
        text = self._books.get_text(book.id, chapter.char_start, book.chapter_end(chapter))
        prompt = PromptBuilder.from_template(
            CHAPTER_RECAP_PROMPT,
            title=book.title,
            chapter=chapter.title,
            text=text[:MAX_CHAPTER_CHARS].strip(),
        ).build()
        try:
            response = self._provider.chat([PromptMessage.user(prompt)])
        except LLMError as e:
            log.warning("recap of %r by %s failed (%s)", chapter.title, self.model, e)
            return None
        recap = " ".join((response.text or "").split())[:MAX_RECAP_CHARS]
        if not recap:
            return None
        self._books.save_chapter_recap(book.id, chapter.index, recap, self.model)
        return recap
