"""Engine cost of a chat turn: everything ChatWithBook does except the model.

1. Engine time per turn with a 200-message history (50 earlier turns, each with a search): load the
   conversation and history, choose the window, build the prompt, run ``search_book`` through the
   registry (hybrid search bounded by the reading position), persist the turn in one unit of work.
   The provider is the scripted one and its time is subtracted; the query vector is precomputed
   so embedding is excluded. Median and p95 over one turn in each of N conversations, on the
   SQLite stores (the default backend), with the guardrail off and in retrieval mode (which adds
   one search of the raw question).
2. Tokens sent per turn over a 20-turn conversation (search + answer every turn), estimated as
   characters / 4 by the scripted provider: the window (20 messages, older tool results
   shortened) keeps it flat after the first turns.

    .venv/bin/python benchmarks/bench_turn.py [--conversations 40] [--stores sqlite,memory]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.contract.library_data import book_from_file  # noqa: E402

from folio.adapters.embeddings.hashing import HashingEmbedder  # noqa: E402
from folio.adapters.llm.scripted import ScriptedChatProvider, tool_call  # noqa: E402
from folio.adapters.storage.memory_books import InMemoryLibrary  # noqa: E402
from folio.adapters.storage.memory_conversations import InMemoryConversationStore  # noqa: E402
from folio.adapters.storage.sqlite_conversations import SqliteConversationStore  # noqa: E402
from folio.adapters.storage.sqlite_db import Database  # noqa: E402
from folio.adapters.storage.sqlite_library import SqliteLibrary  # noqa: E402
from folio.agent.context import FullHistoryStrategy  # noqa: E402
from folio.agent.guardrail import Guardrail  # noqa: E402
from folio.agent.tools import ToolContext, ToolServices, default_registry  # noqa: E402
from folio.app.chat import ChatWithBook  # noqa: E402
from folio.app.search import SearchBook  # noqa: E402
from folio.domain.books import Book  # noqa: E402
from folio.domain.conversations import ChatMessage, Conversation, MessageRole  # noqa: E402
from folio.domain.llm import PromptMessage, ToolDefinition  # noqa: E402
from folio.domain.ports import Vectors  # noqa: E402

FRANKENSTEIN = ROOT / "src" / "folio" / "data" / "frankenstein.txt"
T0 = datetime(2024, 1, 1, tzinfo=UTC)
QUESTIONS = [
    "Who is Robert Walton writing to?",
    "Why does Walton want to reach the North Pole?",
    "How does Walton find Victor on the ice?",
    "Where did Victor grow up?",
    "Who is Elizabeth Lavenza?",
    "What did Victor study at Ingolstadt?",
    "What did Professor Waldman tell Victor?",
    "How did Victor create the creature?",
    "What did Victor do when the creature awoke?",
    "Who is Henry Clerval?",
    "How did William die?",
    "Why was Justine accused?",
    "What happened at Justine's trial?",
    "Where does Victor meet the creature again?",
    "What did the creature learn from the De Lacey family?",
    "What does the creature ask Victor to make?",
    "Why did Victor destroy the second creature?",
    "What happened to Clerval in Ireland?",
    "What happened on Victor's wedding night?",
    "How does the story end?",
]


class FixedVectorEmbedder:
    """Returns one precomputed vector: query embedding costs nothing in the measurement."""

    def __init__(self, dimensions: int) -> None:
        self._vector = HashingEmbedder(dimensions).embed(["Victor Frankenstein creature"])[0]

    name = "fixed"

    @property
    def dimensions(self) -> int:
        return len(self._vector)

    def embed(self, texts: Sequence[str]) -> Vectors:
        return np.tile(self._vector, (len(texts), 1))


class TimedProvider(ScriptedChatProvider):
    """The scripted provider, timing its own calls so they can be subtracted."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seconds = 0.0

    def _respond(self, method, messages, tools):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return super()._respond(method, messages, tools)
        finally:
            self.seconds += time.perf_counter() - started


def answering_script() -> Callable[[Sequence[PromptMessage], Sequence[ToolDefinition] | None], Any]:
    """Search the question, then answer from the first passage, citing it."""

    def step(messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition] | None) -> Any:
        last = messages[-1]
        if last.role.value == "user" and tools is not None:
            return tool_call("search_book", {"query": last.content, "k": 5})
        return (
            "From the passages: the story tells it plainly, and the narrator dwells on it at "
            "length, with feeling and detail (Letter 4, p. 12). " * 3
        )

    return step


def load_book(library: Any, embedder: HashingEmbedder) -> Book:
    stored = book_from_file(FRANKENSTEIN, embedder, book_id="frankenstein")
    book = stored.book.with_position(stored.book.position_at_percent(80))
    library.add(book, stored.text, stored.chunks, stored.vectors)
    return book


def seed_history(uow_factory: Any, conversation_id: str, book: Book, tool_json: str) -> None:
    """A conversation with 50 earlier turns of 4 messages (question, call, result, answer)."""
    with uow_factory() as uow:
        uow.conversations.save(Conversation(conversation_id, book.id, "Bench", T0, T0))
        messages = []
        for turn in range(1, 51):
            call = tool_call("search_book", {"query": f"question {turn}"})
            rows = [
                (MessageRole.USER, f"Question {turn} about Victor?", None, ()),
                (MessageRole.ASSISTANT, "", None, (call,)),
                (MessageRole.TOOL_RESULT, tool_json, call.tool_use_id, ()),
                (MessageRole.ASSISTANT, "An answer citing (Chapter 5, p. 41). " * 4, None, ()),
            ]
            for seq, (role, content, use_id, calls) in enumerate(rows):
                messages.append(
                    ChatMessage(
                        f"{conversation_id}-{turn}-{seq}",
                        conversation_id,
                        turn,
                        seq,
                        role,
                        content,
                        T0 + timedelta(minutes=turn),
                        tool_use_id=use_id,
                        tool_invocations=calls,
                        tool_name="search_book" if use_id else None,
                    )
                )
        uow.messages.save_batch(messages)
        uow.commit()


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def bench_engine(
    store_kind: str, guardrail_mode: str, conversations: int, tmp: Path
) -> list[float]:
    embedder = HashingEmbedder()
    if store_kind == "sqlite":
        db = Database(tmp / f"{guardrail_mode}.db")
        db.migrate()
        library: Any = SqliteLibrary(db)
        store: Any = SqliteConversationStore(db)
    else:
        library = InMemoryLibrary()
    book = load_book(library, embedder)
    searcher = SearchBook(library, FixedVectorEmbedder(embedder.dimensions))
    registry = default_registry()
    services = ToolServices(searcher, library, library)
    sample = registry.execute("search_book", ToolContext(book=book), services, {"query": "Victor"})
    sample_json = sample.to_json()
    ids = [f"conv-{i}" for i in range(conversations)]
    stores = {}
    for cid in ids:
        # The in-memory fake copies its whole state per unit of work: one store per conversation
        # keeps that copy at the size of one 200-message conversation.
        stores[cid] = store if store_kind == "sqlite" else InMemoryConversationStore()
        seed_history(stores[cid].unit_of_work, cid, book, sample_json)
    guardrail = Guardrail(guardrail_mode, searcher=searcher) if guardrail_mode != "none" else None
    timings = []
    for i, cid in enumerate(ids):
        provider = TimedProvider([answering_script()] * 4)
        chat = ChatWithBook(
            stores[cid].unit_of_work,
            library,
            searcher,
            library,
            provider,
            registry,
            FullHistoryStrategy(),
            guardrail=guardrail,
        )
        started = time.perf_counter()
        result = chat.execute(cid, QUESTIONS[i % len(QUESTIONS)])
        total = time.perf_counter() - started
        assert result.turn_number == 51, result
        timings.append((total - provider.seconds) * 1000)
    return timings


def bench_tokens() -> list[tuple[int, int, int]]:
    embedder = HashingEmbedder()
    library, store = InMemoryLibrary(), InMemoryConversationStore()
    book = load_book(library, embedder)
    with store.unit_of_work() as uow:
        uow.conversations.save(Conversation("c", book.id, "New conversation", T0, T0))
        uow.commit()
    provider = ScriptedChatProvider([answering_script()] * 40)
    chat = ChatWithBook(
        store.unit_of_work,
        library,
        SearchBook(library, embedder),
        library,
        provider,
        default_registry(),
        FullHistoryStrategy(),
    )
    rows = []
    for question in QUESTIONS:
        result = chat.execute("c", question)
        rows.append((result.turn_number, result.input_tokens, result.llm_calls))
    return rows


def measure(*, conversations: int = 40, stores: Sequence[str] = ("sqlite",)) -> dict[str, Any]:
    """Run both parts (printing as they go); returns the engine timings per store and guardrail
    mode (``"sqlite/none"`` -> ms per turn) and the per-turn ``(turn, input tokens, llm calls)``."""
    print("Engine time per turn, 200-message history, provider time excluded (ms):")
    engine: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for store_kind in stores:
            for mode in ("none", "retrieval"):
                t = bench_engine(store_kind, mode, conversations, Path(tmp))
                engine[f"{store_kind}/{mode}"] = t
                print(
                    f"  {store_kind:6} guardrail={mode:9}  median {statistics.median(t):6.2f}  "
                    f"p95 {percentile(t, 95):6.2f}  (n={len(t)})"
                )
    print("\nTokens sent per turn (input tokens, all LLM calls of the turn, chars/4):")
    rows = bench_tokens()
    for turn, tokens, calls in rows:
        print(f"  turn {turn:2}  {tokens:6} tokens in {calls} calls")
    totals = [tokens for _, tokens, _ in rows]
    print(f"  mean {statistics.mean(totals):.0f}, max {max(totals)}, turn 20 {totals[-1]}")
    return {"engine_ms": engine, "tokens": rows}


TARGET_MS = 20.0


def metrics(*, quick: bool) -> list[Any]:
    """The summary rows for ``run_all``: the default stores (SQLite), guardrail off and on."""
    from run_all import Metric

    numbers = measure(conversations=15 if quick else 40)
    rows = []
    for key, t in numbers["engine_ms"].items():
        median = statistics.median(t)
        rows += [
            Metric(
                "turn",
                f"engine per turn, 200-msg history ({key}): median",
                median,
                "ms",
                target=f"< {TARGET_MS:.0f} ms",
                ok=median < TARGET_MS,
                note=f"n={len(t)}",
            ),
            Metric("turn", f"engine per turn ({key}): p95", percentile(t, 95), "ms"),
        ]
    tokens = [n for _, n, _ in numbers["tokens"]]
    rows += [
        Metric(
            "turn",
            "input tokens per turn, 20 turns: mean",
            statistics.mean(tokens),
            "tok",
            note="scripted provider, chars/4",
        ),
        Metric(
            "turn",
            "input tokens at turn 20",
            tokens[-1],
            "tok",
            note=f"turn 5: {tokens[4]}, max {max(tokens)}",
        ),
    ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=40)
    parser.add_argument(
        "--stores",
        default="sqlite",
        help="comma-separated: sqlite (the default stores), memory (the test fakes, which copy "
        "their state per unit of work and scan every chunk per query: not representative)",
    )
    args = parser.parse_args()
    measure(conversations=args.conversations, stores=args.stores.split(","))


if __name__ == "__main__":
    main()
