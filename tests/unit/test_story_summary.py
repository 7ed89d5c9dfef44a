"""The extractive story so far (LexRank over a chapter's sentences): which sentences may stand in
a summary, centrality, the summary kept with the book at import, and the recap tool that reads it,
bounded by the reading position."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from folio.adapters.storage.memory.books import InMemoryLibrary
from folio.agent.summaries import StorySummaries
from folio.agent.tools import ToolContext, ToolServices, default_registry
from folio.agent.tools.recap import MAX_SENTENCES, choose
from folio.app.ingest import IngestBook
from folio.app.search import SearchBook
from folio.domain.books import Book, BookFormat, Chapter, Chunk, Page, ParsedBook, ReadingPosition
from folio.domain.passages import RECAP, Recap
from folio.domain.ports import Vectors
from folio.domain.summary import (
    KEEP,
    SUMMARY_INDEX,
    SUMMARY_VERSION,
    Ranked,
    StorySummary,
    centrality,
    opening,
    quoted_ranges,
    rank_chapter,
    summary_sentences,
)


class TopicEmbedder:
    """A fake embedder: a sentence's vector counts the topic words it holds (one axis per topic
    word), so sentences sharing topics are close."""

    name = "topics"
    dimensions = 9
    relevance_floor = 0.1
    TOPICS = ("ship", "ice", "sailor", "letter", "sister", "north", "storm", "dog")

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        counts = [[t.lower().count(w) for w in self.TOPICS] + [0.1] for t in texts]
        rows = np.array(counts, dtype=np.float32).reshape(len(texts), self.dimensions)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


CHAPTER_ONE = (
    "Letter 1.\n\n"
    "The ship sailed north into the ice with every sailor on deck. "
    "“Will you write to me, dear sister, from the ice of the north?” she had asked. "
    "Will the ship ever reach the north? "
    "The sailor watched the ice close around the ship as the storm grew in the north. "
    "and then the dog ran off across the frozen sea before anyone could call it back. "
    "Oh. "
    "A letter to his sister told of the ship, the ice and the storm in the north. "
    "“Sister,” he wrote, “the ice, the ship, the sailor, the north, the storm: all is well.”\n\n"
)
CHAPTER_TWO = (
    "Letter 2.\n\n"
    "The storm drove the ship against the ice for three long days and nights. "
    "Every sailor feared the storm would break the ship upon the ice at last. "
    "His sister would read the letter months later in her quiet English house. "
    "A dog barked somewhere on the ice as the storm began to fade away at dawn.\n\n"
)
CHAPTER_THREE = (
    "Letter 3.\n\n"
    "The stranger on the sledge told a secret that changed the voyage forever. "
    "Nobody aboard would ever forget the secret told that night under the stars.\n\n"
)


def test_quotations_are_found_in_pairs_and_end_at_a_blank_line() -> None:
    text = 'He said “go now” and left. "Yes" she said. “Open\n\nNext paragraph.'
    spans = [text[a:b] for a, b in quoted_ranges(text)]
    assert spans == ["“go now”", '"Yes"', "“Open"]


def test_dialogue_questions_fragments_and_short_sentences_cannot_stand_in_a_summary() -> None:
    chosen = [CHAPTER_ONE[a:b] for a, b in summary_sentences(CHAPTER_ONE, 0, len(CHAPTER_ONE))]
    assert chosen == [
        "The ship sailed north into the ice with every sailor on deck.",
        "The sailor watched the ice close around the ship as the storm grew in the north.",
        "A letter to his sister told of the ship, the ice and the storm in the north.",
    ]


def test_a_heading_with_no_blank_line_after_it_opens_no_summary_sentence() -> None:
    """A PDF's chapter: "Chapter 1\nI am by birth a Genevese..." was quoted whole, heading first,
    as the chapter's opening in the story so far."""
    pdf = "Letter 1\n" + CHAPTER_ONE.removeprefix("Letter 1.\n\n").replace("\n\n", "\n")
    chosen = [pdf[a:b] for a, b in summary_sentences(pdf, 0, len(pdf))]
    assert chosen[0] == "The ship sailed north into the ice with every sailor on deck."
    found = opening(pdf, 0, len(pdf))
    assert found is not None and pdf[found.start : found.end] == chosen[0]


def test_words_leading_into_a_speech_are_not_a_sentence_of_their_own() -> None:
    text = (
        "The captain walked slowly across the frozen deck of the ship and said,--\n\n"
        "The captain walked slowly across the frozen deck of the ship at dawn."
    )
    assert [text[a:b] for a, b in summary_sentences(text, 0, len(text))] == [
        "The captain walked slowly across the frozen deck of the ship at dawn."
    ]


def test_a_chapter_told_in_dialogue_only_still_ranks_its_speeches() -> None:
    text = "“I shall go to the north with the ship and every sailor I can find,” he said."
    ranked = rank_chapter(text, 0, len(text), TopicEmbedder().embed)
    assert [(r.start, r.end) for r in ranked] == [(0, len(text))]


def test_centrality_favours_the_sentence_most_like_the_others() -> None:
    vectors = np.array([[1, 0, 0], [0.9, 0.1, 0], [0.8, 0.2, 0.1], [0, 0, 1]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = centrality(vectors)
    assert scores.sum() == pytest.approx(1.0)
    assert int(np.argmax(scores)) == 1 and int(np.argmin(scores)) == 3


def test_the_most_central_sentence_leads_and_near_copies_are_dropped() -> None:
    text = CHAPTER_TWO + "Every sailor feared the storm would break the ship upon the ice at last. "
    ranked = rank_chapter(text, 0, len(text), TopicEmbedder().embed, keep=6)
    first = text[ranked[0].start : ranked[0].end]
    assert first.startswith(("The storm drove", "Every sailor feared"))
    assert len({text[r.start : r.end] for r in ranked}) == len(ranked)  # no copy kept
    assert ranked[0].weight >= ranked[-1].weight


def test_a_part_of_a_chapter_is_ranked_from_that_part_only() -> None:
    embedder = TopicEmbedder()
    end = CHAPTER_TWO.index("His sister")
    ranked = rank_chapter(CHAPTER_TWO, 0, end, embedder.embed)
    assert ranked and all(r.end <= end for r in ranked)
    assert not any("sister" in t for call in embedder.calls for t in call)


def test_a_summary_round_trips_through_json_and_another_version_reads_as_none() -> None:
    summary = StorySummary({1: (Ranked(3, 40, 1.5), Ranked(50, 90, 0.5)), 2: ()}, "topics")
    assert StorySummary.from_json(summary.to_json()) == summary
    assert (
        StorySummary.from_json(
            summary.to_json().replace(f'"version":{SUMMARY_VERSION}', '"version":1')
        )
        is None
    )
    assert StorySummary.from_json("A model's recap of a chapter.") is None
    assert StorySummary.from_json(None) is None


def test_few_chapters_get_several_sentences_many_get_one_each_then_one_per_run() -> None:
    def chapters(n: int) -> list[list[Ranked]]:
        return [
            [Ranked(i * 99 + k, i * 99 + k + 1, 1 - k / 9) for k in range(KEEP)] for i in range(n)
        ]

    # four long stories read tell six sentences each: 3 each (MOST_PER_CHAPTER 3) said too little
    assert len(choose(chapters(4), MAX_SENTENCES)) == 4 * KEEP
    assert len(choose(chapters(2), MAX_SENTENCES)) == 2 * KEEP  # never more than a chapter keeps
    assert len(choose(chapters(12), MAX_SENTENCES)) == 24
    one_each = choose(chapters(20), MAX_SENTENCES)
    assert [i for i, _ in one_each] == list(range(20))
    # a few more chapters than sentences: as many sentences as allowed, runs of one or two
    assert len(choose(chapters(25), MAX_SENTENCES)) == MAX_SENTENCES  # 13 before
    grouped = choose(chapters(61), MAX_SENTENCES)
    assert len(grouped) == MAX_SENTENCES and grouped[0][0] == 0  # the first chapter stays
    runs = [i for i, _ in grouped[1:]]
    assert runs == sorted(runs) and runs[-1] >= 61 - 3  # the last chapters are there too


def test_a_chapter_opens_with_its_first_summary_sentence_when_it_comes_early() -> None:
    found = opening(CHAPTER_ONE, 0, len(CHAPTER_ONE))
    assert found is not None and found.weight == 0.0
    assert CHAPTER_ONE[found.start : found.end].startswith("The ship sailed north")
    offset = len(CHAPTER_TWO)
    text = CHAPTER_TWO + CHAPTER_ONE
    again = opening(text, offset, len(text))
    assert again is not None and (again.start, again.end) == (
        found.start + offset,
        found.end + offset,
    )
    talk = "“Go,” he said. “Now?” “Yes.” “Why?” “The ice.” " + CHAPTER_TWO
    assert opening(talk, 0, len(talk)) is None  # it opens in dialogue: no opening


def test_a_chapter_giving_several_sentences_leads_with_its_opening_one_giving_one_does_not() -> (
    None
):
    ranked = [  # eight chapters: three sentences each
        [Ranked(i * 99 + k, i * 99 + k + 1, 1 - k / 9) for k in range(1, 6)] for i in range(8)
    ]
    openings = [Ranked(i * 99, i * 99 + 1, 0.0) for i in range(8)]
    picked = choose(ranked, MAX_SENTENCES, openings)
    assert [(i, r.start) for i, r in picked][:6] == [
        (0, 0),
        (0, 1),
        (0, 2),
        (1, 99),
        (1, 100),
        (1, 101),
    ]
    many = [[Ranked(i * 99 + 5, i * 99 + 6, 1.0)] for i in range(20)]
    one_each = choose(many, MAX_SENTENCES, [Ranked(i * 99, i * 99 + 1, 0.0) for i in range(20)])
    assert [r.start for _, r in one_each] == [i * 99 + 5 for i in range(20)]  # the most central


# --- the recap tool on a stored summary -------------------------------------------------------
def _book(text: str, chapters: list[Chapter]) -> tuple[Book, list[Chunk]]:
    pages = [Page(1, "1", 0, len(text) // 2), Page(2, "2", len(text) // 2, len(text))]
    book = Book(
        id="frank",
        title="Letters",
        author=None,
        format=BookFormat.TXT,
        source_name="letters.txt",
        content_hash="h",
        page_count=2,
        char_count=len(text),
        chapters=tuple(chapters),
        pages=tuple(pages),
    )
    chunk = Chunk("frank-1", "frank", 0, text, 0, len(text), 1, 2, "Letter 1", 1)
    return book, [chunk]


@pytest.fixture
def letters() -> tuple[InMemoryLibrary, Book, str]:
    text = CHAPTER_ONE + CHAPTER_TWO + CHAPTER_THREE
    starts = [0, len(CHAPTER_ONE), len(CHAPTER_ONE) + len(CHAPTER_TWO)]
    chapters = [Chapter(i + 1, f"Letter {i + 1}", s) for i, s in enumerate(starts)]
    book, chunks = _book(text, chapters)
    library = InMemoryLibrary()
    library.add(book, text, chunks)
    return library, book, text


def _recap(library: InMemoryLibrary, book: Book, summaries: StorySummaries, **arguments: object):
    services = ToolServices(
        SearchBook(library, TopicEmbedder()), library, library, summaries=summaries
    )
    return default_registry().execute(RECAP, ToolContext(book=book), services, arguments)


def test_the_recap_quotes_the_stored_ranking_of_whole_chapters_without_embedding(
    letters: tuple[InMemoryLibrary, Book, str],
) -> None:
    library, book, text = letters
    summary = StorySummary.of(
        text,
        [(c.index, c.char_start, book.chapter_end(c)) for c in book.chapters],
        TopicEmbedder().embed,
        model="topics",
    )
    library.save_chapter_recap(book.id, SUMMARY_INDEX, summary.to_json(), summary.model)
    read_two = library.set_position(book.id, ReadingPosition(book.chapter_end(book.chapters[1])))
    embedder = TopicEmbedder()
    result = _recap(library, read_two, StorySummaries(embedder))
    assert result.success and isinstance(result.data, Recap)
    assert embedder.calls == []  # both chapters read whole: the stored ranking serves
    assert next(p.chapter for p in result.data.passages) == "Letter 1"
    assert {p.chapter for p in result.data.passages} == {"Letter 1", "Letter 2"}
    stored = {(r.start, r.end) for rs in summary.chapters.values() for r in rs}
    assert all((p.char_start, p.char_end) in stored for p in result.data.passages)
    for p in result.data.passages:
        assert p.text == " ".join(text[p.char_start : p.char_end].split())
        assert "?" not in p.text and "“" not in p.text


def test_the_recap_of_a_chapter_leads_with_how_it_opens_though_that_is_not_central() -> None:
    chapter = (
        "Letter 4.\n\n"
        "An old brown dog slept by the warm fire of the captain's cabin all evening. "
        "The ship sailed north into the ice while every sailor watched. "
        "The storm drove the ship into the ice of the north for days. "
        "Every sailor feared that the storm would sink the ship at last. "
        "A letter to his sister told of the ship and the ice around it. "
        "The sailor wrote a letter about the storm in the north that night.\n\n"
    )
    book, chunks = _book(chapter, [Chapter(1, "Letter 4", 0)])
    library = InMemoryLibrary()
    library.add(book, chapter, chunks)
    ranked = rank_chapter(chapter, 0, len(chapter), TopicEmbedder().embed)
    assert "dog" not in " ".join(chapter[r.start : r.end] for r in ranked[:4])  # not central
    result = _recap(library, book, StorySummaries(TopicEmbedder()), chapter="Letter 4")
    assert result.success and isinstance(result.data, Recap)
    texts = [p.text for p in result.data.passages]
    assert texts[0].startswith("An old brown dog slept")  # the opening leads
    assert len(texts) == 4 and all("?" not in t for t in texts)


def test_a_chapter_read_in_part_is_ranked_from_its_read_part_never_past_the_position(
    letters: tuple[InMemoryLibrary, Book, str],
) -> None:
    library, book, text = letters
    summary = StorySummary.of(
        text,
        [(c.index, c.char_start, book.chapter_end(c)) for c in book.chapters],
        TopicEmbedder().embed,
        model="topics",
    )
    library.save_chapter_recap(book.id, SUMMARY_INDEX, summary.to_json(), summary.model)
    limit = text.index("His sister")  # Letter 2 read up to here
    reader = library.set_position(book.id, ReadingPosition(limit))
    embedder = TopicEmbedder()
    result = _recap(library, reader, StorySummaries(embedder))
    passages = result.data.passages
    assert passages and all(p.char_end <= limit for p in passages)
    assert any(p.chapter == "Letter 2" for p in passages)
    assert not any("sister" in t for call in embedder.calls for t in call)
    assert not any("secret" in p.text for p in passages)


def test_a_book_imported_before_summaries_is_ranked_when_asked(
    letters: tuple[InMemoryLibrary, Book, str],
) -> None:
    library, book, _text = letters
    reader = library.set_position(book.id, ReadingPosition(book.chapter_end(book.chapters[1])))
    embedder = TopicEmbedder()
    summaries = StorySummaries(embedder)
    first = _recap(library, reader, summaries)
    assert {p.chapter for p in first.data.passages} == {"Letter 1", "Letter 2"}
    calls = len(embedder.calls)
    again = _recap(library, reader, summaries)
    assert again.data.passages == first.data.passages and len(embedder.calls) == calls  # kept
    without = _recap(library, reader, StorySummaries(None, live_chars=0))  # TF-IDF, no embedder
    assert {p.chapter for p in without.data.passages} == {"Letter 1", "Letter 2"}


def test_a_model_recap_kept_for_a_chapter_is_not_taken_for_a_summary(
    letters: tuple[InMemoryLibrary, Book, str],
) -> None:
    library, book, _text = letters
    library.save_chapter_recap(book.id, 1, "Walton writes to his sister.", "model-a")
    reader = library.set_position(book.id, ReadingPosition(book.chapter_end(book.chapters[0])))
    result = _recap(library, replace(reader), StorySummaries(TopicEmbedder()))
    assert result.data.passages and all(p.chapter == "Letter 1" for p in result.data.passages)
    assert "Walton" not in " ".join(p.text for p in result.data.passages)


def test_the_import_keeps_each_chapters_best_sentences_with_the_book(tmp_path: Path) -> None:
    path = tmp_path / "letters.txt"
    text = CHAPTER_ONE + CHAPTER_TWO
    path.write_text(text)

    def parse(p: Path) -> tuple[ParsedBook, BookFormat]:
        chapters = (Chapter(1, "Letter 1", 0), Chapter(2, "Letter 2", len(CHAPTER_ONE)))
        pages = (Page(1, "1", 0, len(text)),)
        return ParsedBook(text, pages, chapters, title="Letters"), BookFormat.TXT

    library = InMemoryLibrary()
    embedder = TopicEmbedder()
    ingest = IngestBook(parse=parse, embedder=embedder, books=library, new_id=lambda: "b")  # type: ignore[arg-type]
    result = ingest.execute(path)
    summary = StorySummary.from_json(library.chapter_recap("b", SUMMARY_INDEX))
    assert summary is not None and summary.model == "topics" and set(summary.chapters) == {1, 2}
    for index, chapter_end in ((1, len(CHAPTER_ONE)), (2, len(text))):
        start = 0 if index == 1 else len(CHAPTER_ONE)
        ranked = summary.chapters[index]
        assert ranked and all(start <= r.start and r.end <= chapter_end for r in ranked)
    assert result.timings["summarise"] >= 0
    assert library.chapter_recap("b", 1) is None  # no chapter's model recap is written


def test_an_interrupted_import_gets_its_summary_when_it_is_completed(tmp_path: Path) -> None:
    path = tmp_path / "letters.txt"
    path.write_text(CHAPTER_ONE + CHAPTER_TWO)

    def parse(p: Path) -> tuple[ParsedBook, BookFormat]:
        text = p.read_text()
        chapters = (Chapter(1, "Letter 1", 0), Chapter(2, "Letter 2", len(CHAPTER_ONE)))
        return ParsedBook(text, (Page(1, "1", 0, len(text)),), chapters), BookFormat.TXT

    class Crashing(TopicEmbedder):
        def embed(self, texts: Sequence[str]) -> Vectors:
            raise RuntimeError("model crashed")

    library = InMemoryLibrary()
    with pytest.raises(RuntimeError):
        IngestBook(parse=parse, embedder=Crashing(), books=library, new_id=lambda: "b").execute(
            path
        )  # type: ignore[arg-type]
    assert library.chapter_recap("b", SUMMARY_INDEX) is None  # stored, searchable, no summary
    ingest = IngestBook(parse=parse, embedder=TopicEmbedder(), books=library)  # type: ignore[arg-type]
    assert ingest.execute(path).resumed
    summary = StorySummary.from_json(library.chapter_recap("b", SUMMARY_INDEX))
    assert summary is not None and set(summary.chapters) == {1, 2}


def test_a_play_s_summary_sentences_are_its_speeches_with_their_speakers_never_a_direction() -> (
    None
):
    """Macbeth's story so far quoted "Enter King Malcome, Donalbaine, Lenox, with attendants,
    meeting a bleeding Captaine." and speeches with no speaker."""
    scene = (
        "Scena Secunda.\n\nAlarum within. Enter King Malcome, Donalbaine, and Lenox.\n\n"
        "  King. What bloody man is that? he can report the newest state.\n\n"
        "   Mal. This is the Sergeant, who like a good and hardie Souldier fought.\n\n"
        "   Cap. Doubtfull it stood, as two spent Swimmers, that doe cling together.\n\n"
        "Flourish. Enter Rosse and Angus.\n\n"
        "  King. What he hath lost, Noble Macbeth hath wonne, and so we say.\n"
    )
    found = [scene[s:e] for s, e in summary_sentences(scene, 0, len(scene))]
    assert found == [
        "Mal. This is the Sergeant, who like a good and hardie Souldier fought.",
        "Cap. Doubtfull it stood, as two spent Swimmers, that doe cling together.",
        "King. What he hath lost, Noble Macbeth hath wonne, and so we say.",
    ]
    first = opening(scene, 0, len(scene))
    assert first is not None and scene[first.start : first.end].startswith("Mal. This is")
