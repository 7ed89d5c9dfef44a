"""One number per source on every surface: where ``citation_marks`` puts each source's number (the
terminal's ``[n]``, the page's buttons, the API's ``citation_marks``), and ``/v1``'s numbered
Sources line."""

from __future__ import annotations

from types import SimpleNamespace

from folio.domain.conversations import Source
from folio.entrypoints.api.routes.openai_compat import sources_suffix
from folio.entrypoints.citation_marks import citation_marks, numbered_answer
from folio.entrypoints.views import SourceView, TurnMetaView, TurnView, marks_of

# the reported case: two quotes of one chunk, both written "(Chapter 3, pp. 32-33)"
ANSWER = (
    "From the book, up to Chapter 5:\n"
    '- "On the same day I paid M. Waldman a visit." (Chapter 3, pp. 32-33)\n'
    '- "His gentleness was never tinged by dogmatism." (Chapter 3, pp. 32-33)\n'
)
VISIT, GENTLE = "On the same day I paid M. Waldman a visit.", "His gentleness was never tinged"
SOURCES = (
    Source("c1", "Chapter 3", "32", "32", 100, 140, quote=VISIT),
    Source("c1", "Chapter 3", "33", "33", 900, 950, quote=GENTLE),
)


def test_two_quotes_on_the_same_pages_get_two_numbers() -> None:
    marks = citation_marks(ANSWER, SOURCES)
    assert [n for _, n in marks] == [1, 2]
    first_line_end = ANSWER.index("\n", ANSWER.index("Waldman"))
    assert marks[0][0] == first_line_end  # after the quote's own page reference
    numbered = numbered_answer(ANSWER, SOURCES)
    assert 'a visit." (Chapter 3, pp. 32-33) [1]\n' in numbered
    assert 'dogmatism." (Chapter 3, pp. 32-33) [2]\n' in numbered


def test_sources_cited_only_by_the_same_page_take_one_reference_each() -> None:
    answer = "Waldman was kind (p. 32). He praised chemistry (p. 32). Then he left."
    sources = [Source("a", None, "32", "32", 0, 10, quote="x" * 20),
               Source("b", None, "32", "32", 20, 30, quote="y" * 20)]  # fmt: skip
    assert numbered_answer(answer, sources) == (
        "Waldman was kind (p. 32) [1]. He praised chemistry (p. 32) [2]. Then he left."
    )


def test_a_page_range_reference_covers_the_pages_inside_it() -> None:
    answer = "He studied chemistry (pp. 31-34)."
    [(at, n)] = citation_marks(answer, [Source("a", None, "33", "33", 0, 1, quote="z" * 20)])
    assert (answer[:at], n) == ("He studied chemistry (pp. 31-34)", 1)


def test_the_api_sends_the_same_marks_with_a_turn_and_a_stored_turn() -> None:
    views = [SourceView.model_validate(s) for s in SOURCES]
    expected = [{"at": at, "source": n} for at, n in citation_marks(ANSWER, SOURCES)]
    assert [m.model_dump() for m in marks_of(ANSWER, views)] == expected
    assert "citation_marks" in TurnView.model_computed_fields  # built from its answer
    assert "citation_marks" in TurnMetaView.model_fields  # serialize.turn_meta_dict fills it


def test_v1_lists_every_source_with_its_number_even_on_one_page() -> None:
    result = SimpleNamespace(answer=ANSWER, citations=SOURCES, position_set=True)
    suffix = sources_suffix(result)  # type: ignore[arg-type]
    assert suffix == "\n\nSources: [1] Chapter 3, p. 32; [2] Chapter 3, p. 33"
    assert sources_suffix(SimpleNamespace(answer="No.", citations=(), position_set=True)) == ""  # type: ignore[arg-type]


def test_a_bare_page_reference_takes_a_number_and_code_keeps_none() -> None:
    answer = "Clerval arrives (p. 42), later at pp. 46-47; `p. 42` in code stays."
    sources = [Source("a", None, "42", "42", 0, 1, quote="q" * 20),
               Source("b", None, "46", "47", 5, 9, quote="r" * 20)]  # fmt: skip
    assert numbered_answer(answer, sources) == (
        "Clerval arrives (p. 42) [1], later at pp. 46-47 [2]; `p. 42` in code stays."
    )


def test_a_number_never_splits_the_text_a_quote_runs_on_in() -> None:
    """A quote holding straight quotes is found as two ('"<b a="' and '">x</b>"'): their numbers
    go after the whole of it, not between its characters."""
    answer = 'He wrote "<b class="x">bold text</b>" on the wall.'
    sources = [Source("a", None, "1", "1", 0, 1, quote="<b class="),
               Source("a", None, "1", "1", 2, 3, quote='x">bold text</b>')]  # fmt: skip
    assert numbered_answer(answer, sources) == (
        'He wrote "<b class="x">bold text</b>" [1] [2] on the wall.'
    )


def test_a_quote_is_marked_where_it_stands_quoted_not_where_a_place_names_its_words() -> None:
    """The people list: Hirsch is first met in the heading "The Duel of Dr Hirsch", which the
    line before names in its place "(III. The Duel of Dr Hirsch, p. 40)"."""
    answer = (
        '- Flambeau, first met in III. The Duel of Dr Hirsch, p. 40: "his friend Flambeau sat'
        ' down opposite."\n- Hirsch, first met in III. The Duel of Dr Hirsch, p. 34: "The Duel'
        ' of Dr Hirsch"\n'
    )
    sources = [
        Source("a", "III", "40", "40", 900, 950, quote="his friend Flambeau sat down opposite."),
        Source("b", "III", "34", "34", 100, 121, quote="The Duel of Dr Hirsch"),
    ]
    numbered = numbered_answer(answer, sources)
    assert 'opposite." [1]\n' in numbered and '"The Duel of Dr Hirsch" [2]\n' in numbered
    assert "Hirsch, [2]" not in numbered and "Hirsch, p. 40: " in numbered
