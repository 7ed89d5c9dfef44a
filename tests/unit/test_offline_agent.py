"""The offline agent (``ExtractiveStrategy``): one search a turn through the tool runner, answers
extracted from the typed passages it returned, never a model call."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from folio.adapters.llm.offline import OfflineChatProvider
from folio.agent.offline.extractive import OFFLINE_NOTE, ExtractiveStrategy
from folio.agent.offline.rewriter import HeuristicQueryRewriter
from folio.domain.errors import LLMError, LLMErrorCode
from folio.domain.llm import PromptMessage, ToolDefinition, ToolInvocation
from folio.domain.passages import Passage, SearchResults, ToolOutcome

TOOLS = [ToolDefinition("search_book", "Search the book", {"type": "object"})]
CLERVAL_TEXT = (
    "Clerval was the son of a merchant of Geneva. He was a boy of singular talent and fancy. "
    "The weather was fine that morning."
)
DEATH_TEXT = (
    "I saw the lifeless form of Henry Clerval stretched before me. The murderer had strangled "
    "Clerval on the shore. The magistrate looked at me with pity."
)


def passage(text: str, chapter: str | None, pages: str) -> Passage:
    first, _, last = pages.partition("-")
    return Passage(f"c{pages}", chapter, first, last or first, 0, len(text), text)


class Runner:
    """A tool runner returning canned outcomes and remembering the calls."""

    def __init__(self, outcome: ToolOutcome) -> None:
        self.outcome = outcome
        self.calls: list[ToolInvocation] = []

    def __call__(self, invocation: ToolInvocation) -> PromptMessage:
        self.calls.append(invocation)
        return PromptMessage.tool_result(
            invocation.tool_use_id,
            self.outcome.to_json(),
            is_error=not self.outcome.success,
            tool_name=invocation.tool_name,
            outcome=self.outcome,
        )


def found(*passages: Passage, query: str = "q") -> ToolOutcome:
    return ToolOutcome(True, payload=SearchResults(query, "page 90", tuple(passages)))


def strategy() -> ExtractiveStrategy:
    rewriter = HeuristicQueryRewriter()
    return ExtractiveStrategy(rewriter, search_query=rewriter.query_with_history)


def first_turn() -> list[PromptMessage]:
    call = ToolInvocation("search_book", "t1", {"query": "Victor's friend from Geneva", "k": 5})
    return [
        PromptMessage.system("You are a reading companion."),
        PromptMessage.user("Who is Victor's friend from Geneva?"),
        PromptMessage.assistant("", (call,)),
        PromptMessage.tool_result("t1", found(passage(CLERVAL_TEXT, "Chapter 2", "12")).to_json()),
        PromptMessage.assistant(
            'From the book:\n- "Clerval was the son of a merchant of Geneva."\n\n' + OFFLINE_NOTE
        ),
    ]


def run(messages: Sequence[PromptMessage], outcome: ToolOutcome, tools=TOOLS) -> tuple[str, Runner]:
    runner = Runner(outcome)
    result = strategy().execute(OfflineChatProvider(), messages, tools, runner)
    assert result.llm_calls == 0 and result.usage.input_tokens > 0  # an estimate: no model
    assert result.new_messages[-1].content == result.answer
    return result.answer, runner


def test_a_question_is_searched_once_with_k_and_its_own_words() -> None:
    _, runner = run([PromptMessage.user("Who is Victor's friend from Geneva?")], found())
    assert [c.tool_name for c in runner.calls] == ["search_book"]
    assert runner.calls[0].arguments["k"] == 5
    assert "Geneva" in runner.calls[0].arguments["query"]


def test_a_follow_up_is_searched_with_the_name_it_refers_to() -> None:
    _, runner = run([*first_turn(), PromptMessage.user("What happens to him?")], found())
    query = runner.calls[0].arguments["query"]
    assert "Clerval" in query
    assert "him" not in query.split()


def test_it_quotes_the_best_sentences_of_the_typed_passages_with_their_pages() -> None:
    outcome = found(passage(DEATH_TEXT, "Chapter 21", "88-89"), passage(CLERVAL_TEXT, None, "12"))
    text, _ = run([*first_turn(), PromptMessage.user("What happens to him?")], outcome)
    assert (
        '"I saw the lifeless form of Henry Clerval stretched before me." (Chapter 21, pp. 88-89)'
        in text
    )
    assert "The weather was fine" not in text
    assert OFFLINE_NOTE in text
    assert 2 <= text.count("\n- ") + text.startswith("- ") <= 4


def test_the_chapter_s_heading_lines_are_never_quoted() -> None:
    """A passage that opens a chapter holds its heading; "CHAPTER 26." answers nothing, and a
    name in a title ("The Giant of the North") would become the next turn's "he"."""
    title = "Chapter 26. The Giant of the North (R M Ballantyne), Chapter Twenty"
    text = (
        "CHAPTER 26.\n\nThe Giant of the North (R M Ballantyne), Chapter Twenty\n\n"
        '"He must be very near nothing now," observed Chingatok to Anders the day after.'
    )
    outcome = found(passage(text, title, "23"), passage(DEATH_TEXT, "Chapter 21", "88"))
    answer, _ = run([PromptMessage.user("Who is Chingatok talking to?")], outcome)
    quotes = [line for line in answer.splitlines() if line.startswith("- ")]
    assert quotes and any("observed Chingatok to Anders" in q for q in quotes)
    assert not any(q.startswith(('- "CHAPTER 26', '- "The Giant')) for q in quotes)


def test_a_failed_search_is_said_and_not_retried() -> None:
    failure = ToolOutcome(False, error="bad query", error_code="INVALID_ARGUMENTS")
    text, runner = run([PromptMessage.user("Who is Justine?")], failure)
    assert len(runner.calls) == 1
    assert "bad query" in text


def test_no_results_says_nothing_was_found_before_the_reading_position() -> None:
    text, _ = run([PromptMessage.user("Who is Justine?")], found())
    assert "found nothing" in text and "page 90" in text


@pytest.mark.parametrize("message", ["cool, thanks!", "Thanks!", "thank you so much"])
def test_small_talk_gets_a_friendly_reply_and_no_search(message: str) -> None:
    text, runner = run([*first_turn(), PromptMessage.user(message)], found())
    assert runner.calls == []
    assert "welcome" in text.lower()


def test_without_the_search_tool_it_says_honestly_that_it_cannot_answer() -> None:
    text, runner = run([PromptMessage.user("Who is Justine?")], found(), tools=[])
    assert runner.calls == []
    assert "offline" in text.lower() and "cannot answer" in text


def test_the_answer_streams_in_pieces_that_make_the_whole() -> None:
    pieces: list[str] = []
    result = strategy().execute(
        OfflineChatProvider(),
        [PromptMessage.user("thanks")],
        TOOLS,
        Runner(found()),
        on_text=pieces.append,
    )
    assert "".join(pieces) == result.answer and len(pieces) > 2


def test_a_who_question_is_answered_with_sentences_naming_the_person_the_passages_share() -> None:
    outcome = found(
        passage(
            "Victor's friend came to see me on that day. I knew that Clerval would smile at me. "
            "The sky was grey over the town.",
            None,
            "3",
        ),
        passage(
            "Henry Clerval was the son of a merchant. A friend is a blessing to a man. "
            "Then I saw Clerval again.",
            None,
            "4",
        ),
    )
    text, _ = run([PromptMessage.user("Who is Victor's friend?")], outcome)
    assert '"I knew that Clerval would smile at me." (p. 3)' in text


def test_the_offline_provider_has_no_model_and_says_so() -> None:
    p = OfflineChatProvider()
    assert (p.provider_name, p.model_name, p.supports_tools) == ("offline", "extractive", False)
    with pytest.raises(LLMError) as e:
        p.chat([PromptMessage.user("hi")])
    assert e.value.code == LLMErrorCode.UNSUPPORTED_FEATURE


def test_a_name_no_passage_mentions_gets_an_honest_not_yet() -> None:
    """Nothing up to the position mentions the name: say so, quote nothing unrelated."""
    outcome = found(passage("Victor walked along the lake with Elizabeth.", "Chapter 2", "9"))
    text, _ = run([PromptMessage.user("Who is Justine?")], outcome)
    assert text.startswith("Nothing up to page 90 mentions Justine; it may come later in the book.")
    assert "lake" not in text


def test_a_weak_match_is_hedged_before_its_quotes() -> None:
    outcome = found(
        passage("William was a lively child. William laughed in the garden.", None, "4")
    )
    text, _ = run([PromptMessage.user("Who killed William?")], outcome)
    assert text.startswith("These passages mention William but nothing up to page 90 clearly")
    assert "The closest passages:" in text and "William was a lively child." in text


def test_a_question_without_names_is_hedged_when_no_passage_has_what_it_asks() -> None:
    outcome = found(passage("Victor walked along the lake with Elizabeth.", "Chapter 2", "9"))
    text, _ = run([PromptMessage.user("Who is murdered?")], outcome)
    assert text.startswith(
        "Nothing up to page 90 clearly answers the question; it may come later in the book."
    )
    assert "The closest passages:" in text
    answered = found(passage("The boy was murdered by the lake.", "Chapter 2", "9"))
    text, _ = run([PromptMessage.user("Who is murdered?")], answered)
    assert text.startswith("From the book:")


def test_an_answering_passage_is_quoted_without_a_hedge() -> None:
    outcome = found(passage("William was killed near the lake at dusk.", None, "4"))
    text, _ = run([PromptMessage.user("Who killed William?")], outcome)
    assert text.startswith("From the book:") and "killed near the lake" in text


def test_a_self_contained_question_deep_in_a_conversation_is_searched_as_itself() -> None:
    outcome = found(passage("Victor walked along the lake with Elizabeth.", "Chapter 2", "9"))
    text, runner = run([*first_turn(), PromptMessage.user("Who is Justine?")], outcome)
    assert [c.arguments["query"] for c in runner.calls] == ["Who is Justine?"]
    assert text.startswith("Nothing up to page 90 mentions Justine")


def test_before_saying_not_yet_a_follow_up_is_searched_alone() -> None:
    """The earlier questions a follow-up borrows may pull a search away from the name it asks
    about: the "not yet" is only said after the question alone was searched too."""
    outcome = found(passage("Victor walked along the lake with Elizabeth.", "Chapter 2", "9"))
    text, runner = run([*first_turn(), PromptMessage.user("And Justine?")], outcome)
    queries = [c.arguments["query"] for c in runner.calls]
    assert len(queries) == 2 and queries[0] != "And Justine?" and queries[1] == "And Justine?"
    assert text.startswith("Nothing up to page 90 mentions Justine")


class QueueRunner(Runner):
    """Returns the given outcomes in turn (the last one again when they run out)."""

    def __init__(self, *outcomes: ToolOutcome) -> None:
        super().__init__(outcomes[0])
        self.queue = list(outcomes)

    def __call__(self, invocation: ToolInvocation) -> PromptMessage:
        self.outcome = self.queue.pop(0) if len(self.queue) > 1 else self.queue[0]
        return super().__call__(invocation)


def test_who_is_opens_with_the_sentence_that_says_who_found_by_searching_the_name() -> None:
    arrival = passage("I perceived Henry Clerval, who instantly sprung out.", "Chapter 5", "42")
    intro = passage(
        "Henry Clerval was the son of a merchant of Geneva. He was a boy of talent.",
        "Chapter 2",
        "21",
    )
    runner = QueueRunner(found(arrival), found(intro, arrival))
    result = strategy().execute(
        OfflineChatProvider(), [PromptMessage.user("Who is Henry Clerval?")], TOOLS, runner
    )
    assert [c.arguments["query"] for c in runner.calls] == [
        "Who is Henry Clerval?",
        "Henry Clerval",
    ]
    first, _, rest = result.answer.partition("\n")
    assert first == "Henry Clerval was the son of a merchant of Geneva. (Chapter 2, p. 21)"
    assert "sprung out" in rest and rest.count("son of a merchant") == 0


def test_who_is_with_its_definition_in_the_first_passages_searches_once() -> None:
    intro = passage("Henry Clerval was the son of a merchant of Geneva.", "Chapter 2", "21")
    text, runner = run([PromptMessage.user("Who is Henry Clerval?")], found(intro))
    assert len(runner.calls) == 1 and text.startswith("Henry Clerval was the son of")
