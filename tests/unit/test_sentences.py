"""Sentence boundaries: abbreviations do not end a sentence, quotes stay with their sentence, a
blank line always ends one, and spans are exact offsets of trimmed text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from folio.app.chunking import chunk_book
from folio.domain.sentences import sentence_spans, split_sentences
from tests.unit.test_chunking import make_book


def test_titles_and_common_abbreviations_do_not_end_a_sentence() -> None:
    text = (
        "Mr. Darcy bowed to Mrs. Bennet. Dr. Polidori lived in St. James's Street, "
        "e.g. near the park. It was 3 p.m. when they left! “Is it so?” said he."
    )
    assert split_sentences(text) == [
        "Mr. Darcy bowed to Mrs. Bennet.",
        "Dr. Polidori lived in St. James's Street, e.g. near the park.",
        "It was 3 p.m. when they left!",
        "“Is it so?” said he.",
    ]


def test_a_blank_line_ends_a_sentence_and_lines_inside_one_are_joined() -> None:
    text = "CHAPTER I\n\nIt is a truth universally\nacknowledged, that Mr. Bingley came."
    assert split_sentences(text) == [
        "CHAPTER I",
        "It is a truth universally acknowledged, that Mr. Bingley came.",
    ]


@given(st.text(alphabet=st.sampled_from("ab .!?\n“”Mr"), max_size=80), st.integers(0, 5))
def test_spans_are_trimmed_ordered_and_inside_the_range(text: str, start: int) -> None:
    start = min(start, len(text))
    last = start
    for s, e in sentence_spans(text, start):
        assert last <= s < e <= len(text)
        assert text[s:e] == text[s:e].strip()
        last = e


def test_a_chunk_never_ends_after_mr() -> None:
    sentence = "Then Mr. Bingley spoke to Mr. Darcy about the ball at Netherfield. "
    text = sentence * 40
    book = make_book(text, chapter_starts=[], page_cuts=[len(text) // 2])
    chunks = chunk_book("b", book, target_words=20, overlap_words=0, max_words=30)
    assert len(chunks) > 5 and all(c.text.endswith("Netherfield.") for c in chunks)


def test_a_quote_mark_opening_the_next_word_starts_the_next_sentence() -> None:
    """Moby Dick: 'Captain Ahab did not name himself. '' was quoted, the mark of "'Twas" left at
    its end by the segmenter."""
    text = "\"Yes,\" said he.  'Twas a foolish whim.  He went out. 'Tis late.  "
    assert split_sentences(text) == [
        '"Yes," said he.',
        "'Twas a foolish whim.",
        "He went out.",
        "'Tis late.",
    ]
    assert split_sentences("He smiled. '") == ["He smiled."]


def test_a_dialogue_tag_cut_off_a_question_or_an_exclamation_stays_with_it() -> None:
    """White Fang: "Bill asked anxiously." was quoted on its own for "What happened to Bill?"."""
    text = (
        "Bill held up the empty cup. “Where is it?” Bill asked anxiously. Henry looked about. "
        "“Go away!” He left the room quietly and never came back."
    )
    assert split_sentences(text) == [
        "Bill held up the empty cup.",
        "“Where is it?” Bill asked anxiously.",
        "Henry looked about.",
        "“Go away!”",  # more than a tag's few words follow: a sentence of its own
        "He left the room quietly and never came back.",
    ]
