"""The model's query rewriting, for providers without tool use: one call in a conversation, none
for an opening question, and no rule guessing a pronoun when the model fails."""

from __future__ import annotations

from folio.adapters.llm.scripted import ScriptedChatProvider
from folio.agent.reformulation import LLMQueryRewriter, build_reformulation_prompt, with_earlier
from folio.domain.errors import LLMError, LLMErrorCode

CLERVAL = [
    ("Who is Victor's friend from Geneva?", "Henry Clerval, the son of a merchant of Geneva."),
    ("Where did they study?", "At Ingolstadt."),
]


def test_the_llm_rewriter_returns_the_models_single_line_without_a_label() -> None:
    provider = ScriptedChatProvider(['Rewritten: "What happens to Henry Clerval?"\n'])
    rewritten = LLMQueryRewriter(provider).rewrite("What happens to him?", CLERVAL)
    assert rewritten == "What happens to Henry Clerval?"
    prompt = provider.calls[0].messages[-1].content
    assert "User: Who is Victor's friend from Geneva?" in prompt
    assert "Latest message: What happens to him?" in prompt


def test_when_the_model_fails_the_query_is_the_question_then_earlier_questions_latest_first() -> (
    None
):
    provider = ScriptedChatProvider([LLMError("down", code=LLMErrorCode.UNAVAILABLE)])
    rewritten = LLMQueryRewriter(provider).rewrite("What happens to him?", CLERVAL)
    assert rewritten == (
        "What happens to him? Where did they study? Who is Victor's friend from Geneva?"
    )
    assert rewritten == with_earlier("What happens to him?", CLERVAL)


def test_the_llm_rewriter_makes_no_call_without_history() -> None:
    provider = ScriptedChatProvider([])
    assert LLMQueryRewriter(provider).rewrite("Who is Justine?", []) == "Who is Justine?"
    assert provider.calls == []


def test_the_prompt_template_is_filled_and_keeps_its_examples() -> None:
    prompt = build_reformulation_prompt("Why?", [("Was she relieved?", None)])
    assert "{history}" not in prompt and "{question}" not in prompt
    assert "Rewritten: What happens to Henry Clerval?" in prompt
    assert prompt.rstrip().endswith("Latest message: Why?\nRewritten:")
