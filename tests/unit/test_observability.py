"""What a turn leaves for an operator: the Prometheus telemetry's metrics (read back through the
Prometheus text parser), the structured log lines of turns, tool and model calls (no message
text), the request/turn context on log lines, and the model-call wrapper's outcomes."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from folio.adapters.llm.observed import ObservedChatProvider
from folio.adapters.llm.scripted import ScriptedChatProvider, tool_call
from folio.adapters.observability import context
from folio.adapters.observability.logs import ContextFilter, json_formatter, text_formatter
from folio.adapters.observability.metrics import PrometheusTelemetry
from folio.agent.guardrail import Guardrail
from folio.agent.tools import ToolContext, ToolRegistry, ToolServices, book_tools
from folio.app.cancellation import TurnCancelled
from folio.app.chat import ChatEvent, ChatWithBook
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.errors import LLMError, LLMErrorCode
from folio.domain.llm import PromptMessage, StreamEventKind, ToolInvocation
from folio.domain.telemetry import TurnScope
from folio.entrypoints.api.request_id import request_id_of
from tests.unit.test_chat import ANSWER_1, World
from tests.unit.test_guardrail import WithoutSimilarity

QUESTION = "Who taught Victor, asks the reader about quokka-lanterns?"
SEARCH = {"query": "Victor Frankenstein studies Ingolstadt"}


def samples(telemetry: PrometheusTelemetry) -> dict[tuple[str, frozenset[Any]], float]:
    """Every sample of the exposition, by name and labels, as the Prometheus parser reads it."""
    body, _ = telemetry.render()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(body.decode())
        for s in family.samples
    }


def value(telemetry: PrometheusTelemetry, name: str, **labels: str) -> float:
    return samples(telemetry).get((name, frozenset(labels.items())), 0.0)


def chat_on(
    world: World,
    provider: ScriptedChatProvider,
    telemetry: PrometheusTelemetry,
    guardrail: Guardrail | None = None,
    **settings: Any,
) -> ChatWithBook:
    container = Container(
        load_settings(env={}, guardrail="none", **settings),
        provider=provider,
        uow=world.store.unit_of_work,
        library=world.story.library,
        searcher=world.story.searcher,
        clock=world.clock,
        guardrail=guardrail,
        telemetry=telemetry,
    )
    return container.chat(user="reader-7")


@pytest.fixture
def telemetry() -> PrometheusTelemetry:
    return PrometheusTelemetry()


# --- metrics of a turn ---------------------------------------------------------------------------
def test_a_turn_counts_its_tool_calls_model_calls_tokens_and_outcome(telemetry):
    world = World()
    provider = ScriptedChatProvider(
        [[tool_call("search_book", SEARCH), tool_call("search_book", {})], ANSWER_1]
    )
    result = chat_on(world, provider, telemetry).execute("c1", QUESTION)

    tool = "folio_tool_call_duration_seconds_count"
    assert value(telemetry, tool, tool="search_book", outcome="ok") == 1
    assert value(telemetry, tool, tool="search_book", outcome="invalid_arguments") == 1
    model = "folio_model_call_duration_seconds_count"
    labels = {"provider": "scripted", "model": "scripted-1"}
    assert value(telemetry, model, **labels, outcome="ok") == result.llm_calls == 2
    assert value(telemetry, "folio_turns_total", outcome="answered") == 1
    assert value(telemetry, "folio_turn_duration_seconds_count", outcome="answered") == 1
    tokens = "folio_tokens_total"
    assert value(telemetry, tokens, **labels, kind="input") == result.input_tokens > 0
    assert value(telemetry, tokens, **labels, kind="output") == result.output_tokens > 0
    assert value(telemetry, "folio_turns_in_flight") == 0


def test_a_failed_turn_is_counted_as_failed_with_its_model_call_by_error_code(telemetry):
    world = World()
    provider = ScriptedChatProvider([LLMError("slow down", code=LLMErrorCode.RATE_LIMITED)])
    with pytest.raises(LLMError):
        chat_on(world, provider, telemetry).execute("c1", QUESTION)

    assert value(telemetry, "folio_turns_total", outcome="failed") == 1
    assert value(telemetry, "folio_turns_total", outcome="answered") == 0
    count = "folio_model_call_duration_seconds_count"
    labels = {"provider": "scripted", "model": "scripted-1", "outcome": "rate_limited"}
    assert value(telemetry, count, **labels) == 1
    assert value(telemetry, "folio_turns_in_flight") == 0


def test_a_turn_the_guardrail_answers_is_counted_as_blocked(telemetry):
    world = World()
    lexical_only = WithoutSimilarity(world.story)
    world.story = replace(world.story, searcher=lexical_only)
    guardrail = Guardrail("retrieval", searcher=lexical_only)
    chat = chat_on(world, ScriptedChatProvider([]), telemetry, guardrail)
    assert chat.execute("c1", "How do I bake sourdough bread?").blocked

    assert value(telemetry, "folio_turns_total", outcome="blocked") == 1
    assert value(telemetry, "folio_turns_total", outcome="answered") == 0


def test_a_turn_whose_caller_left_is_counted_as_cancelled(telemetry):
    world = World()

    def gone(event: ChatEvent) -> None:
        raise TurnCancelled

    chat = chat_on(world, ScriptedChatProvider([ANSWER_1]), telemetry)
    with pytest.raises(TurnCancelled):
        chat.execute("c1", QUESTION, on_event=gone)

    assert value(telemetry, "folio_turns_total", outcome="cancelled") == 1
    assert value(telemetry, "folio_turns_in_flight") == 0
    assert world.turns() == []


def test_a_turn_is_in_flight_while_it_runs_and_its_scope_names_the_conversation(telemetry):
    world = World()
    seen: list[tuple[float, TurnScope | None]] = []

    def answer(messages: Any, tools: Any) -> str:
        seen.append((value(telemetry, "folio_turns_in_flight"), context.turn_scope.get()))
        return ANSWER_1

    chat_on(world, ScriptedChatProvider([answer]), telemetry).execute("c1", QUESTION)

    assert seen == [(1.0, TurnScope("c1", "reader-7"))]
    assert value(telemetry, "folio_turns_in_flight") == 0
    assert context.turn_scope.get() is None


def test_a_tool_the_model_made_up_is_labelled_unknown(telemetry):
    world = World()
    registry = ToolRegistry(book_tools(), telemetry=telemetry)
    services = ToolServices(world.story.searcher, world.story.library, world.story.library, 5)
    ctx = ToolContext(book=world.story.book)
    registry.run(ToolInvocation("summon_ghost_9f3", "t1", {}), ctx, services)

    count = "folio_tool_call_duration_seconds_count"
    assert value(telemetry, count, tool="unknown", outcome="unknown_tool") == 1
    assert not any("summon_ghost_9f3" in str(key) for key in samples(telemetry))


def test_import_stages_are_counted(telemetry):
    for stage in ("queued", "parse", "parse", "done"):
        telemetry.import_stage(stage)
    assert value(telemetry, "folio_import_stages_total", stage="parse") == 2
    assert value(telemetry, "folio_import_stages_total", stage="done") == 1


# --- log lines -----------------------------------------------------------------------------------
def _records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("folio.")]


def _record_text(record: logging.LogRecord) -> str:
    return record.getMessage() + json.dumps(record.__dict__, default=str)


def test_turn_tool_and_model_lines_carry_the_fields_and_no_message_text(telemetry, caplog):
    world = World()
    provider = ScriptedChatProvider([tool_call("search_book", SEARCH), ANSWER_1])
    with caplog.at_level(logging.INFO, logger="folio"):
        result = chat_on(world, provider, telemetry).execute("c1", QUESTION)

    records = _records(caplog)
    by_event: dict[str, list[logging.LogRecord]] = {}
    for r in records:
        by_event.setdefault(getattr(r, "event", ""), []).append(r)
    (turn,) = by_event["turn"]
    assert (turn.conversation_id, turn.user, turn.outcome) == ("c1", "reader-7", "answered")
    assert (turn.turn_number, turn.llm_calls, turn.tool_calls) == (1, 2, 1)
    assert (turn.input_tokens, turn.output_tokens) == (result.input_tokens, result.output_tokens)
    assert turn.duration_ms > 0
    (tool,) = by_event["tool_call"]
    assert (tool.tool, tool.success, tool.user, tool.conversation_id) == (
        "search_book",
        True,
        "reader-7",
        "c1",
    )
    models = by_event["model_call"]
    assert [(m.provider, m.model, m.outcome) for m in models] == [
        ("scripted", "scripted-1", "ok")
    ] * 2
    assert all(m.input_tokens > 0 for m in models)
    for r in records:
        assert "quokka" not in _record_text(r)
        assert "Waldman" not in _record_text(r)  # the answer's words


def test_the_debug_setting_puts_the_texts_into_the_turn_line(telemetry, caplog):
    world = World()
    chat = chat_on(world, ScriptedChatProvider([ANSWER_1]), telemetry, log_message_text=True)
    with caplog.at_level(logging.INFO, logger="folio.turns"):
        chat.execute("c1", QUESTION)
    (turn,) = [r for r in caplog.records if getattr(r, "event", "") == "turn"]
    assert (turn.question, turn.answer) == (QUESTION, ANSWER_1)


@pytest.fixture
def json_log() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(json_formatter())
    handler.addFilter(ContextFilter())
    logger = logging.getLogger("folio.test_observability")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    yield logger, stream
    logger.removeHandler(handler)


def test_json_lines_name_the_request_and_the_turn_they_belong_to(json_log):
    logger, stream = json_log
    rid = context.request_id.set("req-42")
    scope = context.turn_scope.set(TurnScope("conv-1", "u-1"))
    try:
        logger.info("inside", extra={"tool": "search_book", "duration_ms": 1.5})
    finally:
        context.turn_scope.reset(scope)
        context.request_id.reset(rid)
    logger.info("outside")

    inside, outside = (json.loads(line) for line in stream.getvalue().splitlines())
    assert inside["request_id"] == "req-42"
    assert (inside["conversation_id"], inside["user"]) == ("conv-1", "u-1")
    assert (inside["level"], inside["logger"], inside["message"]) == (
        "INFO",
        "folio.test_observability",
        "inside",
    )
    assert (inside["tool"], inside["duration_ms"]) == ("search_book", 1.5)
    assert "time" in inside
    assert "request_id" not in outside and "conversation_id" not in outside


def test_text_lines_name_the_request_or_a_dash():
    handler = logging.StreamHandler(io.StringIO())
    handler.setFormatter(text_formatter())
    handler.addFilter(ContextFilter())
    record = logging.LogRecord("folio.http", logging.INFO, __file__, 1, "GET /", None, None)
    rid = context.request_id.set("req-9")
    try:
        assert handler.filter(record)
    finally:
        context.request_id.reset(rid)
    outside = logging.LogRecord("folio.serve", logging.INFO, __file__, 1, "up", None, None)
    handler.filter(outside)
    assert handler.format(record).endswith("INFO folio.http [req-9] GET /")
    assert handler.format(outside).endswith("INFO folio.serve [-] up")


def test_a_valid_request_id_is_echoed_and_anything_else_replaced():
    assert request_id_of("3f2a-9b.c:1") == "3f2a-9b.c:1"
    for bad in (None, "", "x" * 129, "a b", "id\nforged log line"):
        replaced = request_id_of(bad)
        assert replaced != bad and len(replaced) == 32


# --- the model-call wrapper ----------------------------------------------------------------------
def _model_counts(telemetry: PrometheusTelemetry) -> dict[str, float]:
    return {
        dict(labels)["outcome"]: v
        for (name, labels), v in samples(telemetry).items()
        if name == "folio_model_call_duration_seconds_count"
    }


def test_a_finished_stream_is_ok_and_an_abandoned_one_cancelled(telemetry):
    provider = ObservedChatProvider(
        ScriptedChatProvider(["one two three", "four five six"]), telemetry
    )
    messages = [PromptMessage.user("hello")]
    kinds = [e.kind for e in provider.stream_chat(messages)]
    assert kinds[-1] is StreamEventKind.DONE

    abandoned = provider.stream_chat(messages)
    next(abandoned)
    abandoned.close()  # type: ignore[attr-defined]

    assert _model_counts(telemetry) == {"ok": 1.0, "cancelled": 1.0}


def test_a_provider_error_is_reported_by_its_code_and_raised(telemetry):
    failing = ScriptedChatProvider([LLMError("down", code=LLMErrorCode.UNAVAILABLE)])
    provider = ObservedChatProvider(failing, telemetry)
    with pytest.raises(LLMError):
        provider.chat([PromptMessage.user("hello")])
    assert _model_counts(telemetry) == {"unavailable": 1.0}
