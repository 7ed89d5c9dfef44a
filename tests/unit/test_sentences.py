"""Sentence boundaries: abbreviations do not end a sentence, quotes stay with their sentence, a
blank line always ends one, and spans are exact offsets of trimmed text."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from folio.app.chunking import chunk_book
from folio.domain.sentences import _PREFIX, sentence_spans, speakers, speeches, split_sentences
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


def test_a_line_of_spaces_is_a_blank_line() -> None:
    """Paradise Lost: its title line, a heading and the first lines of verse were one sentence
    (the segmenter takes a line of spaces for text)."""
    text = "[Paradise Lost by John Milton 1667] \n \n \nBook I\n\n Of Man's first disobedience"
    assert split_sentences(text) == [
        "[Paradise Lost by John Milton 1667]",
        "Book I",
        "Of Man's first disobedience",
    ]
    assert [text[s:e] for s, e in sentence_spans(text)] == split_sentences(text)


def test_a_section_number_alone_on_its_line_is_no_part_of_the_verse_under_it() -> None:
    """Leaves of Grass quoted "26 Now I will do nothing but listen," (section 26's number)."""
    text = "toward it.\n\n     26\nNow I will do nothing but listen,\nTo hear.\n\nIn\n1848 all."
    assert split_sentences(text) == [
        "toward it.",
        "26",
        "Now I will do nothing but listen, To hear.",
        "In 1848 all.",  # a number inside a sentence stays in it
    ]
    assert [text[s:e] for s, e in sentence_spans(text)][1] == "26"


def test_a_chapter_s_heading_line_is_no_part_of_its_first_sentence_without_a_blank_line() -> None:
    """A PDF's text has no blank lines: the story so far quoted "Chapter 1 I am by birth a
    Genevese, and my family..." as Chapter 1's opening sentence."""
    text = "Chapter 1\nI am by birth a Genevese, and my\nfamily is old. We were\nhappy."
    assert split_sentences(text)[0] == "Chapter 1 I am by birth a Genevese, and my family is old."
    assert split_sentences(text, opening=True) == [
        "Chapter 1",
        "I am by birth a Genevese, and my family is old.",
        "We were happy.",
    ]
    spans = sentence_spans(text, opening=True)
    assert text[slice(*spans[0])] == "Chapter 1" and text[slice(*spans[1])].startswith("I am")
    titled = "  The Whiteness of the Whale\nWhat the white whale was to Ahab, has been hinted."
    assert split_sentences(titled, opening=True)[0] == "The Whiteness of the Whale"
    # a first line of prose (a chapter with no heading) is not cut from its sentence
    prose = "It was a dark and stormy night, and\nthe wind blew."
    assert split_sentences(prose, opening=True) == split_sentences(prose)
    assert split_sentences("Chapter 1", opening=True) == ["Chapter 1"]


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


FOLIO = (  # Macbeth as the First Folio prints it (../shared/data/books/shakespeare-macbeth.txt)
    "Scena Tertia.\n\nThunder. Enter the three Witches.\n\n"
    "  1. Where hast thou beene, Sister?\n  2. Killing Swine\n\n   3. Sister, where thou?\n"
    "   All. Thus doe goe, about, about,\nPeace, the Charme's wound vp.\n"
    "Enter Macbeth and Banquo.\n\n  Macb. So foule and faire a day I haue not seene\n\n"
    "   Banquo. How farre is't call'd to Soris? What are these,\nSo wither'd\n\n"
    "  La. That which hath made them drunk, hath made me bold\n\nExeunt.\n"
)


def parts(text: str, **kwargs: bool) -> list[tuple[str | None, bool, str]]:
    return [
        (s.speaker, s.staged, " ".join(text[s.start : s.end].split()))
        for s in speeches(text, **kwargs)
    ]


def test_a_play_is_cut_into_its_speeches_and_stage_directions() -> None:
    assert parts(FOLIO, opening=True) == [
        (None, True, "Scena Tertia. Thunder. Enter the three Witches."),
        (None, False, "Where hast thou beene, Sister?"),  # the First Witch: "1."
        (None, False, "Killing Swine"),
        (None, False, "Sister, where thou?"),
        ("All", False, "Thus doe goe, about, about, Peace, the Charme's wound vp."),
        (None, True, "Enter Macbeth and Banquo."),  # closing the speech, with no blank line
        ("Macb", False, "So foule and faire a day I haue not seene"),
        ("Banquo", False, "How farre is't call'd to Soris? What are these, So wither'd"),
        ("La", False, "That which hath made them drunk, hath made me bold"),  # "La." as a title
        (None, True, "Exeunt."),
    ]
    # a passage opening in the middle of a scene may open with the end of a speech
    opened = parts(FOLIO[FOLIO.index("Thunder") :])[0]
    assert opened == (None, False, "Thunder. Enter the three Witches.")
    modern = (
        "HAMLET.\nA little more than kin, and less than kind.\n\nKING.\nHow is it?\n\nHAMLET.\nNo."
    )
    assert [p[0] for p in parts(modern)] == ["HAMLET", "KING", "HAMLET"]


def test_prose_is_no_play() -> None:
    """A wrapped line of a novel may open with a title or a word ending its sentence: "Mr." is a
    title, "Killer." is not set apart (Moby Dick's Cetology), a numbered heading is a numeral."""
    prose = (
        "He knew the whale\nKiller.  Both are outlaws, even in the lawless seas.\n"
        "Mr. Darcy bowed, and\nMr. Bingley smiled; then\nMrs. Bennet spoke.\n"
        "II. The Algerine Porpoise.  III. The Mealy-mouthed\nPorpoise."
    )
    assert parts(prose) == [(None, False, " ".join(prose.split()))]
    # a chapter of a novel where a name ends a sentence at a line's start three times or more
    # (Pride and Prejudice's "Wickham."): a play's prefixes open a share of its lines
    chapter = (
        "She walked on with him, and all the while she thought of\nWickham.  He smiled.\n"
        + "The evening passed as every evening there had passed before it.\n" * 30
    ) * 3
    assert len(speeches(chapter)) == 1


def test_a_whole_play_s_speakers_are_its_prefixes_and_a_novel_has_none() -> None:
    play = FOLIO * 3
    tags = {tag for _, tag in speakers(play)}
    assert {"All", "Macb", "Banquo", "La"} <= tags and not tags & {"1", "2", "3"}
    assert all(play[at : at + len(tag)] == tag for at, tag in speakers(play))
    wrapped = "He knew the whale\nKiller.  Both are outlaws.\n"  # twice: set apart as a speaker's
    novel = wrapped * 2 + "Mr. Darcy bowed, and the whale swam by the ship at night.\n" * 40
    assert speakers(novel) == []


lines = st.lists(
    st.sampled_from(
        ["  Macb. So foule", "   Banq. How farre", "  1. Where hast", "Enter Macbeth.", "", "  ",
         "Peace, the Charme", "HAMLET.", "Exeunt.", "Mr. Darcy bowed", "Killer.  Both are"]
    ),
    max_size=30,
).map("\n".join)  # fmt: skip


@given(lines, st.booleans())
def test_speeches_cover_the_text_but_its_prefixes_in_order(text: str, opening: bool) -> None:
    parts = speeches(text, opening=opening)
    assert all(0 <= p.start <= p.end <= len(text) for p in parts)
    assert all(a.end <= b.start for a, b in itertools.pairwise(parts))
    covered = {i for p in parts for i in range(p.start, p.end)}
    prefixes = {i for m in _PREFIX.finditer(text) for i in range(m.start(), m.end())}
    assert all(c.isspace() or i in covered or i in prefixes for i, c in enumerate(text))
