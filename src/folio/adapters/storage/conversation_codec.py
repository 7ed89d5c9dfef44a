"""Conversations, messages, turns and sources as JSON-ready dicts, and back.

One encoding for every store that writes JSON: the conversation files (``json_files``) and the
SQLite store's JSON columns. Invariants: decoding an encoded object gives back an equal object (a
naive datetime comes back as UTC), and datetimes are encoded in UTC at a fixed width (microseconds
always present) so that string order is time order.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from folio.domain.conversations import ChatMessage, Conversation, Source, Turn
from folio.domain.llm import PromptRole, ToolInvocation


def encode_datetime(value: datetime) -> str:
    """UTC, fixed width (microseconds always present) so that string order is time order. A naive
    datetime is taken to be UTC."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="microseconds")


def decode_datetime(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def invocation_to_dict(inv: ToolInvocation) -> dict[str, Any]:
    return {
        "tool_name": inv.tool_name,
        "tool_use_id": inv.tool_use_id,
        "arguments": dict(inv.arguments),
        "parse_error": inv.parse_error,
    }


def invocation_from_dict(d: Mapping[str, Any]) -> ToolInvocation:
    return ToolInvocation(
        d["tool_name"], d["tool_use_id"], dict(d.get("arguments") or {}), d.get("parse_error")
    )


def source_to_dict(s: Source) -> dict[str, Any]:
    return {
        "chunk_id": s.chunk_id,
        "chapter": s.chapter,
        "page_start": s.page_start,
        "page_end": s.page_end,
        "char_start": s.char_start,
        "char_end": s.char_end,
        "quote": s.quote,
        "score": s.score,
    }


def source_from_dict(d: Mapping[str, Any]) -> Source:
    return Source(
        d["chunk_id"], d.get("chapter"), str(d["page_start"]), str(d["page_end"]),
        int(d["char_start"]), int(d["char_end"]), d.get("quote", ""), float(d.get("score", 0.0)),
    )  # fmt: skip


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
        "tool_invocations": [invocation_to_dict(i) for i in m.tool_invocations],
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
        tool_invocations=tuple(invocation_from_dict(i) for i in d.get("tool_invocations", [])),
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
