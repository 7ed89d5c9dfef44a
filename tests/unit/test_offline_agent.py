"""The offline policy (``OfflineStrategy``) with fakes: the search query is the question then the
reader's earlier questions (latest first, small talk left out, answers never read), names are
looked up before searching, quotes are numbered sources, none about someone else, none twice, and
an honest nothing when nothing answers."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest

from folio.adapters.llm.offline import OfflineChatProvider
from folio.agent.citations import listed_quotes
from folio.agent.context import WITHHELD_ANSWER
from folio.agent.offline.answer import MAX_QUOTE_WORDS, best_quotes, compose, lead_location
from folio.agent.offline.kinds import MessageKinds
from folio.agent.offline.strategy import (
    OfflineStrategy,
    asked_names,
    common_new_name,
    met_later,
    reader_answer,
    search_query,
    subject_start,
    switches_topic,
    told_by,
)
from folio.domain.errors import LLMError, LLMErrorCode
from folio.domain.llm import PromptMessage, ToolDefinition, ToolInvocation
from folio.domain.passages import (
    LIST_CHAPTERS,
    PEOPLE,
    READ_PASSAGE,
    SEARCH_BOOK,
    ChapterList,
    Passage,
    PassageText,
    PeopleList,
    Person,
    Recap,
    SearchResults,
    ToolOutcome,
)
from folio.domain.ports import RetrievalOutcome
from folio.domain.search import STOPWORDS, quoted_phrases

TOOLS = [ToolDefinition(n, n, {"type": "object"}) for n in (SEARCH_BOOK, PEOPLE)]
WHERE = "through Chapter 5 (p. 40 of 90, 44%)"


class BagOfWords:
    """A fake embedder: one dimension per content word, so cosine is word overlap."""

    name, dimensions = "bag", 512

    def __init__(self, relevance_floor: float = 0.0) -> None:
        self.relevance_floor = relevance_floor  # any shared word may answer unless raised

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for w in re.findall(r"[a-z]+", text.lower()):
                if w not in STOPWORDS:
                    out[row, zlib.crc32(w.encode()) % self.dimensions] += 1
            out[row] /= max(float(np.linalg.norm(out[row])), 1e-9)
        return out


def passage(text: str, chapter: str = "Chapter 2", page: str = "12") -> Passage:
    return Passage(f"c{page}", chapter, page, page, 0, len(text), text)


class Runner:
    """A tool runner with canned outcomes per tool, remembering the calls."""

    def __init__(self, **outcomes: ToolOutcome) -> None:
        self.outcomes = outcomes
        self.calls: list[ToolInvocation] = []

    def __call__(self, invocation: ToolInvocation) -> PromptMessage:
        self.calls.append(invocation)
        outcome = self.outcomes[invocation.tool_name]
        return PromptMessage.tool_result(
            invocation.tool_use_id,
            outcome.to_json(),
            is_error=not outcome.success,
            tool_name=invocation.tool_name,
            outcome=outcome,
        )


def found(*passages: Passage) -> ToolOutcome:
    return ToolOutcome(True, payload=SearchResults("q", WHERE, tuple(passages)))


def met(*people: Person, note: str | None = None) -> ToolOutcome:
    return ToolOutcome(True, payload=PeopleList(tuple(people), WHERE, note))


def ask(
    question: str,
    earlier: Sequence[tuple[str, str]] = (),
    embedder: BagOfWords | None = None,
    **outcomes: ToolOutcome,
):
    messages = [PromptMessage.system("You are a reading companion.")]
    for q, a in earlier:
        messages += [PromptMessage.user(q), PromptMessage.assistant(a)]
    runner = Runner(**{SEARCH_BOOK: found(), PEOPLE: met(), **outcomes})
    strategy = OfflineStrategy(embedder or BagOfWords())
    result = strategy.execute(OfflineChatProvider(), [*messages, PromptMessage.user(question)],
                              TOOLS, runner)  # fmt: skip
    assert result.llm_calls == 0 and result.new_messages[-1].content == result.answer
    return result, runner


def test_the_query_is_the_question_then_earlier_questions_latest_first_never_answers() -> None:
    earlier = [("Where is the lighthouse?", "On the cape, said Marlow."),
               ("Who keeps the lamp?", "Old Tom keeps it.")]  # fmt: skip
    result, runner = ask("what does he eat?", earlier)
    [search] = [c for c in runner.calls if c.tool_name == SEARCH_BOOK]
    query = "what does he eat? Who keeps the lamp? Where is the lighthouse?"
    assert search.arguments["query"] == query and result.queries == (query,)
    assert "Tom" not in query and "Marlow" not in query  # names only an answer used


def test_small_talk_is_never_searched_nor_added_to_later_queries() -> None:
    result, runner = ask("thanks")
    assert runner.calls == [] and result.queries == () and '"' not in result.answer
    _, runner = ask("why did it sink?", [("Which ship sank?", "x"), ("thanks", "You're welcome!")])
    assert runner.calls[-1].arguments["query"] == "why did it sink? Which ship sank?"


def test_the_search_query_is_bounded_and_keeps_the_latest_questions() -> None:
    old = [f"question number {i} " + "x" * 80 for i in range(100)]
    query = search_query("What now?", old)
    assert query.startswith(f"What now? {old[-1]} {old[-2]}")  # the latest next to the question
    assert "number 0 " not in query
    assert len(query) <= 2100


def test_a_quote_is_searched_alone_as_a_phrase_whatever_came_before() -> None:
    earlier = [("Who is Elizabeth?", "x"), ("Where does Victor study?", "x")]
    _, runner = ask("Where does it say “I had worked hard for nearly two years”?", earlier)
    assert runner.calls[-1].arguments["query"] == '"I had worked hard for nearly two years"'
    assert search_query("Who said 'it is late' to him?", ["Who is Tom?"]).startswith("Who said")


def test_a_quote_with_a_new_name_is_searched_once_as_a_phrase() -> None:
    held = passage("Ten thousand a year, and very likely more, said the lady.")
    outcomes = {SEARCH_BOOK: found(held), PEOPLE: met(Person("Darcy", 3, held))}
    result, runner = ask('Where does Darcy say "ten thousand a year"?', **outcomes)
    assert [c.arguments["query"] for c in runner.calls if c.tool_name == SEARCH_BOOK] == [
        '"ten thousand a year"'
    ]
    assert "Ten thousand a year" in result.answer
    assert quoted_phrases(" ‘an open quote" * 3 + " ‘a closed one’") == ["a closed one"]


def test_words_quoted_that_no_passage_holds_are_said_first() -> None:
    held = passage("He had worked hard for nearly two years, said Victor.")
    outcomes = {SEARCH_BOOK: found(held)}
    result, _ = ask('Where does it say "worked hard for two years"?', **outcomes)
    assert result.answer.startswith("Nothing up to Chapter 5 has the words “worked hard for two")
    kept, _ = ask('Where does it say "worked  HARD for nearly two years"?', **outcomes)
    assert kept.answer.startswith("From the book") and "worked hard" in kept.answer


def test_a_new_name_the_conversations_search_misses_is_searched_on_its_own() -> None:
    earlier = [("Who keeps the lamp?", "x"), ("Where is the lighthouse?", "x")]
    lamp = found(passage("The keeper lights the lamp at dusk."))
    _, runner = ask("Who is Captain Ahab?", earlier, **{SEARCH_BOOK: lamp})
    queries = [c.arguments["query"] for c in runner.calls if c.tool_name == SEARCH_BOOK]
    assert queries == [
        "Who is Captain Ahab? Where is the lighthouse? Who keeps the lamp?",
        "Who is Captain Ahab?",
    ]
    one = passage("The keeper lights the lamp for Captain Ahab at dusk.", "Chapter 9", "40")
    _, runner = ask("Who is Captain Ahab?", earlier, **{SEARCH_BOOK: found(lamp.passages[0], one)})
    assert len([c for c in runner.calls if c.tool_name == SEARCH_BOOK]) == 2  # one of two: new
    two = passage("Captain Ahab walks the deck.", "Chapter 9", "41")
    _, runner = ask("Who is Captain Ahab?", earlier, **{SEARCH_BOOK: found(one, two)})
    assert len([c for c in runner.calls if c.tool_name == SEARCH_BOOK]) == 1  # same scene
    # one passage holding the name, in the chapter of another passage the search found: a
    # character of the scene being discussed ("Does Vane think that's reliable?" six questions
    # after "Who is related to the Captain?")
    near = passage("The keeper lights the lamp for Captain Ahab at dusk.", page="13")
    _, runner = ask("Who is Captain Ahab?", earlier, **{SEARCH_BOOK: found(lamp.passages[0], near)})
    assert len([c for c in runner.calls if c.tool_name == SEARCH_BOOK]) == 1
    loose = [replace(p, chapter=None) for p in (lamp.passages[0], near)]  # a book without any
    _, runner = ask("Who is Captain Ahab?", earlier, **{SEARCH_BOOK: found(*loose)})
    assert len([c for c in runner.calls if c.tool_name == SEARCH_BOOK]) == 2
    earlier_volume = replace(near, book_id="v1", volume="The First Voyage")  # its own Chapter 2
    _, runner = ask(
        "Who is Captain Ahab?", earlier, **{SEARCH_BOOK: found(lamp.passages[0], earlier_volume)}
    )
    assert len([c for c in runner.calls if c.tool_name == SEARCH_BOOK]) == 2
    ahab_asked = [*[q for q, _ in earlier], "Who is Captain Ahab?"]
    assert not switches_topic("Why does Ahab limp?", ahab_asked, [])  # a name just used


class Searches(Runner):
    """A runner whose searches answer by query (``found()`` for any other)."""

    def __init__(self, searches: dict[str, ToolOutcome], **outcomes: ToolOutcome) -> None:
        super().__init__(**{SEARCH_BOOK: found(), **outcomes})
        self.searches = searches

    def __call__(self, invocation: ToolInvocation) -> PromptMessage:
        if invocation.tool_name == SEARCH_BOOK:
            self.outcomes[SEARCH_BOOK] = self.searches.get(invocation.arguments["query"], found())
        return super().__call__(invocation)


def test_a_new_protagonists_question_is_searched_alone_too_and_switches_if_it_finds_elsewhere() -> (
    None
):
    """Persuasion: "Why did Anne break off her engagement?" after "Who is Captain Wentworth?":
    Anne is in most passages, so the conversation's search holding her name says nothing; the
    question alone is searched too, and a search sharing no passage with the conversation's is
    a new subject (recorded last: the next question leans on it alone)."""
    deck = passage("Ishmael watched Captain Ahab pace the deck.", page="20")
    mast = passage("Ishmael saw Captain Ahab nail the gold to the mast.", page="21")
    sea = passage("Ishmael went to sea whenever he grew grim about the mouth.", page="2")
    earlier = [("Who is Captain Ahab?", "x")]
    question = "Why did Ishmael go to sea?"
    conversation = f"{question} Who is Captain Ahab?"
    named = passage("Call me Ishmael.", page="1")
    ishmael = Person("Ishmael", 90, named, share=0.8)

    def turn(alone: ToolOutcome, person: Person) -> tuple[list[str], str, list[PromptMessage]]:
        runner = Searches(
            {conversation: found(deck, mast), question: alone}, **{PEOPLE: met(person)}
        )
        messages = [PromptMessage.system("s")]
        for q, a in earlier:
            messages += [*searched(q, q)[:-1], PromptMessage.assistant(a)]
        result = OfflineStrategy(BagOfWords()).execute(
            OfflineChatProvider(), [*messages, PromptMessage.user(question)], TOOLS, runner
        )
        queries = [c.arguments["query"] for c in runner.calls if c.tool_name == SEARCH_BOOK]
        head = [*messages[1:], PromptMessage.user(question), *result.new_messages]
        return queries, result.answer, head

    queries, answer, head = turn(found(sea), ishmael)
    assert queries == [conversation, question] and "went to sea" in answer
    assert subject_start(head) == 1  # a new subject starts with the question
    queries, answer, head = turn(found(mast), ishmael)  # the same scene: the subject goes on
    assert sorted(queries) == sorted([conversation, question]) and "went to sea" not in answer
    assert subject_start(head) == 0  # the search answered from is recorded last
    queries, answer, head = turn(found(), ishmael)  # its own search found nothing: no switch
    assert len(queries) == 2 and "watched Captain Ahab" in answer and subject_start(head) == 0
    queries, _, _ = turn(found(sea), Person("Ishmael", 3, named, share=0.1))  # not a protagonist
    assert queries == [conversation]


def test_a_protagonists_question_pointing_at_someone_else_leans_on_the_conversation() -> None:
    """Emma: "What did Emma plan for her?" after "Who is Harriet Smith?" is about Harriet too
    (an object pronoun is someone else than its subject): searched with the conversation only.
    "Why did Emma break off her engagement?" ("her": Emma's own) is searched alone too."""
    emma = {"Emma": Person("Emma", 900, passage("Emma Woodhouse, handsome."), share=0.7)}
    earlier = ["Who is Harriet Smith?"]
    assert common_new_name("Why did Emma break off her engagement?", earlier, emma)
    assert common_new_name("Did Emma like her new friend?", earlier, emma)
    for leaning in ("What did Emma plan for her?", "What did Emma tell him?",
                    "Why did Emma visit them?", "What did Emma think of her?"):  # fmt: skip
        assert not common_new_name(leaning, earlier, emma), leaning


def searched(question: str, *queries: str) -> list[PromptMessage]:
    """An earlier turn as ``RecentTurnsStrategy(keep_calls=True)`` renders it."""
    calls = [PromptMessage.assistant("", (ToolInvocation(SEARCH_BOOK, f"t{i}", {"query": q}),))
             for i, q in enumerate(queries)]  # fmt: skip
    return [PromptMessage.user(question), *calls, PromptMessage.assistant("an answer")]


def test_a_follow_up_after_a_new_subject_leans_on_the_questions_since_only() -> None:
    head = [
        *searched("Who keeps the lamp?", "Who keeps the lamp?"),
        *searched("Where is the lighthouse?", "Where is the lighthouse? Who keeps the lamp?"),
        *searched(
            "Who is Captain Ahab?",
            "Who is Captain Ahab? Where is the lighthouse? Who keeps the lamp?",
            "Who is Captain Ahab?",  # the turn settled on the question alone: a new subject
        ),
        *searched("Why does he limp?", "Why does he limp? Who is Captain Ahab?"),
        *searched('Where does it say "a bone leg"?', '"a bone leg"'),  # a quote: no new subject
    ]
    assert subject_start(head) == 2
    runner = Runner(**{SEARCH_BOOK: found(), PEOPLE: met()})
    messages = [PromptMessage.system("s"), *head, PromptMessage.user("What ship is his?")]
    OfflineStrategy(BagOfWords()).execute(OfflineChatProvider(), messages, TOOLS, runner)
    query = (
        'What ship is his? Where does it say "a bone leg"? Why does he limp? Who is Captain Ahab?'
    )
    assert runner.calls[-1].arguments["query"] == query  # nothing of the lamp and lighthouse
    assert subject_start(head[:3]) == 0  # the first question starts the first subject
    # without the calls (history seeded from elsewhere) the subject is the whole conversation
    assert subject_start([m for m in head if not m.tool_invocations]) == 0


def test_a_follow_up_quotes_new_sentences_after_the_one_that_answers_best() -> None:
    """Sentences the answer before quoted come after new ones, except one that still answers
    better than every new one (a follow-up on the same sentence gets it again, first)."""
    text = ("The keeper trims the lamp wick. The keeper trims the wick at dawn. "
            "The keeper trims the wick at dusk. The keeper trims the wick and sleeps.")  # fmt: skip
    asked = "what does the keeper trim?"
    first, _ = ask(asked, **{SEARCH_BOOK: found(passage(text))})
    again, _ = ask("and what does the keeper trim then?", [(asked, first.answer)],
                   **{SEARCH_BOOK: found(passage(text))})  # fmt: skip
    quoted_first = re.findall(r'^- "(.+?)"', first.answer, re.M)
    quoted_again = re.findall(r'^- "(.+?)"', again.answer, re.M)
    assert len(quoted_first) == 3 and quoted_again[0] == quoted_first[0]
    assert quoted_again[1] not in quoted_first  # the new one before the other repeated ones


def test_a_why_question_reads_around_the_best_passage_where_the_cause_may_lie() -> None:
    """The search finds the event; the reason is told beside it, outside the passage found."""
    event = passage("The keeper left the lighthouse at dawn, and nobody knew where.")
    around = PassageText(
        passage(
            "The keeper left the lighthouse at dawn, and nobody knew where. He had quarrelled "
            "with the captain over the lighthouse, and left it for that quarrel."
        ),
        WHERE,
    )
    tools = [*TOOLS, ToolDefinition(READ_PASSAGE, READ_PASSAGE, {"type": "object"})]
    outcomes = {
        SEARCH_BOOK: found(event),
        PEOPLE: met(),
        READ_PASSAGE: ToolOutcome(True, payload=around),
    }
    for question, reads in (
        ("Why did the keeper leave the lighthouse?", True),
        ("How did the keeper leave the lighthouse?", True),
        ("When did the keeper leave the lighthouse?", False),
    ):
        runner = Runner(**outcomes)
        messages = [PromptMessage.system("s"), PromptMessage.user(question)]
        result = OfflineStrategy(BagOfWords()).execute(
            OfflineChatProvider(), messages, tools, runner
        )
        read = [c for c in runner.calls if c.tool_name == READ_PASSAGE]
        assert bool(read) is reads, question
        if reads:  # the passage the search ranked first, through the tool (the window's gate)
            assert read[0].arguments == {"chunk_id": event.chunk_id}
            assert "quarrelled with the captain" in result.answer
        else:
            assert "quarrelled" not in result.answer


def test_a_question_about_what_comes_later_gets_one_plain_sentence_and_no_quote() -> None:
    text = "The story ends when the lamp burns out. The keeper sleeps."
    result, _ = ask("How does the story end?", **{SEARCH_BOOK: found(passage(text))})
    assert result.answer == (
        "Nothing up to Chapter 5 answers this, and I cannot look past where you have read."
    )
    whole = ToolOutcome(True, payload=SearchResults("q", "the whole book", (passage(text),)))
    answered, _ = ask("How does the story end?", **{SEARCH_BOOK: whole})
    assert answered.answer.startswith("From the book") and "lamp burns out" in answered.answer


def test_a_question_that_may_ask_about_later_events_is_told_plainly_above_its_quotes() -> None:
    """Not sure enough to be refused ("Does the keeper die later?" is as near "did someone
    die?"), it is answered from the text read, under one plain sentence that nothing past the
    position can be told; with nothing found, that sentence alone."""
    text = "The keeper was ill all winter and would not die. Gulls cry."
    result, _ = ask("Does the keeper die later?", **{SEARCH_BOOK: found(passage(text))})
    first, *rest = result.answer.splitlines()
    assert first == (
        "I cannot look past where you have read: this is only what the book says up to Chapter 5."
    )
    assert "would not die" in "\n".join(rest)
    empty, _ = ask("Does the keeper die later?", **{SEARCH_BOOK: found(passage("Gulls cry."))})
    assert empty.answer == (
        "Nothing up to Chapter 5 answers this, and I cannot look past where you have read."
    )
    plain, _ = ask("Was the keeper ill?", **{SEARCH_BOOK: found(passage(text))})
    assert plain.answer.startswith("From the book, up to Chapter 5:")
    whole = ToolOutcome(True, payload=SearchResults("q", "the whole book", (passage(text),)))
    read, _ = ask("Does the keeper die later?", **{SEARCH_BOOK: whole})  # nothing lies past
    assert read.answer.startswith("From the book")


TOWER = "The lamp is kept in the tower."


@pytest.mark.parametrize(
    ("text", "answer"),
    [  # a question spoken before its dialogue tag; words announcing, or leading into, what follows
        ('"Where is the lamp kept?" asked Tom. The lamp is kept in the tower room.',
         "The lamp is kept in the tower room."),
        ("Where the lamp is kept:\n\nThe lamp is kept in the tower.", TOWER),
        ("Where the lamp is kept,\n\nThe lamp is kept in the tower.", TOWER),
    ],
)  # fmt: skip
def test_a_sentence_that_asks_or_leads_in_does_not_lead_as_an_answer(
    text: str, answer: str
) -> None:
    result, _ = ask("Where is the lamp kept?", **{SEARCH_BOOK: found(passage(text))})
    assert result.answer.splitlines()[1].startswith(f'- "{answer}"')


def test_a_note_in_square_brackets_is_never_quoted() -> None:
    text = "[The Lamp of the Tower by A. Keeper 1901]\n\nThe lamp burns whale oil in the tower."
    result, _ = ask("What does the lamp of the tower burn?", **{SEARCH_BOOK: found(passage(text))})
    assert "[The Lamp" not in result.answer and "whale oil" in result.answer


def test_quotes_are_numbered_sources_best_first_each_once() -> None:
    text = "The lamp burns whale oil. The keeper trims the lamp wick nightly. Gulls cry."
    result, _ = ask(
        "What does the lamp burn?", **{SEARCH_BOOK: found(passage(text), passage(text, page="13"))}
    )
    lines = result.answer.splitlines()
    assert lines[0] == "From the book, up to Chapter 5:"
    assert lines[1] == '- "The lamp burns whale oil." (Chapter 2, p. 12)'
    assert result.answer.count("The lamp burns whale oil.") == 1
    assert "Gulls cry" not in result.answer


def test_a_name_the_reader_has_not_met_is_said_first_honestly() -> None:
    note = "Nothing read so far mentions Ishmael."
    result, runner = ask("Who is Ishmael?", **{PEOPLE: met(note=note)})
    assert [c.tool_name for c in runner.calls] == [PEOPLE, SEARCH_BOOK]  # its names first
    assert runner.calls[0].arguments == {"name": "Ishmael"}
    assert result.answer == "Nothing up to Chapter 5 mentions Ishmael."
    assert "later" not in result.answer  # no hint at what lies past the position
    for later in ("What happens to Ishmael later in the book?", "Will Ishmael survive?"):
        told, _ = ask(later, **{PEOPLE: met(note=note)})
        assert told.answer == (
            "Nothing up to Chapter 5 mentions Ishmael, and I cannot look past where you have read."
        ), later


def test_a_question_typed_without_capitals_looks_up_the_names_the_book_writes_capitalised() -> None:
    """ "who is elinor?" looked up no one (names were capitalised words only) and so led with no
    introduction; the passages found write "Elinor" and "Colonel Brandon" capitalised ("the
    colonel" too, but less often), never "is" or "who"."""
    text = (
        "Elinor, this eldest daughter, possessed a strength of understanding. He spoke to "
        "Elinor of Colonel Brandon, and then of the colonel's age; Colonel Brandon smiled, and "
        "Colonel Brandon rose."
    )
    for question, names in [
        ("who is elinor?", ["Elinor"]),
        ("WHO IS ELINOR?", ["Elinor"]),
        ("what did elinor think of colonel brandon", ["Elinor", "Colonel Brandon"]),
        ("what did I say about the daughter?", []),  # nothing the book writes as a name
    ]:
        someone = met(Person("Elinor", 3, passage(text)))  # each name met
        _, runner = ask(question, **{SEARCH_BOOK: found(passage(text)), PEOPLE: someone})
        looked_up = [c.arguments["name"] for c in runner.calls if c.tool_name == PEOPLE]
        assert looked_up == names, question
    _, runner = ask("Who is elinor?", **{SEARCH_BOOK: found(passage(text))})
    assert [c.arguments["name"] for c in runner.calls if c.tool_name == PEOPLE] == ["Elinor"]
    _, runner = ask("Who is Mrs elinor?", **{SEARCH_BOOK: found(passage(text))})  # as written
    assert [c.arguments["name"] for c in runner.calls if c.tool_name == PEOPLE] == ["Mrs"]


def test_a_misspelt_name_is_asked_again_as_the_book_writes_it_and_says_so() -> None:
    """ "Who is Mr Knightly?" was "Nothing up to Chapter XVIII mentions Mr Knightly." about one
    of Emma's main characters; the people tool gives the nearest name read ("Mr Knightley")."""
    intro = "Mr. Knightley, a sensible man about seven or eight-and-thirty, was a friend."
    him = Person("Mr Knightley", 9, passage(intro), ("Knightley",))
    outcomes = {
        "Mr Knightly": ToolOutcome(True, payload=PeopleList((him,), WHERE, "near", "Mr Knightly")),
        "Mr Knightley": met(him),
    }

    class ByName(Runner):
        def __call__(self, invocation: ToolInvocation) -> PromptMessage:
            if invocation.tool_name == PEOPLE:
                self.outcomes = {**self.outcomes, PEOPLE: outcomes[invocation.arguments["name"]]}
            return super().__call__(invocation)

    runner = ByName(**{SEARCH_BOOK: found(passage(intro)), PEOPLE: met()})
    result = OfflineStrategy(BagOfWords()).execute(
        OfflineChatProvider(), [PromptMessage.user("Who is Mr Knightly?")], TOOLS, runner
    )
    first, rest = result.answer.split("\n", 1)
    assert first == "Nothing up to Chapter 5 mentions Mr Knightly: I took it for Mr Knightley."
    assert rest.startswith("From the book") and intro in rest
    searched = [c.arguments["query"] for c in runner.calls if c.tool_name == SEARCH_BOOK]
    assert searched == ["Who is Mr Knightly?", "Who is Mr Knightley?"]
    assert result.queries[-1] == "Who is Mr Knightley?"  # the search answered from


def test_nothing_close_enough_is_said_honestly() -> None:
    result, _ = ask(
        "Why did the storm break the mast?", **{SEARCH_BOOK: found(passage("Gulls cry."))}
    )
    assert result.answer.startswith("Nothing up to Chapter 5 answers this.")


def test_a_sentence_at_or_under_the_embedders_relevance_floor_does_not_answer() -> None:
    question, sentence = "Does the lamp burn oil at night?", "The lamp burns whale oil."
    vectors = BagOfWords().embed([question, sentence])
    score = float(vectors[0] @ vectors[1])
    assert 0 < score < 1
    outcomes = {SEARCH_BOOK: found(passage(f"{sentence} The keeper sleeps."))}
    kept, _ = ask(question, embedder=BagOfWords(score - 0.05), **outcomes)
    assert f'"{sentence}"' in kept.answer
    for floor in (score, score + 0.05):  # each model's own scale: the floor is the embedder's
        result, _ = ask(question, embedder=BagOfWords(floor), **outcomes)
        assert result.answer.startswith("Nothing up to Chapter 5 answers this."), floor


def test_no_sentence_whose_subject_is_another_person_is_quoted() -> None:
    first = passage("Miss Lacey was the sister of Mr. Lacey.", page="3")
    lacey = Person("Miss Lacey", 9, first)
    text = ("Mr. Lacey was rich and Miss Lacey admired him. Miss Lacey sneered at the dance. "
            "Mr. Darcy danced with Miss Lacey.")  # fmt: skip
    result, _ = ask("Who is Miss Lacey?", **{PEOPLE: met(lacey), SEARCH_BOOK: found(passage(text))})
    quoted = re.findall(r'"([^"]+)"', result.answer)
    assert "Miss Lacey was the sister of Mr. Lacey." in quoted
    assert "Miss Lacey sneered at the dance." in quoted
    assert not any(q.startswith(("Mr. Lacey", "Mr. Darcy")) for q in quoted)


def test_names_are_the_questions_capitalised_runs_not_its_opening_word() -> None:
    assert asked_names("Who is Miss Bingley?") == ["Miss Bingley"]
    assert asked_names("Tell me about Charlotte Lucas") == ["Charlotte Lucas"]
    assert asked_names("Describe Professor Waldman") == ["Describe Professor Waldman"]
    assert asked_names("What did he do next?") == []
    assert asked_names("Who is Evan MacIan?") == ["Evan MacIan"]
    assert asked_names("Is O'Brien a friend of McDonald?") == ["O'Brien", "McDonald"]


def test_without_the_search_tool_it_says_it_cannot_search() -> None:
    strategy = OfflineStrategy(BagOfWords())
    messages = [PromptMessage.user("Why did the mast break?")]
    result = strategy.execute(OfflineChatProvider(), messages, [], Runner())
    assert result.answer == "I cannot search this book here." and result.queries == ()


def test_the_offline_provider_has_no_model_and_says_so() -> None:
    p = OfflineChatProvider()
    assert (p.provider_name, p.model_name, p.supports_tools) == ("offline", "extractive", False)
    with pytest.raises(LLMError) as e:
        p.chat([PromptMessage.user("hi")])
    assert e.value.code == LLMErrorCode.UNSUPPORTED_FEATURE


def test_a_recap_line_of_dialogue_stands_in_its_own_quote_marks() -> None:
    """A chapter's sentence that is dialogue (its own marks open and close it) is not wrapped in
    quotes a second time; narration is quoted."""
    said, told = "“James has been murdered, for all I can make out.”", "The rooms lay by the sea."
    recap = Recap((passage(said, "I"), passage(told, "II")), WHERE)
    lines = reader_answer(ToolOutcome(True, payload=recap)).splitlines()
    assert lines[1] == f"- I, p. 12: {said}" and lines[2] == f'- II, p. 12: "{told}"'


def test_where_am_i_after_questions_also_says_where_the_conversation_is() -> None:
    """ "What chapter is this?" after questions about a scene may ask for the scene's chapter:
    the position is told, then where the answer just given quoted first (no search); when other
    messages came between, where the search for the last question about the book lands (one
    search, bounded by the window like any other); before any question, or after one whose
    answer said nothing answers it, the position only."""
    tools = [*TOOLS, ToolDefinition(LIST_CHAPTERS, LIST_CHAPTERS, {"type": "object"})]
    chapters = ToolOutcome(True, payload=ChapterList((), WHERE))
    scene = passage("Captain Vane took the sextant.", chapter="Chapter 3", page="21")
    answered = compose(best_quotes(BagOfWords(), "sextant", [scene]), "up to Chapter 5")
    asked = "Who had the sextant?"

    def where_am_i(*head: PromptMessage) -> tuple[RetrievalOutcome, Runner]:
        runner = Runner(**{LIST_CHAPTERS: chapters, SEARCH_BOOK: found(scene), PEOPLE: met()})
        result = OfflineStrategy(BagOfWords()).execute(
            OfflineChatProvider(),
            [PromptMessage.system("s"), *head, PromptMessage.user("how far have I read?")],
            tools, runner,
        )  # fmt: skip
        return result, runner

    turn = [*searched(asked, asked)[:-1], PromptMessage.assistant(answered)]
    result, runner = where_am_i(*turn)
    assert result.answer == (
        f"Your reading position: {WHERE}.\n"
        f"Your last question (“{asked}”) was answered from Chapter 3, p. 21."
    )
    assert [c.tool_name for c in runner.calls] == [LIST_CHAPTERS] and not result.queries
    thanks = [PromptMessage.user("thanks"), PromptMessage.assistant("You're welcome!")]
    result, runner = where_am_i(*turn, *thanks)  # small talk between: the same place
    assert result.answer.endswith("was answered from Chapter 3, p. 21.") and not result.queries
    result, _ = where_am_i(PromptMessage.user(asked), *thanks)  # its answer left the window
    told = f"The passage closest to your last question about the book (“{asked}”)"
    assert result.answer.endswith(f"\n{told}: Chapter 3, p. 21.")
    assert result.queries == (asked,)
    first, alone = where_am_i()
    assert first.answer == f"Your reading position: {WHERE}." and not first.queries
    assert [c.tool_name for c in alone.calls] == [LIST_CHAPTERS]
    nothing = [*searched(asked, asked)[:-1], PromptMessage.assistant("Nothing up to ... .")]
    assert where_am_i(*nothing)[0].answer == f"Your reading position: {WHERE}."
    for said_nothing in ("How does the story end?", "Who is Ishmael?"):  # later; not met
        for between in ((), thanks):
            after, _ = where_am_i(*searched(said_nothing, said_nothing), *between)
            assert after.answer == f"Your reading position: {WHERE}.", said_nothing


class PeopleByName(Runner):
    """A runner whose people lookups answer by the name asked for."""

    def __init__(self, people: dict[str, Person], **outcomes: ToolOutcome) -> None:
        super().__init__(**{SEARCH_BOOK: found(), PEOPLE: met(), **outcomes})
        self.people = people

    def __call__(self, invocation: ToolInvocation) -> PromptMessage:
        if invocation.tool_name == PEOPLE:
            person = self.people.get(invocation.arguments.get("name", ""))
            self.outcomes[PEOPLE] = met(person) if person else met(note="none")
        return super().__call__(invocation)


def test_how_two_people_met_leads_with_the_introduction_of_the_one_met_later() -> None:
    """ "How did Victor meet Clerval?": they meet where Clerval comes in, so his introduction
    leads, not Victor's (the first named). Asked about Victor in a place, or about Victor alone,
    the introduction is Victor's."""
    victor = Person("Victor", 40, passage("Victor was born at Geneva, of a good family.", page="1"))
    henry = passage("Henry Clerval was the son of a merchant of Geneva.", page="21")
    clerval = Person("Clerval", 20, replace(henry, char_start=900, char_end=950))
    geneva = Person("Geneva", 9, passage("Geneva lies on a lake.", page="2"), place=True)
    people = {"Victor": victor, "Clerval": clerval, "Geneva": geneva}
    messages = [PromptMessage.system("s")]
    for question, lead in [
        ("How did Victor meet Clerval?", "Henry Clerval was the son"),
        ("How did Clerval meet Victor?", "Henry Clerval was the son"),
        ("Tell me about Victor in Geneva", "Victor was born at Geneva"),
    ]:
        result = OfflineStrategy(BagOfWords()).execute(
            OfflineChatProvider(), [*messages, PromptMessage.user(question)], TOOLS,
            PeopleByName(people),
        )  # fmt: skip
        quoted = [line for line in result.answer.splitlines() if line.startswith("- ")]
        assert quoted and quoted[0].startswith(f'- "{lead}'), (question, result.answer)


def test_of_two_people_the_one_met_later_is_compared_within_one_book() -> None:
    def first(start: int, volume: str | None = None, book: str = "b2") -> Passage:
        return replace(passage("x"), char_start=start, volume=volume, book_id=book)

    early, late = Person("A", 1, first(10)), Person("B", 1, first(500))
    assert met_later([late, early]) is late
    assert met_later([early, Person("P", 1, first(900), place=True)]) is None  # a place
    before = Person("C", 1, first(9_000, volume="Volume 1", book="b1"))
    assert met_later([before, early]) is early  # this book after an earlier volume
    other = Person("D", 1, first(5, volume="Volume 0", book="b0"))
    assert met_later([before, other]) is None  # two earlier volumes: not told apart


def test_what_came_next_leads_with_the_sentence_after_the_last_answers_first_quote(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kind is the embedder's (``MessageKinds.asks_next``, tested on the real one): here it
    is set, so that the calls are what is tested."""
    monkeypatch.setattr(MessageKinds, "asks_next", lambda self, message: True)
    scene = Passage(
        "c7", "Chapter 2", "12", "12", 0, 200,
        "He carried her into the cottage. His name was Willoughby, he said. "
        "The honour was readily granted, and he then departed into the heavy rain.",
    )  # fmt: skip
    said = compose(
        best_quotes(BagOfWords(), "his name", [passage("His name was Willoughby, he said.")]),
        "up to Chapter 5",
    )
    tools = [*TOOLS, ToolDefinition(READ_PASSAGE, READ_PASSAGE, {"type": "object"})]
    outcomes = {
        SEARCH_BOOK: found(scene),
        PEOPLE: met(),
        READ_PASSAGE: ToolOutcome(True, payload=PassageText(scene, WHERE)),
    }
    earlier = [PromptMessage.user("How did they meet?"), PromptMessage.assistant(said)]
    for between in (
        [],
        [PromptMessage.user("ok thanks"), PromptMessage.assistant("You're welcome!")],
    ):
        runner = Runner(**outcomes)
        result = OfflineStrategy(BagOfWords()).execute(
            OfflineChatProvider(),
            [*earlier, *between, PromptMessage.user("What did he do then?")],
            tools,
            runner,
        )
        assert listed_quotes(result.answer)[0].startswith("The honour was readily granted")
        searched = [c.arguments["query"] for c in runner.calls if c.tool_name == SEARCH_BOOK]
        assert '"his name was willoughby he said"' in searched
        # the question's own search is the turn's last call of it (``subject_start``)
        stored = [
            i.arguments["query"]
            for m in result.new_messages
            for i in m.tool_invocations
            if i.tool_name == SEARCH_BOOK
        ]
        assert stored[-1].startswith("What did he do then?")
    withheld = [PromptMessage.user("How did they meet?"), PromptMessage.assistant(WITHHELD_ANSWER)]
    runner = Runner(**outcomes)
    OfflineStrategy(BagOfWords()).execute(
        OfflineChatProvider(),
        [*withheld, PromptMessage.user("What did he do then?")],
        tools,
        runner,
    )
    assert [c.tool_name for c in runner.calls].count(READ_PASSAGE) == 0  # nothing to follow


def test_a_question_about_the_narrator_is_read_as_they_tell_it() -> None:
    """Someone who tells the story (``Person.narrates``: the narration's "I", named only in
    others' speech) is asked about in the first person, then as asked: their own sentences say
    "I" and "my", the ones naming them address them ("Come, Victor;")."""
    victor = Person("Victor", 3, passage("“My dear Victor,” cried he."), narrates=True)
    died = passage("On the third day my mother sickened, and she died calmly.", page="26")
    called = passage("“Come, Victor; you alone can console Elizabeth.”", page="55")
    question = "How did Victor's mother die?"
    mine = "How did my mother die? How did Victor's mother die?"
    runner = Searches({question: found(called), mine: found(died)}, **{PEOPLE: met(victor)})
    result = OfflineStrategy(BagOfWords()).execute(
        OfflineChatProvider(), [PromptMessage.user(question)], TOOLS, runner
    )
    queries = [c.arguments["query"] for c in runner.calls if c.tool_name == SEARCH_BOOK]
    assert queries == [mine]  # looked up first: one search, as he would tell it, then as asked
    assert "my mother sickened" in result.answer and "Come, Victor" not in result.answer
    lower = "how did victor's mother die?"  # the name found by the passages' capitals
    named = [passage("The fever took Victor's mother.", page="25"), died]
    runner = Searches({lower: found(*named)}, **{PEOPLE: met(victor)})
    result = OfflineStrategy(BagOfWords()).execute(
        OfflineChatProvider(), [PromptMessage.user(lower)], TOOLS, runner
    )
    queries = [c.arguments["query"] for c in runner.calls if c.tool_name == SEARCH_BOOK]
    assert queries == [lower, "how did my mother die? how did Victor's mother die?"]
    assert not result.answer.startswith("Victor narrates")
    who, _ = ask("Who is Victor?", **{SEARCH_BOOK: found(died), PEOPLE: met(victor)})
    assert who.answer.startswith(
        "Victor narrates the story you have read: the “I” of its narration."
    )
    other = replace(victor, narrates=False)  # someone else: asked about as the book names them
    runner = Searches({question: found(called), mine: found(died)}, **{PEOPLE: met(other)})
    OfflineStrategy(BagOfWords()).execute(
        OfflineChatProvider(), [PromptMessage.user(question)], TOOLS, runner
    )
    assert [c.arguments["query"] for c in runner.calls if c.tool_name == SEARCH_BOOK] == [question]


def test_a_narrators_names_are_told_in_the_first_person() -> None:
    victor = Person("Victor", 3, passage("x"), aliases=("Victor Frankenstein",), narrates=True)
    assert told_by("What does Victor Frankenstein create?", "Victor Frankenstein", victor) == (
        "What does I create?"
    )
    assert told_by("Why did Victor’s father move?", "Victor", victor) == ("Why did my father move?")
    assert told_by("Who is Victor?", "Victor", victor) is None  # nothing else asked of him
    lockwood = Person("Mr Lockwood", 9, passage("x"), aliases=("Lockwood",), narrates=True)
    assert told_by("What does Mr. Lockwood think of the house?", "Mr Lockwood", lockwood) == (
        "What does I think of the house?"
    )
    assert told_by("Where is Victory Lane?", "Victor", victor) is None  # another word


def test_asked_who_narrates_the_people_met_answer_else_the_book_is_searched() -> None:
    opening = passage("I am by birth a Genevese.", chapter="Chapter 1", page="16")
    victor = Person(
        "Victor", 3, passage("“My dear Victor,” cried he."), told=opening, narrates=True
    )
    result, runner = ask("who tells the story?", **{PEOPLE: met(victor)})
    assert result.answer.startswith("Victor narrates the story you have read")
    assert "I am by birth a Genevese." in result.answer
    assert [c.tool_name for c in runner.calls] == [PEOPLE, PEOPLE]  # the list, then Victor
    told = passage("The story is told of Elizabeth.")
    other = Person("Elizabeth", 30, told)  # no one met narrates...
    result, runner = ask("who tells the story?", **{PEOPLE: met(other), SEARCH_BOOK: found(told)})
    assert [c.tool_name for c in runner.calls] == [PEOPLE, SEARCH_BOOK]  # ...searched
    assert "narrates" not in result.answer
    third = ToolOutcome(True, payload=PeopleList((other,), WHERE, first_person=0.002))
    result, runner = ask("who tells the story?", **{PEOPLE: third, SEARCH_BOOK: found(told)})
    assert result.answer.startswith("No one in the story you have read tells it: it is told in")
    assert "The story is told of Elizabeth." in result.answer  # then the book's answer
    assert [c.tool_name for c in runner.calls] == [PEOPLE, SEARCH_BOOK]
    first = ToolOutcome(True, payload=PeopleList((other,), WHERE, first_person=0.05))
    _, runner = ask("who tells the story?", **{PEOPLE: first, SEARCH_BOOK: found(told)})
    assert [c.tool_name for c in runner.calls] == [PEOPLE, SEARCH_BOOK]  # an "I" not named


def test_the_whole_book_open_the_answer_says_from_the_book_once() -> None:
    """No position set: "From the book:", not "From the book, in the book:"; where the answer
    quoted first is still read from it."""
    scene = passage("Captain Vane took the sextant.", chapter="Chapter 3", page="21")
    whole = compose(best_quotes(BagOfWords(), "sextant", [scene]), "in the book")
    assert whole.startswith("From the book:\n- ")
    assert lead_location(whole) == "Chapter 3, p. 21"
    part = compose(best_quotes(BagOfWords(), "sextant", [scene]), "up to Chapter 5")
    assert part.startswith("From the book, up to Chapter 5:\n") and lead_location(part) == (
        "Chapter 3, p. 21"
    )


def test_who_is_leads_with_where_the_story_says_who_they_are() -> None:
    """ "Who is Sir John?": the sentence he is first met in only names him ("She instantly wrote
    Sir John Middleton her thanks."); the story says who he is later (``Person.described``),
    and that leads. An introduction that says who they are itself stays first."""
    first = passage("She instantly wrote Sir John Middleton her thanks.", "Chapter 4", "20")
    said = passage("Sir John Middleton was a good looking man about forty.", "Chapter 6", "25")
    john = Person("Sir John", 12, first, aliases=("Sir John Middleton",), described=said)
    result, _ = ask("Who is Sir John?", **{PEOPLE: met(john), SEARCH_BOOK: found(first)})
    assert listed_quotes(result.answer)[0] == said.text
    assert "(Chapter 6, p. 25)" in result.answer.splitlines()[1]
    cousin = passage("Then Sir John Middleton, a cousin of theirs, called on them.", page="20")
    cousins = {PEOPLE: met(replace(john, first=cousin)), SEARCH_BOOK: found(cousin)}
    result, _ = ask("Who is Sir John?", **cousins)
    assert listed_quotes(result.answer)[0] == cousin.text


def test_a_long_sentence_is_quoted_where_it_speaks_of_what_was_asked() -> None:
    """A sentence over ``MAX_QUOTE_WORDS`` is quoted at its words that hold the question's, with
    "…" where it is cut on either side; the quote is still found in its passage (its citation)
    and read back as the line's quote."""
    filler = " ".join(f"word{i}" for i in range(80))
    sentence = f"The lighthouse began with {filler}, and at last the keeper lit the great lamp."
    scene = passage(sentence)
    [quote] = best_quotes(BagOfWords(), "Who lit the great lamp of the lighthouse?", [scene])
    assert quote.late and not quote.cut and quote.sentence.endswith("lit the great lamp.")
    assert len(quote.sentence.split()) == MAX_QUOTE_WORDS
    assert scene.span_of(quote.sentence) is not None
    answer = compose([quote], "up to Chapter 5")
    line = answer.splitlines()[1]
    assert line.startswith('- … "') and listed_quotes(answer) == [quote.sentence]
    [head] = best_quotes(BagOfWords(), "How did the lighthouse begin?", [scene])
    assert head.cut and not head.late and head.sentence.startswith("The lighthouse began with")


def test_asked_how_two_met_the_answer_is_where_they_met_not_who_one_is() -> None:
    """ "How did Marianne meet Willoughby?": the sentence Willoughby is first met in (the
    meeting) leads, not the later one saying who he is (``Person.described``)."""
    met_in = passage("His name, he replied, was Willoughby, and he carried Marianne home.",
                     "Chapter 9", "35")  # fmt: skip
    said = passage("Willoughby was a young man of good abilities.", "Chapter 10", "39")
    willoughby = Person("Willoughby", 30, met_in, described=said)
    people = {PEOPLE: met(willoughby), SEARCH_BOOK: found(met_in, said)}
    kinds = MessageKinds(BagOfWords(), asked_names)
    assert kinds.asks_meeting("How did Marianne meet Willoughby?")
    result, _ = ask("How did Marianne meet Willoughby?", **people)
    assert listed_quotes(result.answer)[0] == met_in.text
