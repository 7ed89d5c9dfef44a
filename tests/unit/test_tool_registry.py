"""The tool registry: registration, validation, errors as results, logging, state updates."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import pytest

from folio.agent.tools import BaseTool, ToolContext, ToolRegistry, ToolResult
from folio.domain.errors import (
    BookError,
    BookErrorCode,
    FolioError,
    ProgrammingError,
    ToolErrorCode,
)
from folio.domain.llm import ToolDefinition, ToolInvocation
from tests.unit.test_book_tools import StoryLibrary, make_story


class Echo(BaseTool):
    name = "echo"
    description = "Echo a word."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"word": {"type": "string"}, "times": {"type": "integer", "minimum": 1}},
        "required": ["word"],
        "additionalProperties": False,
    }

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def execute(self, ctx, services, **kwargs: Any) -> ToolResult:
        self.calls.append(kwargs)
        return ToolResult.ok({"echo": kwargs["word"] * kwargs.get("times", 1)}, summary="echoed")


class Boom(BaseTool):
    name = "boom"
    description = "Always fails."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}

    def execute(self, ctx, services, **kwargs: Any) -> ToolResult:
        raise RuntimeError("kaboom")


class NoSuchBook(BaseTool):
    name = "lookup"
    description = "Raises a domain error."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}

    def execute(self, ctx, services, **kwargs: Any) -> ToolResult:
        raise BookError("That book is gone", code=BookErrorCode.NOT_FOUND)


@pytest.fixture(scope="module")
def story() -> StoryLibrary:
    return make_story()


def _run(registry: ToolRegistry, story: StoryLibrary, name: str, arguments=None, **kw):
    return registry.execute(name, ToolContext(book=story.book), story.services(), arguments, **kw)


def test_registering_two_tools_with_one_name_is_a_developer_error_not_a_user_error():
    registry = ToolRegistry([Echo()])

    with pytest.raises(ProgrammingError, match="Duplicate tool: echo") as error:
        registry.register(Echo())
    assert not isinstance(error.value, FolioError)


def test_a_tool_with_an_invalid_schema_cannot_be_registered():
    bad = Echo()
    bad.parameters = {"type": "object", "properties": {"word": {"type": "strnig"}}}

    with pytest.raises(ProgrammingError, match="invalid parameters schema"):
        ToolRegistry([bad])


def test_definitions_list_the_tools_in_registration_order():
    registry = ToolRegistry([Echo(), Boom()])

    # a model reads no "additionalProperties" (the "unexpected" case below is still refused)
    sent = {k: v for k, v in Echo.parameters.items() if k != "additionalProperties"}
    assert registry.definitions() == [
        ToolDefinition("echo", "Echo a word.", sent),
        ToolDefinition("boom", "Always fails.", {"type": "object", "properties": {}}),
    ]


def test_an_unknown_tool_is_a_result_not_an_exception(story):
    result = _run(ToolRegistry([Echo()]), story, "teleport", {})

    assert not result.success
    assert result.error_code == ToolErrorCode.UNKNOWN_TOOL
    assert "echo" in result.error  # the model learns what it may call


@pytest.mark.parametrize(
    "arguments",
    [{}, {"word": 3}, {"word": "hi", "times": 0}, {"word": "hi", "colour": "red"}],
    ids=["missing", "wrong-type", "below-minimum", "unexpected"],
)
def test_arguments_failing_the_schema_are_rejected_before_the_tool_runs(story, arguments):
    echo = Echo()

    result = _run(ToolRegistry([echo]), story, "echo", arguments)

    assert result.error_code == ToolErrorCode.INVALID_ARGUMENTS
    assert result.error.startswith("Invalid arguments for echo")
    assert echo.calls == []


def test_arguments_that_were_not_json_are_invalid(story):
    echo = Echo()
    invocation = ToolInvocation("echo", "call_1", {}, parse_error="Expecting ',' delimiter")

    result = ToolRegistry([echo]).run(invocation, ToolContext(book=story.book), story.services())

    assert result.error_code == ToolErrorCode.INVALID_ARGUMENTS
    assert "not valid JSON" in result.error
    assert echo.calls == []


def test_an_exception_inside_a_tool_becomes_an_error_result_and_is_logged(story, caplog):
    with caplog.at_level(logging.INFO, logger="folio.agent.tools"):
        result = _run(ToolRegistry([Boom()]), story, "boom", {})

    assert not result.success
    assert result.error_code == ToolErrorCode.EXCEPTION
    assert "kaboom" not in result.error  # internals stay in the log
    assert any(r.exc_info and "kaboom" in str(r.exc_info[1]) for r in caplog.records)


def test_a_domain_error_inside_a_tool_keeps_its_message_and_code(story):
    result = _run(ToolRegistry([NoSuchBook()]), story, "lookup", {})

    assert (result.success, result.error, result.error_code) == (
        False,
        "That book is gone",
        "NOT_FOUND",
    )


def test_each_call_logs_one_structured_line_with_its_duration(story, caplog):
    registry = ToolRegistry([Echo()])
    with caplog.at_level(logging.INFO, logger="folio.agent.tools"):
        _run(registry, story, "echo", {"word": "hi"})
        _run(registry, story, "echo", {})

    lines = [r for r in caplog.records if hasattr(r, "duration_ms")]
    assert [(r.tool, r.success, r.error_code) for r in lines] == [
        ("echo", True, None),
        ("echo", False, ToolErrorCode.INVALID_ARGUMENTS),
    ]
    assert all(r.duration_ms >= 0 for r in lines)
    assert "duration_ms=" in lines[0].getMessage()


def test_results_go_to_the_model_as_the_contract_json_envelope():
    ok = ToolResult.ok({"results": []})
    failed = ToolResult.fail("Unknown tool: x", ToolErrorCode.UNKNOWN_TOOL)

    assert json.loads(ok.to_json()) == {"success": True, "data": {"results": []}}
    assert json.loads(failed.to_json()) == {
        "success": False,
        "error": "Unknown tool: x",
        "error_code": "UNKNOWN_TOOL",
    }


def test_valid_arguments_reach_the_tool(story):
    echo = Echo()

    result = _run(ToolRegistry([echo]), story, "echo", {"word": "ab", "times": 2})

    assert result.data == {"echo": "abab"}
    assert echo.calls == [{"word": "ab", "times": 2}]


def test_an_error_takes_only_its_own_code_enum():
    with pytest.raises(TypeError, match="BookErrorCode"):
        BookError("x", code=ToolErrorCode.NOT_ALLOWED)
    with pytest.raises(TypeError):
        BookError("x", code="NOT_FOUND")  # type: ignore[arg-type]
    assert BookError("x", code=BookErrorCode.NOT_FOUND).is_not_found
    assert not BookError("x", code=BookErrorCode.AMBIGUOUS).is_not_found
