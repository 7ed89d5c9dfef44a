"""A quote is never wrapped in quotation marks a second time: a sentence of dialogue that its own
marks open and close stands in them alone in the extractive answer ('- "“Compose yourself,” said
Clerval, … silence.”"' was printed), and each line is still one source, cited where it is."""

from __future__ import annotations

from folio.agent.citations import listed_quotes, select_citations
from folio.agent.offline.answer import Quote, compose
from folio.domain.books import Book, BookFormat, Chapter, Page
from folio.domain.passages import Passage, page_breaks

OWN = "“Compose yourself,” said Clerval, “I will not mention it if it agitates you.”"
STRAIGHT = '"Go away," he said. "Now."'
NARRATIVE = "My mother had said playfully, “I have a pretty present for my Victor.”"
TEXT = f"{OWN} {STRAIGHT} {NARRATIVE} Victor left Geneva in the spring."


def _passage() -> Passage:
    book = Book("b", "Dialogue", None, BookFormat.TXT, "d.txt", "h", 1, len(TEXT),
                (Chapter(1, "Chapter 5", 0),), (Page(1, "46", 0, len(TEXT)),))  # fmt: skip
    return Passage("a", "Chapter 5", "46", "46", 0, len(TEXT), TEXT,
                   breaks=page_breaks(book, 0, len(TEXT)))  # fmt: skip


def test_dialogue_in_its_own_marks_is_not_wrapped_again() -> None:
    found = _passage()
    answer = compose([Quote(s, found, 1.0) for s in (OWN, STRAIGHT, NARRATIVE)], "up to Chapter 5")
    lines = answer.splitlines()[1:4]
    assert lines == [
        f"- {OWN} (Chapter 5, p. 46)",
        f"- {STRAIGHT} (Chapter 5, p. 46)",
        f'- "{NARRATIVE}" (Chapter 5, p. 46)',  # a quote inside: the sentence itself is not one
    ]
    assert '"“' not in answer and '""' not in answer


def test_each_line_is_still_one_source_at_its_own_words() -> None:
    found = _passage()
    answer = compose([Quote(s, found, 1.0) for s in (OWN, STRAIGHT, NARRATIVE)], "up to Chapter 5")
    assert listed_quotes(answer) == [OWN, STRAIGHT.strip('"'), NARRATIVE]
    sources = select_citations(answer, [found], quotes_only=True)
    assert [TEXT[s.char_start : s.char_end] for s in sources] == [
        OWN, STRAIGHT.strip('"'), NARRATIVE,
    ]  # fmt: skip
