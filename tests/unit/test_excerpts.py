"""What a model is sent of a passage found: the sentence that answers, its neighbours, "…" where
text is left out, and the passage's place unchanged (``folio.agent.excerpts``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from itertools import pairwise

from folio.agent.citations import select_citations
from folio.agent.excerpts import PassageExcerpts
from folio.domain.passages import (
    Passage,
    SearchResults,
    ToolOutcome,
    decode_tool_result,
    encode_payload,
)

SENTENCES = [
    "The morning was grey over the harbour.",
    "Fishermen mended their nets in silence by the wall.",
    "Old Tom kept the lighthouse key in a tin box under his bed.",
    "Nobody else in the village knew where that box was hidden.",
    "The gulls quarrelled over scraps of bread on the pier.",
    "A cart rattled past the chapel towards the market square.",
    "Children chased a dog along the sand until it was dark.",
]
QUERY = "Where did Tom keep the lighthouse key?"
START = 1000


def passage(sentences: Sequence[str] = SENTENCES, *, start: int = START) -> Passage:
    text = " ".join(sentences)
    return Passage(
        chunk_id="c7",
        chapter="Chapter 2",
        page_start="14",
        page_end="15",
        char_start=start,
        char_end=start + len(text),
        text=text,
        score=0.8,
        breaks=((start, "14"), (start + 85, "15")),  # SENTENCES[2] on p. 15
    )


def excerpts(**kwargs: int) -> PassageExcerpts:
    settings = {"neighbours": 1, "budget": 200, "lead": 0, **kwargs}
    return PassageExcerpts(**settings)


def test_the_answering_sentence_is_sent_with_its_neighbours_and_ellipses_for_the_rest():
    (cut,) = excerpts().trim(QUERY, [passage()])
    assert cut.sent_text == f"… {SENTENCES[1]} {SENTENCES[2]} {SENTENCES[3]} …"
    assert cut.text == passage().text  # the passage's own text stays whole


def test_without_neighbours_only_the_answering_sentence_is_sent():
    (cut,) = excerpts(neighbours=0, budget=len(SENTENCES[2]) + 5).trim(QUERY, [passage()])
    assert cut.sent_text == f"… {SENTENCES[2]} …"


def test_the_place_of_a_cut_passage_is_the_whole_chunks():
    whole = passage()
    (cut,) = excerpts().trim(QUERY, [whole])
    assert (cut.chunk_id, cut.chapter, cut.pages, cut.char_start, cut.char_end, cut.score) == (
        whole.chunk_id, whole.chapter, whole.pages, whole.char_start, whole.char_end, whole.score
    )  # fmt: skip
    assert cut.key == whole.key and cut.breaks == whole.breaks


def test_what_is_shown_is_spans_of_the_passage_in_order_within_the_budget():
    for query in (QUERY, "gulls bread pier", "cart chapel market", "dog sand dark", "grey"):
        for budget in (60, 120, 200):
            (cut,) = excerpts(budget=budget).trim(query, [passage()])
            assert cut.shown
            spans = list(cut.shown)
            assert spans == sorted(spans)
            assert all(a < b < c for (a, b), (c, _) in pairwise(spans))
            assert all(cut.char_start <= a < b <= cut.char_end for a, b in spans)
            assert sum(b - a for a, b in spans) <= budget, (query, budget, spans)
            assert len(cut.sent_text) <= budget + 4 * len(spans)  # each part and its "…"


def test_a_second_sentence_that_answers_is_added_while_the_budget_lasts():
    (cut,) = excerpts(neighbours=0, budget=130).trim("lighthouse key gulls bread", [passage()])
    assert SENTENCES[2] in cut.sent_text and SENTENCES[4] in cut.sent_text
    assert cut.sent_text.count("…") == 3  # before, between and after the two


def test_one_sentence_longer_than_the_budget_is_cut_at_a_word():
    long = "Tom kept the lighthouse key " + " ".join(f"beside{i}" for i in range(60)) + "."
    (cut,) = excerpts(budget=100).trim(QUERY, [passage([SENTENCES[0], long, SENTENCES[4]])])
    assert len(cut.shown or ()) == 1
    (start, end) = (cut.shown or ())[0]
    assert end - start <= 100 and cut.sent_text.startswith("… Tom kept the lighthouse key")
    assert cut.text[end - cut.char_start - 1] != " " and cut.text[end - cut.char_start] == " "


def test_a_short_passage_the_first_passages_and_text_not_the_books_are_sent_whole():
    short = passage(SENTENCES[:2])
    foreign = replace(passage(), text="A recap in other words. " * 20)  # not the book's slice
    cut = excerpts(budget=200, lead=1).trim(QUERY, [passage(), short, foreign, passage()])
    assert [p.shown is None for p in cut] == [True, True, True, False]
    assert [p.sent_text for p in cut[:3]] == [passage().text, short.text, foreign.text]


def test_the_sentence_sharing_most_of_the_querys_words_is_shown_and_one_sharing_none_is_not():
    # "cart" is in one sentence, "chapel market square" in the next: that one is shown, whatever
    # their order in the passage; the sentences sharing none of the words are left out
    query = "the cart by the chapel market square"
    for order in (SENTENCES, SENTENCES[::-1]):
        (cut,) = excerpts(neighbours=0, budget=70).trim(query, [passage(order)])
        assert cut.sent_text == f"… {SENTENCES[5]} …", order
    (cut,) = excerpts(neighbours=0, budget=70).trim("cart chapel", [passage()])
    assert SENTENCES[5] in cut.sent_text and SENTENCES[2] not in cut.sent_text


def test_between_sentences_sharing_as_many_words_the_one_whose_neighbours_share_more_is_shown():
    # "grey", "chapel" and "dog" are one sentence's each; the chapel's and the dog's share the other
    (cut,) = excerpts(neighbours=0, budget=70).trim("grey chapel dog", [passage()])
    assert cut.sent_text == f"… {SENTENCES[5]} …"  # not the first, grey morning's


def test_the_tool_result_a_model_reads_carries_the_cut_text_and_the_exact_place():
    (cut,) = excerpts().trim(QUERY, [passage()])
    data = encode_payload(SearchResults(QUERY, "through Chapter 2", (cut,)))
    (result,) = data["results"]
    assert result["text"] == cut.sent_text
    assert (result["chunk_id"], result["pages"], result["char_start"], result["char_end"]) == (
        "c7", "14-15", START, cut.char_end
    )  # fmt: skip
    brief = encode_payload(SearchResults(QUERY, "", (cut,)), brief=True)
    assert brief["results"][0]["text"] == cut.sent_text
    stored = ToolOutcome(True, SearchResults(QUERY, "", (cut,))).to_json()
    assert json.loads(stored)["data"]["results"][0]["text"] == cut.sent_text
    assert decode_tool_result(stored).passages[0].text == cut.sent_text


def test_a_model_quoting_what_it_was_sent_is_cited_on_that_sentences_page():
    (cut,) = excerpts().trim(QUERY, [passage()])
    answer = f'He kept it "{SENTENCES[2][:-1]}" (Chapter 2, p. 15).'
    (source,) = select_citations(answer, [cut])
    offset = START + passage().text.index(SENTENCES[2])
    assert (source.char_start, source.page_start) == (offset, "15")


def test_a_quote_of_text_the_model_was_not_sent_is_not_cited_from_that_passage():
    (cut,) = excerpts().trim(QUERY, [passage()])
    answer = f'As the book says, "{SENTENCES[5][:-1]}" (Chapter 2, p. 15).'
    assert SENTENCES[5] not in cut.sent_text
    assert all(s.char_start != START + passage().text.index(SENTENCES[5])
               for s in select_citations(answer, [cut]))  # fmt: skip


def test_a_citation_without_a_quote_shows_what_the_model_was_sent():
    (cut,) = excerpts().trim(QUERY, [passage()])
    (source,) = select_citations("He kept it under his bed.", [cut])
    assert source.quote.startswith(f"… {SENTENCES[1]}")
    assert SENTENCES[0] not in source.quote


def test_part_of_a_cut_passage_shows_only_what_was_shown_of_that_part():
    (cut,) = excerpts().trim(QUERY, [passage()])
    offset = START + passage().text.index(SENTENCES[5])
    assert cut.place(offset, cut.char_end).shown == ()
    assert cut.place(offset, cut.char_end).sent_text == "…"
    first = START + passage().text.index(SENTENCES[2])
    assert cut.place(first, offset).sent_text.startswith(SENTENCES[2])


def test_search_book_cuts_passages_for_a_model_and_leaves_them_whole_for_the_offline_policy():
    from folio.agent.tools import ToolContext, default_registry
    from tests.unit.test_book_tools import make_story

    story = make_story()
    registry, context = default_registry(), ToolContext(book=story.book)
    arguments = {"query": "Henry Clerval loved poetry", "k": 3}
    offline = registry.execute("search_book", context, story.services(), arguments)
    cutter = PassageExcerpts(neighbours=0, budget=60, lead=0)
    for_model = replace(story.services(), excerpts=cutter)
    model = registry.execute("search_book", context, for_model, arguments)
    assert isinstance(offline.data, SearchResults) and isinstance(model.data, SearchResults)
    assert all(p.shown is None for p in offline.data.passages)
    assert "Paracelsus" in offline.to_json()
    assert [p.key for p in model.data.passages] == [p.key for p in offline.data.passages]
    first = model.data.passages[0]
    assert (
        first.sent_text.startswith("Victor's friend Henry Clerval") and first.sent_text[-1] == "…"
    )
    assert "Paracelsus" not in model.to_json()
