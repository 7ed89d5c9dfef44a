"""The terminal numbers each quote of an answer with its source's number (``Sources: [n]``)."""

from __future__ import annotations

from folio.domain.conversations import Source
from folio.entrypoints.cli.chat_view import numbered_answer


def source(quote: str, page: str, chapter: str | None = "Chapter 1") -> Source:
    return Source("c", chapter, page, page, 0, 1, quote=quote)


def test_each_quote_gets_its_number_after_its_page_reference() -> None:
    answer = (
        "From the book:\n"
        '- "She was poor and proud." (Chapter 1, pp. 16-17)\n'
        '- "He retreated   to Lucerne." (Chapter 1, p. 16)\n'
    )
    out = numbered_answer(answer, [source("He retreated to Lucerne.", "16"),
                                   source("She was poor and proud.", "17")])  # fmt: skip
    assert '- "She was poor and proud." (Chapter 1, pp. 16-17) [2]\n' in out
    assert '- "He retreated   to Lucerne." (Chapter 1, p. 16) [1]\n' in out


def test_a_source_not_quoted_is_numbered_at_the_first_reference_to_its_page() -> None:
    answer = "Clerval comes to Ingolstadt (Chapter 5, p. 45). Later (p. 45) he stays."
    out = numbered_answer(answer, [source("words the answer never quotes", "45")])
    assert out == "Clerval comes to Ingolstadt (Chapter 5, p. 45) [1]. Later (p. 45) he stays."


def test_an_answer_without_sources_is_unchanged() -> None:
    assert numbered_answer("Nothing up to Chapter 2 mentions it.", []) == (
        "Nothing up to Chapter 2 mentions it."
    )


def test_a_source_quoted_without_quotation_marks_is_numbered_at_its_sentences_page() -> None:
    out = numbered_answer(
        "Captain Ahab did (p. 1). Then more (p. 2).", [source("Captain Ahab", "1")]
    )
    assert out == "Captain Ahab did (p. 1) [1]. Then more (p. 2)."
