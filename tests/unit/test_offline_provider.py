"""The offline provider plays the model in the tool loop: one search a turn, extractive answers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from folio.adapters.llm.offline import OFFLINE_NOTE, OfflineChatProvider
from folio.agent.followup import is_small_talk
from folio.agent.prompt_builder import PromptBuilder
from folio.agent.reformulation import HeuristicQueryRewriter
from folio.domain.llm import PromptMessage, StreamEventKind, ToolDefinition, ToolInvocation

TOOLS = [ToolDefinition("search_book", "Search the book", {"type": "object"})]
CLERVAL_TEXT = (
    "Clerval was the son of a merchant of Geneva. He was a boy of singular talent and fancy. "
    "The weather was fine that morning."
)
DEATH_TEXT = (
    "I saw the lifeless form of Henry Clerval stretched before me. The murderer had strangled "
    "Clerval on the shore. The magistrate looked at me with pity."
)


def provider() -> OfflineChatProvider:
    rewriter = HeuristicQueryRewriter()
    return OfflineChatProvider(rewriter, is_small_talk, search_query=rewriter.search_query)


def result(call: ToolInvocation, *passages: dict[str, Any]) -> PromptMessage:
    data = {"query": call.arguments["query"], "reading_limit": "page 90", "results": list(passages)}
    return PromptMessage.tool_result(call.tool_use_id, json.dumps({"success": True, "data": data}))


def passage(text: str, chapter: str | None, pages: str) -> dict[str, Any]:
    return {"chunk_id": f"c{pages}", "chapter": chapter, "pages": pages, "text": text}


def first_turn() -> list[PromptMessage]:
    call = ToolInvocation("search_book", "t1", {"query": "Victor's friend from Geneva", "k": 5})
    return [
        PromptMessage.system("You are a reading companion."),
        PromptMessage.user("Who is Victor's friend from Geneva?"),
        PromptMessage.assistant("", (call,)),
        result(call, passage(CLERVAL_TEXT, "Chapter 2", "12")),
        PromptMessage.assistant('From the book:\n- "Clerval was the son of a merchant of Geneva."'),
    ]


def test_a_question_gets_exactly_one_search_call_and_no_text() -> None:
    response = provider().chat_with_tools(
        [PromptMessage.system("s"), PromptMessage.user("Who is Victor's friend from Geneva?")],
        TOOLS,
    )
    assert response.text is None
    assert [c.tool_name for c in response.tool_invocations] == ["search_book"]
    assert response.tool_invocations[0].arguments["k"] == 5
    assert "Geneva" in response.tool_invocations[0].arguments["query"]


def test_a_follow_up_is_searched_with_the_name_it_refers_to() -> None:
    messages = [*first_turn(), PromptMessage.user("What happens to him?")]
    response = provider().chat_with_tools(messages, TOOLS)
    query = response.tool_invocations[0].arguments["query"]
    assert "Clerval" in query
    assert "him" not in query.split()


def test_with_the_turns_results_it_quotes_the_best_sentences_with_their_pages() -> None:
    messages = [*first_turn(), PromptMessage.user("What happens to him?")]
    call = provider().chat_with_tools(messages, TOOLS).tool_invocations[0]
    messages += [
        PromptMessage.assistant("", (call,)),
        result(call, passage(DEATH_TEXT, "Chapter 21", "88-89"), passage(CLERVAL_TEXT, None, "12")),
    ]
    response = provider().chat_with_tools(messages, TOOLS)
    assert response.tool_invocations == ()
    text = response.text or ""
    assert (
        '"I saw the lifeless form of Henry Clerval stretched before me." (Chapter 21, pp. 88-89)'
        in text
    )
    assert "The weather was fine" not in text
    assert OFFLINE_NOTE in text
    assert 2 <= text.count("\n- ") + text.startswith("- ") <= 4


def test_it_never_calls_a_tool_twice_in_a_turn_even_when_the_search_failed() -> None:
    call = ToolInvocation("search_book", "t9", {"query": "x"})
    failure = json.dumps(
        {"success": False, "error": "bad query", "error_code": "INVALID_ARGUMENTS"}
    )
    messages = [
        PromptMessage.user("Who is Justine?"),
        PromptMessage.assistant("", (call,)),
        PromptMessage.tool_result("t9", failure, is_error=True),
    ]
    response = provider().chat_with_tools(messages, TOOLS)
    assert response.tool_invocations == ()
    assert "bad query" in (response.text or "")


def test_no_results_says_nothing_was_found_before_the_reading_position() -> None:
    messages = [PromptMessage.user("Who is Justine?")]
    call = provider().chat_with_tools(messages, TOOLS).tool_invocations[0]
    messages += [PromptMessage.assistant("", (call,)), result(call)]
    text = provider().chat_with_tools(messages, TOOLS).text or ""
    assert "found nothing" in text and "page 90" in text


def test_small_talk_gets_a_friendly_reply_and_no_search() -> None:
    messages = [*first_turn(), PromptMessage.user("cool, thanks!")]
    response = provider().chat_with_tools(messages, TOOLS)
    assert response.tool_invocations == ()
    assert "welcome" in (response.text or "").lower()


def test_chat_without_tools_answers_from_the_passages_block_of_the_prompt() -> None:
    passages = [passage(DEATH_TEXT, "Chapter 21", "88"), passage(CLERVAL_TEXT, "Chapter 2", "12")]
    prompt = PromptBuilder().with_passages(passages).with_question("What happens to Clerval?")
    messages = [PromptMessage.system("s"), PromptMessage.user(prompt.with_note("Cite.").build())]
    text = provider().chat(messages).text or ""
    assert "(Chapter 21, p. 88)" in text
    assert "Henry Clerval stretched before me" in text
    assert "Cite." not in text


def test_chat_without_passages_says_honestly_that_it_cannot_answer() -> None:
    text = provider().chat([PromptMessage.user("Who is Justine?")]).text or ""
    assert "offline" in text.lower() and "cannot answer" in text


def test_streaming_yields_the_answer_in_deltas_then_done() -> None:
    events = list(provider().stream_chat_with_tools([PromptMessage.user("thanks")], TOOLS))
    assert events[-1].kind is StreamEventKind.DONE
    deltas = "".join(e.text for e in events if e.kind is StreamEventKind.TEXT_DELTA)
    assert events[-1].response is not None and deltas == events[-1].response.text
    assert len(events) > 2


def test_identity_and_usage_estimate() -> None:
    p = provider()
    assert (p.provider_name, p.model_name, p.supports_tools) == ("offline", "extractive", True)
    messages: Sequence[PromptMessage] = [PromptMessage.user("x" * 400)]
    usage = p.chat_with_tools(messages, TOOLS).usage
    assert usage.input_tokens == 100 and usage.output_tokens > 0


def test_a_who_question_is_answered_with_sentences_naming_the_person_the_passages_share() -> None:
    passages = [
        passage(
            "My friend came to see me on that day. I knew that Clerval would smile at me. "
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
    ]
    call = ToolInvocation("search_book", "w1", {"query": "friend"})
    messages = [
        PromptMessage.user("Who is Victor's friend?"),
        PromptMessage.assistant("", (call,)),
        result(call, *passages),
    ]
    text = provider().chat_with_tools(messages, TOOLS).text or ""
    assert '"I knew that Clerval would smile at me." (p. 3)' in text


def test_history_of_a_plain_transcript_ignores_tool_lines() -> None:
    messages = [
        PromptMessage.user("Who is Victor's friend?\n\n[Tool result]\n{}"),
        PromptMessage.assistant(
            '[called search_book {"query": "x"}]\nHenry Clerval is his friend.'
        ),
        PromptMessage.user("What happens to him?"),
    ]
    call = provider().chat_with_tools(messages, TOOLS).tool_invocations[0]
    assert "Henry Clerval" in call.arguments["query"]
    assert "Tool result" not in call.arguments["query"]
