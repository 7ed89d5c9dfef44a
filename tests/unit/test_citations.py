"""Which places an answer's sources name: one per quote, at the quote's own page; a cited page
only when no quote came from it; never two sources for the same words."""

from __future__ import annotations

from dataclasses import replace

from folio.agent.citations import select_citations
from folio.agent.offline.answer import Quote, compose
from folio.domain.books import Book, BookFormat, Chapter, Page, numbered_places
from folio.domain.passages import Passage, page_breaks

PAGE = 100
LINES = (
    "Victor left Geneva in the spring. Henry Clerval stayed behind with his father.",
    "The rain fell on the Alps all night. Elizabeth wrote a long letter to Victor.",
    "Tears also gushed from the eyes of Clerval as he read it aloud to the family.",
    "Justine was accused of a crime she did not commit; the court met at dawn.",
)
TEXT = "".join(line.ljust(PAGE) for line in LINES)  # page n holds LINES[n - 1]
BOOK = Book(
    "b1", "A Novel", None, BookFormat.TXT, "n.txt", "h", 4, len(TEXT),
    (Chapter(1, "Chapter 1", 0),),
    tuple(Page(n + 1, str(n + 1), n * PAGE, min((n + 1) * PAGE, len(TEXT))) for n in range(4)),
)  # fmt: skip


def passage(start: int, end: int, chunk_id: str) -> Passage:
    first, last = BOOK.page_at(start), BOOK.page_at(end - 1)
    return Passage(chunk_id, "Chapter 1", first.label, last.label, start, end, TEXT[start:end],
                   breaks=page_breaks(BOOK, start, end))  # fmt: skip


def one_page(text: str, chapter: str, page: str) -> Passage:
    """``text`` as the whole of a one-chapter, one-page book's only passage."""
    book = Book(
        "one", "One page", None, BookFormat.TXT, "o.txt", "h", 1, len(text),
        (Chapter(1, chapter, 0),), (Page(1, page, 0, len(text)),),
    )  # fmt: skip
    return Passage("a", chapter, page, page, 0, len(text), text,
                   breaks=page_breaks(book, 0, len(text)))  # fmt: skip


def test_a_quote_is_cited_at_its_own_page_not_the_whole_passage() -> None:
    wide = passage(0, 300, "a")  # pages 1-3
    answer = '"Tears also gushed from the eyes of Clerval" (Chapter 1, pp. 1-3)'

    [source] = select_citations(answer, [wide])

    assert (source.page_start, source.page_end) == ("3", "3")
    assert TEXT[source.char_start : source.char_end] == "Tears also gushed from the eyes of Clerval"
    assert source.quote == "Tears also gushed from the eyes of Clerval"


def test_the_pages_a_quote_is_cited_with_add_no_source_of_their_own() -> None:
    wide, other = passage(0, 300, "a"), passage(100, 200, "b")  # b lies on page 2, inside a
    answer = '- "Henry Clerval stayed behind with his father." (Chapter 1, pp. 1-3)'

    sources = select_citations(answer, [wide, other])

    assert numbered_places(sources) == "[1] Chapter 1, p. 1"


def test_overlapping_passages_and_quotes_give_no_overlapping_sources() -> None:
    first, overlapping = passage(0, 200, "a"), passage(60, 260, "b")
    answer = (
        '"Henry Clerval stayed behind with his father", "Clerval stayed behind with his" and '
        '"The rain fell on the Alps all night".'
    )

    sources = select_citations(answer, [overlapping, first])

    assert [s.quote for s in sources] == [
        "Henry Clerval stayed behind with his father",  # found in the first passage that has it
        "The rain fell on the Alps all night",  # the second quote is inside the first: one place
    ]
    assert [s.chunk_id for s in sources] == ["a", "b"]
    assert numbered_places(sources) == "[1] Chapter 1, p. 1; [2] Chapter 1, p. 2"


def test_a_cited_page_no_quote_came_from_is_that_page_alone() -> None:
    wide = passage(100, 400, "a")  # pages 2-4
    answer = 'Elizabeth wrote to him (p. 2), and "Justine was accused of a crime" (p. 4).'

    sources = select_citations(answer, [wide])

    assert [(s.page_start, s.page_end) for s in sources] == [("4", "4"), ("2", "2")]
    assert [s.char_start for s in sources] == [TEXT.index("Justine"), 100]
    assert sources[1].quote == LINES[1]  # the excerpt is of the page cited, not of the passage


def test_without_its_page_breaks_a_quote_is_on_the_passage_pages() -> None:
    wide = replace(passage(0, 300, "a"), breaks=())
    [source] = select_citations('"Tears also gushed from the eyes of Clerval"', [wide])
    assert (source.page_start, source.page_end) == ("1", "3")
    assert source.char_start == TEXT.index("Tears")


def test_a_cited_page_range_is_one_source_of_those_pages() -> None:
    wide = passage(0, 400, "a")  # pages 1-4
    [source] = select_citations("Elizabeth wrote to him (pp. 2-3).", [wide])
    assert (source.page_start, source.page_end) == ("2", "3")
    assert (source.char_start, source.char_end) == (PAGE, 3 * PAGE)


def test_dialogue_inside_a_quote_is_part_of_it_not_a_source_of_its_own() -> None:
    text = "“My dear Frankenstein,” exclaimed Henry, “are you always to be unhappy?”"
    dialogue = one_page(text, "Chapter 7", "55")
    answer = f'From the book:\n- "{text}" (Chapter 7, p. 55)'

    [source] = select_citations(answer, [dialogue])

    assert (source.char_start, source.char_end) == (0, len(text))
    assert select_citations("He said “are you always to be unhappy?”", [dialogue])


def test_each_line_of_an_extractive_answer_is_a_source_when_one_holds_straight_dialogue() -> None:
    """A plain-text book's dialogue keeps straight quotes: '- ""Go," he said."' paired its marks
    with the next line's, and the sentences after it went uncited."""
    said = '"Go away," he said to Clerval.'
    text = f"{said} Victor left Geneva in the spring. Justine was accused of a crime."
    found = one_page(text, "Chapter 3", "20")
    answer = (
        f'From the book, up to Chapter 3:\n- "{said}" (Chapter 3, p. 20)\n'
        '- "Victor left Geneva in the spring." (Chapter 3, p. 20)\n'
        '- "Justine was accused of a crime." (Chapter 3, p. 20)\n\n(Offline mode: ...)'
    )
    sources = select_citations(answer, [found], quotes_only=True)
    assert [s.quote for s in sources] == [
        said,
        "Victor left Geneva in the spring.",
        "Justine was accused of a crime.",
    ]


def test_an_extractive_answer_writes_each_quote_on_the_page_its_citation_names() -> None:
    """The bullet named the whole passage's pages (pp. 1-3) and its chip the quote's (p. 3)."""
    wide = passage(0, 300, "a")  # pages 1-3
    sentence = "Tears also gushed from the eyes of Clerval as he read it aloud to the family."
    answer = compose([Quote(sentence, wide, 1.0)], "up to Chapter 1")

    [source] = select_citations(answer, [wide], quotes_only=True)

    assert f'"{sentence}" (Chapter 1, p. 3)' in answer
    assert (source.page_start, source.page_end) == ("3", "3")


def test_a_quote_of_an_earlier_volume_is_on_that_volumes_page() -> None:
    """Volume 1's offsets were turned into pages with the book's page table (p. 31 cited as
    pp. 28-29); a passage carries its own volume's pages."""
    small = Book(
        "b2", "Volume Two", None, BookFormat.TXT, "v2.txt", "h2", 1, 50,
        (Chapter(1, "Chapter 1", 0),), (Page(1, "1", 0, 50),),
    )  # fmt: skip
    earlier = replace(passage(0, 400, "v1"), book_id=BOOK.id, volume=BOOK.title)
    answer = '- "Justine was accused of a crime" (A Novel, Chapter 1, p. 4)'

    [source] = select_citations(answer, [earlier], quotes_only=True)

    assert (source.page_start, source.book_id, source.volume) == ("4", "b1", "A Novel")
    assert small.page_label(source.char_start) == "1"  # what the book's own table would say


def test_words_found_in_two_places_are_cited_where_the_answer_says() -> None:
    """A sentence the book repeats: the source is its place on the page the line names, as the
    offline answer wrote it from the passage it quoted, not the first passage holding it."""
    said = "Justine was accused of a crime"
    twice = TEXT[:300] + said + TEXT[300 + len(said) :]  # page 4 also opens with it
    book = replace(BOOK, char_count=len(twice))
    first = Passage("a", "Chapter 1", "3", "3", 200, 300, twice[200:300],
                    breaks=page_breaks(book, 200, 300))  # fmt: skip
    again = Passage("b", "Chapter 1", "4", "4", 300, 400, twice[300:400],
                    breaks=page_breaks(book, 300, 400))  # fmt: skip
    first = replace(first, text=said + first.text[len(said) :])

    [source] = select_citations(f'- "{said}" (Chapter 1, p. 4)', [first, again], quotes_only=True)

    assert (source.chunk_id, source.page_start) == ("b", "4")


def test_a_play_s_speech_after_its_speaker_s_prefix_is_a_source_beside_plain_lines() -> None:
    """Macbeth: "Who is Banquo?" listed `- Macb. "So foule and faire..." (...)` above two plain
    lines; only the plain lines were sources, so the speech had no number."""
    speech = "So foule and faire a day I haue not seene"
    text = f"  Macb. {speech}\n\n   Banq. Banquo, and Macbeth, all haile the Thane of Glamis."
    found = one_page(text, "Act I, Scene III", "3")
    plain = "Banquo, and Macbeth, all haile the Thane of Glamis."
    answer = compose(
        [Quote(speech, found, 1.0, speaker="Macb"), Quote(plain, found, 0.9)],
        "up to Act I, Scene III",
    )
    assert f'- Macb. "{speech}" (Act I, Scene III, p. 3)' in answer
    sources = select_citations(answer, [found], quotes_only=True)
    assert [s.quote for s in sources] == [speech, plain]
