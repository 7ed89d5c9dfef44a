"""Conversations, messages, turns and sources as JSON-ready dicts, and back.

One encoding for every store that writes JSON: the conversation files (``json.files``) and the
SQLite store's JSON columns. Invariants: decoding an encoded object gives back an equal object (a
naive datetime comes back as UTC), and datetimes are encoded in UTC at a fixed width (microseconds
always present) so that string order is time order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ConfigDict, TypeAdapter

from folio.adapters.storage.row_values import (
    decode_datetime,
    encode_datetime,
    json_value,
    moment,
)
from folio.domain.conversations import ChatMessage, Conversation, Source, Turn
from folio.domain.llm import PromptRole, ToolInvocation

# Tool calls, and the sources of SQL rows, through pydantic: 2-4x the speed of dicts by hand. (A
# conversation file's sources name their book and volume only when from an earlier volume.)
_INVOCATIONS = TypeAdapter(tuple[ToolInvocation, ...])
_SOURCES = TypeAdapter(tuple[Source, ...], config=ConfigDict(coerce_numbers_to_str=True))


def source_to_dict(s: Source) -> dict[str, Any]:
    """A source of a conversation file (its book and volume only when from an earlier volume)."""
    return {
        "chunk_id": s.chunk_id,
        "chapter": s.chapter,
        "page_start": s.page_start,
        "page_end": s.page_end,
        "char_start": s.char_start,
        "char_end": s.char_end,
        "quote": s.quote,
        "score": s.score,
        **({"book_id": s.book_id, "volume": s.volume} if s.book_id else {}),
    }


def source_from_dict(d: Mapping[str, Any]) -> Source:
    return Source(
        d["chunk_id"], d.get("chapter"), str(d["page_start"]), str(d["page_end"]),
        int(d["char_start"]), int(d["char_end"]), d.get("quote", ""), float(d.get("score", 0.0)),
        d.get("book_id"), d.get("volume"),
    )  # fmt: skip


def _load(adapter: TypeAdapter[Any], value: Any) -> Any:
    return (
        adapter.validate_json(value) if isinstance(value, str) else adapter.validate_python(value)
    )


def _text(adapter: TypeAdapter[Any], value: Any) -> str:
    return adapter.dump_json(value).decode()


def conversation_to_dict(c: Conversation) -> dict[str, Any]:
    return {
        "id": c.id,
        "book_id": c.book_id,
        "title": c.title,
        "created_at": encode_datetime(c.created_at),
        "updated_at": encode_datetime(c.updated_at),
        "auto_title": c.auto_title,
    }


def conversation_from_dict(d: Mapping[str, Any]) -> Conversation:
    return Conversation(
        d["id"], d["book_id"], d["title"], decode_datetime(d["created_at"]),
        decode_datetime(d["updated_at"]), bool(d.get("auto_title", False)),
    )  # fmt: skip


def message_to_dict(m: ChatMessage) -> dict[str, Any]:
    return {
        "id": m.id,
        "turn_number": m.turn_number,
        "seq": m.seq,
        "role": m.role.value,
        "content": m.content,
        "created_at": encode_datetime(m.created_at),
        "tool_use_id": m.tool_use_id,
        "tool_invocations": _INVOCATIONS.dump_python(m.tool_invocations, mode="json"),
        "tool_name": m.tool_name,
        "is_error": m.is_error,
    }


def message_from_dict(d: Mapping[str, Any], conversation_id: str) -> ChatMessage:
    return ChatMessage.of(
        id=d["id"],
        conversation_id=conversation_id,
        turn_number=int(d["turn_number"]),
        seq=int(d["seq"]),
        role=PromptRole(d["role"]),
        content=d["content"],
        created_at=decode_datetime(d["created_at"]),
        tool_use_id=d.get("tool_use_id"),
        tool_invocations=_INVOCATIONS.validate_python(d.get("tool_invocations", [])),
        tool_name=d.get("tool_name"),
        is_error=bool(d.get("is_error", False)),
    )


def turn_to_dict(t: Turn) -> dict[str, Any]:
    return {
        "turn_number": t.turn_number,
        "created_at": encode_datetime(t.created_at),
        "queries": list(t.queries),
        "retrieval_attempts": t.retrieval_attempts,
        "sources": [source_to_dict(s) for s in t.sources],
        "reasoning_steps": list(t.reasoning_steps),
        "guardrail_score": t.guardrail_score,
        "provider": t.provider,
        "model": t.model,
        "input_tokens": t.input_tokens,
        "output_tokens": t.output_tokens,
        "llm_calls": t.llm_calls,
        "latency_ms": t.latency_ms,
        "strategy": t.strategy,
        "extra": dict(t.extra),
        "cache_read_tokens": t.cache_read_tokens,
        "cache_write_tokens": t.cache_write_tokens,
    }


def turn_from_dict(d: Mapping[str, Any], conversation_id: str) -> Turn:
    score = d.get("guardrail_score")
    return Turn(
        conversation_id=conversation_id,
        turn_number=int(d["turn_number"]),
        created_at=decode_datetime(d["created_at"]),
        queries=tuple(d.get("queries", [])),
        retrieval_attempts=int(d.get("retrieval_attempts", 0)),
        sources=tuple(source_from_dict(s) for s in d.get("sources", [])),
        reasoning_steps=tuple(d.get("reasoning_steps", [])),
        guardrail_score=None if score is None else float(score),
        provider=d.get("provider", ""),
        model=d.get("model", ""),
        input_tokens=int(d.get("input_tokens", 0)),
        output_tokens=int(d.get("output_tokens", 0)),
        llm_calls=int(d.get("llm_calls", 0)),
        latency_ms=float(d.get("latency_ms", 0.0)),
        strategy=d.get("strategy", ""),
        extra=dict(d.get("extra") or {}),
        cache_read_tokens=int(d.get("cache_read_tokens", 0)),
        cache_write_tokens=int(d.get("cache_write_tokens", 0)),
    )


# --- rows of the SQL stores (SQLite and PostgreSQL share one schema for conversations) ---------
# Parameters are written the same way to both; a row read back holds JSON as text (SQLite) or as
# parsed values (PostgreSQL's jsonb), and datetimes as text or as datetimes: ``_json`` and
# ``_moment`` accept either, so one decoder serves both stores.
CONVERSATION_COLUMNS = "id, book_id, title, created_at, updated_at, auto_title"
MESSAGE_COLUMNS = (
    "id, conversation_id, turn_number, seq, role, content, tool_use_id, tool_invocations, "
    "tool_name, is_error, created_at"
)
TURN_COLUMNS = (
    "conversation_id, turn_number, created_at, queries, retrieval_attempts, sources, "
    "reasoning_steps, guardrail_score, provider, model, input_tokens, output_tokens, "
    "llm_calls, latency_ms, strategy, extra, cache_read_tokens, cache_write_tokens"
)


def conversation_params(c: Conversation) -> tuple[Any, ...]:
    return (
        c.id, c.book_id, c.title, encode_datetime(c.created_at), encode_datetime(c.updated_at),
        c.auto_title,
    )  # fmt: skip


def conversation_from_row(row: Mapping[str, Any]) -> Conversation:
    return Conversation(
        row["id"], row["book_id"], row["title"], moment(row["created_at"]),
        moment(row["updated_at"]), bool(row["auto_title"]),
    )  # fmt: skip


def message_params(m: ChatMessage) -> tuple[Any, ...]:
    return (
        m.id, m.conversation_id, m.turn_number, m.seq, m.role.value, m.content, m.tool_use_id,
        _text(_INVOCATIONS, m.tool_invocations),
        m.tool_name, m.is_error, encode_datetime(m.created_at),
    )  # fmt: skip


def message_from_row(row: Mapping[str, Any]) -> ChatMessage:
    return ChatMessage.of(
        id=row["id"],
        conversation_id=row["conversation_id"],
        turn_number=row["turn_number"],
        seq=row["seq"],
        role=PromptRole(row["role"]),
        content=row["content"],
        created_at=moment(row["created_at"]),
        tool_use_id=row["tool_use_id"],
        tool_invocations=_load(_INVOCATIONS, row["tool_invocations"]),
        tool_name=row["tool_name"],
        is_error=bool(row["is_error"]),
    )


def turn_params(t: Turn) -> tuple[Any, ...]:
    return (
        t.conversation_id, t.turn_number, encode_datetime(t.created_at),
        json.dumps(list(t.queries), ensure_ascii=False), t.retrieval_attempts,
        _text(_SOURCES, t.sources),
        json.dumps(list(t.reasoning_steps), ensure_ascii=False), t.guardrail_score, t.provider,
        t.model, t.input_tokens, t.output_tokens, t.llm_calls, t.latency_ms, t.strategy,
        json.dumps(dict(t.extra), ensure_ascii=False), t.cache_read_tokens, t.cache_write_tokens,
    )  # fmt: skip


def turn_from_row(row: Mapping[str, Any]) -> Turn:
    return Turn(
        conversation_id=row["conversation_id"],
        turn_number=row["turn_number"],
        created_at=moment(row["created_at"]),
        queries=tuple(json_value(row["queries"])),
        retrieval_attempts=row["retrieval_attempts"],
        sources=_load(_SOURCES, row["sources"]),
        reasoning_steps=tuple(json_value(row["reasoning_steps"])),
        guardrail_score=row["guardrail_score"],
        provider=row["provider"],
        model=row["model"],
        input_tokens=row["input_tokens"],
        output_tokens=row["output_tokens"],
        llm_calls=row["llm_calls"],
        latency_ms=row["latency_ms"],
        strategy=row["strategy"],
        extra=json_value(row["extra"]),
        cache_read_tokens=row["cache_read_tokens"],
        cache_write_tokens=row["cache_write_tokens"],
    )
