"""Fake vendor chat APIs (Anthropic Messages, OpenAI Chat Completions, Ollama ``/api/chat``) that
play a script of model replies over mocked HTTP, for whole chat turns through the real adapters.

Each fake renders the same script entry (``Reply`` or ``Failure``) in its vendor's documented wire
format: a JSON body, or, when the request asks for ``"stream": true``, the vendor's stream (SSE
events for Anthropic and OpenAI, NDJSON lines for Ollama). It records every request body so tests
can assert what the adapter sent. Invariant: a request the script does not expect fails the test
(no entry left), and nothing can reach the network: Anthropic and OpenAI get an
``httpx2.MockTransport`` client, Ollama is served through respx.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, ClassVar

import httpx
import httpx2

OLLAMA_HOST = "http://ollama.test:11434"


# --- the script ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ToolCall:
    """A call the model makes. ``arguments`` as a string is the raw JSON text the model wrote (it
    may be invalid); the vendor fakes that carry objects decode it."""

    name: str
    arguments: Mapping[str, Any] | str
    id: str = ""

    def json_text(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)

    def object(self) -> Any:
        return json.loads(self.arguments) if isinstance(self.arguments, str) else self.arguments


@dataclass(frozen=True)
class Reply:
    """One model reply: text, tool calls, and the token counts the vendor reports for it."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Failure:
    """An HTTP error answer with the vendor's error body."""

    status: int
    message: str
    headers: Mapping[str, str] = field(default_factory=dict)


Entry = Reply | Failure


def say(text: str, *, usage: tuple[int, int] = (0, 0)) -> Reply:
    return Reply(text=text, input_tokens=usage[0], output_tokens=usage[1])


def call(
    name: str, arguments: Mapping[str, Any] | str, *, id: str = "", usage: tuple[int, int] = (0, 0)
) -> Reply:
    return Reply(
        calls=(ToolCall(name, arguments, id),), input_tokens=usage[0], output_tokens=usage[1]
    )


def pieces(text: str) -> list[str]:
    """``text`` cut into word-sized stream deltas (whitespace kept, so they join back exactly)."""
    return [p for p in re.split(r"(?<=\s)(?=\S)", text) if p]


# --- the fakes ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    headers: dict[str, str]


class FakeChatAPI:
    """Plays back the script, one entry per request, and records the request bodies and URLs."""

    model = "model"

    def __init__(self, *script: Entry) -> None:
        self.script = list(script)
        self.bodies: list[dict[str, Any]] = []
        self.urls: list[str] = []
        self.headers: list[dict[str, str]] = []

    # the HTTP side ----------------------------------------------------------------------------
    def answer(self, url: str, headers: Mapping[str, str], content: bytes) -> Answer:
        self.urls.append(url)
        self.headers.append({k.lower(): v for k, v in headers.items()})
        body = json.loads(content)
        self.bodies.append(body)
        assert self.script, f"unexpected request #{len(self.bodies)}: {body}"
        entry = self.script.pop(0)
        if isinstance(entry, Failure):
            return Answer(entry.status, json.dumps(self.error(entry)).encode(), dict(entry.headers))
        if body.get("stream"):
            return Answer(
                200, self.stream(entry, body).encode(), {"content-type": self.stream_type}
            )
        return Answer(200, json.dumps(self.reply(entry)).encode(), {})

    def httpx2_handler(self, request: httpx2.Request) -> httpx2.Response:
        a = self.answer(str(request.url), dict(request.headers), request.content)
        return httpx2.Response(a.status, content=a.body, headers=a.headers or _JSON)

    def httpx_handler(self, request: httpx.Request) -> httpx.Response:
        a = self.answer(str(request.url), dict(request.headers), request.content)
        return httpx.Response(a.status, content=a.body, headers=a.headers or _JSON)

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.httpx2_handler))

    # the vendor side (subclasses) -------------------------------------------------------------
    stream_type = "text/event-stream"

    def reply(self, entry: Reply) -> dict[str, Any]:
        raise NotImplementedError

    def stream(self, entry: Reply, request: dict[str, Any]) -> str:
        raise NotImplementedError

    def error(self, failure: Failure) -> dict[str, Any]:
        raise NotImplementedError

    # reading what was sent --------------------------------------------------------------------
    def conversation(self, index: int) -> list[dict[str, Any]]:
        """The messages of request ``index`` without the system prompt."""
        return [m for m in self.bodies[index]["messages"] if m.get("role") != "system"]

    def system_prompt(self, index: int) -> str:
        raise NotImplementedError

    def tool_exchanges(self, index: int) -> list[ToolExchange]:
        raise NotImplementedError

    def tool_names(self, index: int) -> list[str]:
        return [t["function"]["name"] for t in self.bodies[index].get("tools", [])]


_JSON = {"content-type": "application/json"}


@dataclass(frozen=True)
class ToolExchange:
    """A tool call as sent back to the vendor and the result that answers it: ``call_key`` and
    ``result_key`` are what the vendor pairs them by (an id, or for Ollama the tool's name)."""

    call_key: str
    name: str
    arguments: Any
    result_key: str
    result: dict[str, Any]


def _sse(events: Sequence[dict[str, Any]], *, named: bool) -> str:
    return "".join(
        (f"event: {e['type']}\n" if named else "") + f"data: {json.dumps(e)}\n\n" for e in events
    )


def _halves(text: str) -> list[str]:
    middle = len(text) // 2
    return [text[:middle], text[middle:]]


class AnthropicAPI(FakeChatAPI):
    """The Messages API (``POST /v1/messages``)."""

    model = "claude-sonnet-4-6"
    _ERRORS: ClassVar[dict[int, str]] = {
        400: "invalid_request_error",
        401: "authentication_error",
        429: "rate_limit_error",
        529: "overloaded_error",
    }

    def __init__(self, *script: Entry) -> None:
        super().__init__(*script)
        self._count = 0

    def _id(self) -> str:
        self._count += 1
        return f"msg_01Fake{self._count:04d}"

    def _blocks(self, entry: Reply) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": entry.text}] if entry.text else []
        blocks += [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.object()}
            for c in entry.calls
        ]
        return blocks

    @staticmethod
    def _stop(entry: Reply) -> str:
        return "tool_use" if entry.calls else "end_turn"

    def reply(self, entry: Reply) -> dict[str, Any]:
        return {
            "id": self._id(),
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": self._blocks(entry),
            "stop_reason": self._stop(entry),
            "stop_sequence": None,
            "usage": {"input_tokens": entry.input_tokens, "output_tokens": entry.output_tokens},
        }

    def stream(self, entry: Reply, request: dict[str, Any]) -> str:
        start = {**self.reply(entry), "content": [], "stop_reason": None}
        start["usage"] = {"input_tokens": entry.input_tokens, "output_tokens": 1}
        events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
        for index, block in enumerate(self._blocks(entry)):
            events += self._block_events(index, block, entry)
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": self._stop(entry), "stop_sequence": None},
                "usage": {"output_tokens": entry.output_tokens},
            }
        )
        events.append({"type": "message_stop"})
        return _sse(events, named=True)

    @staticmethod
    def _block_events(index: int, block: dict[str, Any], entry: Reply) -> list[dict[str, Any]]:
        if block["type"] == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in pieces(block["text"])]
        else:
            opening = {**block, "input": {}}
            raw = next(c for c in entry.calls if c.id == block["id"]).json_text()
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in ["", *_halves(raw)]]
        return [
            {"type": "content_block_start", "index": index, "content_block": opening},
            *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
            {"type": "content_block_stop", "index": index},
        ]

    def error(self, failure: Failure) -> dict[str, Any]:
        kind = self._ERRORS.get(failure.status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": failure.message}}

    def system_prompt(self, index: int) -> str:
        (block,) = self.bodies[index]["system"]
        return str(block["text"])

    def conversation(self, index: int) -> list[dict[str, Any]]:
        """The messages of request ``index`` with the prompt-cache breakpoint taken out (the last
        message's content is a block list only to carry it; ``cache_breakpoints`` checks it)."""
        return [_without_cache_mark(m) for m in self.bodies[index]["messages"]]

    def cache_breakpoints(self, index: int) -> list[str]:
        """Where request ``index`` marks ``cache_control``: "system" and/or "message N"."""
        body = self.bodies[index]
        marks = ["system"] if any("cache_control" in b for b in body.get("system", [])) else []
        for i, m in enumerate(body["messages"]):
            if isinstance(m["content"], list) and any("cache_control" in b for b in m["content"]):
                marks.append(f"message {i}")
        return marks

    def tool_names(self, index: int) -> list[str]:
        return [t["name"] for t in self.bodies[index].get("tools", [])]

    def tool_exchanges(self, index: int) -> list[ToolExchange]:
        messages = self.bodies[index]["messages"]
        out = []
        for turn, following in pairwise(messages):
            if turn["role"] != "assistant" or isinstance(turn["content"], str):
                continue
            uses = [b for b in turn["content"] if b["type"] == "tool_use"]
            results = [b for b in following["content"] if b["type"] == "tool_result"]
            assert following["role"] == "user" and len(results) == len(uses)
            out += [
                ToolExchange(
                    u["id"], u["name"], u["input"], r["tool_use_id"], json.loads(r["content"])
                )
                for u, r in zip(uses, results, strict=True)
            ]
        return out


def _without_cache_mark(message: dict[str, Any]) -> dict[str, Any]:
    content = message["content"]
    if not isinstance(content, list):
        return message
    blocks = [{k: v for k, v in b.items() if k != "cache_control"} for b in content]
    if len(blocks) == 1 and blocks[0].get("type") == "text" and set(blocks[0]) == {"type", "text"}:
        return {**message, "content": blocks[0]["text"]}
    return {**message, "content": blocks}


class OpenAIAPI(FakeChatAPI):
    """Chat Completions (``POST /v1/chat/completions``), also as vLLM / LM Studio serve it."""

    model = "gpt-4o-mini-2024-07-18"
    _CODES: ClassVar[dict[int, str]] = {401: "invalid_api_key", 429: "rate_limit_exceeded"}

    def __init__(self, *script: Entry) -> None:
        super().__init__(*script)
        self._count = 0

    def _envelope(self, kind: str) -> dict[str, Any]:
        self._count += 1
        return {
            "id": f"chatcmpl-Fake{self._count:04d}",
            "object": kind,
            "created": 1763790000,
            "model": self.model,
            "system_fingerprint": "fp_0ba0d124f1",
        }

    @staticmethod
    def _usage(entry: Reply) -> dict[str, int]:
        total = entry.input_tokens + entry.output_tokens
        return {
            "prompt_tokens": entry.input_tokens,
            "completion_tokens": entry.output_tokens,
            "total_tokens": total,
        }

    @staticmethod
    def _finish(entry: Reply) -> str:
        return "tool_calls" if entry.calls else "stop"

    def reply(self, entry: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": entry.text or None,
            "refusal": None,
        }
        if entry.calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.json_text()},
                }
                for c in entry.calls
            ]
        choice = {
            "index": 0,
            "message": message,
            "logprobs": None,
            "finish_reason": self._finish(entry),
        }
        return {
            **self._envelope("chat.completion"),
            "choices": [choice],
            "usage": self._usage(entry),
        }

    def stream(self, entry: Reply, request: dict[str, Any]) -> str:
        head = self._envelope("chat.completion.chunk")

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return {**head, "choices": [choice], "usage": None}

        chunks = [chunk({"role": "assistant", "content": "", "refusal": None})]
        chunks += [chunk({"content": p}) for p in pieces(entry.text)]
        for i, c in enumerate(entry.calls):
            opening = {
                "index": i,
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": ""},
            }
            chunks.append(chunk({"tool_calls": [opening]}))
            chunks += [
                chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]})
                for p in _halves(c.json_text())
            ]
        chunks.append(chunk({}, self._finish(entry)))
        if request.get("stream_options", {}).get("include_usage"):
            chunks.append({**head, "choices": [], "usage": self._usage(entry)})
        return _sse(chunks, named=False) + "data: [DONE]\n\n"

    def error(self, failure: Failure) -> dict[str, Any]:
        kind = "requests" if failure.status == 429 else "invalid_request_error"
        code = self._CODES.get(failure.status)
        return {"error": {"message": failure.message, "type": kind, "param": None, "code": code}}

    def system_prompt(self, index: int) -> str:
        first = self.bodies[index]["messages"][0]
        assert first["role"] == "system"
        return str(first["content"])

    def tool_exchanges(self, index: int) -> list[ToolExchange]:
        messages = self.bodies[index]["messages"]
        out = []
        for i, m in enumerate(messages):
            calls = (m.get("tool_calls") or []) if m["role"] == "assistant" else []
            results = messages[i + 1 : i + 1 + len(calls)]
            assert all(r["role"] == "tool" for r in results)
            out += [
                ToolExchange(
                    c["id"],
                    c["function"]["name"],
                    json.loads(c["function"]["arguments"]),
                    r["tool_call_id"],
                    json.loads(r["content"]),
                )
                for c, r in zip(calls, results, strict=True)
            ]
        return out


class OllamaAPI(FakeChatAPI):
    """Ollama's ``POST /api/chat`` (tool calls carry no ids; results name their tool)."""

    model = "llama3.1:8b"
    stream_type = "application/x-ndjson"

    def _final(self, entry: Reply, message: dict[str, Any]) -> dict[str, Any]:
        return {
            "model": self.model,
            "created_at": "2026-11-22T06:40:00.0Z",
            "message": message,
            "done_reason": "stop",
            "done": True,
            "total_duration": 885095291,
            "load_duration": 3753500,
            "prompt_eval_count": entry.input_tokens,
            "prompt_eval_duration": 298000000,
            "eval_count": entry.output_tokens,
            "eval_duration": 580000000,
        }

    @staticmethod
    def _calls(entry: Reply) -> list[dict[str, Any]]:
        return [{"function": {"name": c.name, "arguments": c.object()}} for c in entry.calls]

    def reply(self, entry: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": entry.text}
        if entry.calls:
            message["tool_calls"] = self._calls(entry)
        return self._final(entry, message)

    def stream(self, entry: Reply, request: dict[str, Any]) -> str:
        def partial(message: dict[str, Any]) -> dict[str, Any]:
            return {
                "model": self.model,
                "created_at": "2026-11-22T06:40:01.0Z",
                "message": message,
                "done": False,
            }

        lines = [partial({"role": "assistant", "content": p}) for p in pieces(entry.text)]
        if entry.calls:
            lines.append(
                partial({"role": "assistant", "content": "", "tool_calls": self._calls(entry)})
            )
        lines.append(self._final(entry, {"role": "assistant", "content": ""}))
        return "".join(json.dumps(line) + "\n" for line in lines)

    def error(self, failure: Failure) -> dict[str, Any]:
        return {"error": failure.message}

    def system_prompt(self, index: int) -> str:
        first = self.bodies[index]["messages"][0]
        assert first["role"] == "system"
        return str(first["content"])

    def tool_exchanges(self, index: int) -> list[ToolExchange]:
        messages = self.bodies[index]["messages"]
        out = []
        for i, m in enumerate(messages):
            calls = (m.get("tool_calls") or []) if m["role"] == "assistant" else []
            results = messages[i + 1 : i + 1 + len(calls)]
            assert all(r["role"] == "tool" for r in results)
            out += [
                ToolExchange(
                    c["function"]["name"],
                    c["function"]["name"],
                    c["function"]["arguments"],
                    r.get("tool_name", ""),
                    json.loads(r["content"]),
                )
                for c, r in zip(calls, results, strict=True)
            ]
        return out
