"""Engine cost of a chat turn: everything ChatWithBook does except the model.

1. Engine time per turn with a 200-message history (50 earlier turns, each with a search): load the
   conversation and history, choose the window, build the prompt, run ``search_book`` through the
   registry (hybrid search bounded by the reading position), persist the turn in one unit of work.
   The provider is the scripted one and its time is subtracted; the query vector is precomputed
   so embedding is excluded (the passages are cut to what answers as for a model, with that one
   vector for every sentence: ``--depth`` times the embedder's part). Median and p95 over one
   turn in each of N conversations, on the SQLite stores (the default backend), with the
   guardrail off and in retrieval mode (which adds one search of the raw question).
2. Input tokens of a 20-turn conversation (a search and a cited answer every turn), before and
   after the token diet and prompt caching, in one run: "before" is the window folio used until
   then (``LegacyWindow`` below: the last turn's full search results and nine earlier turns with
   every passage shortened, sliding by one turn each turn) with no cache breakpoints; "after" is
   today's window (earlier turns keep only the passages their answer cited; the window moves in
   blocks) with Anthropic cache breakpoints. Raw tokens (chars / 4) and effective tokens at the
   vendors' documented cache prices (``turn_costs.py`` cites the pages).
   Targets: effective input tokens per conversation <= 1/4 of before; raw <= 1/2 of before.
3. The same conversation as LlamaIndex's CondensePlusContextChatEngine would send it (its default
   prompts, a condense call from the second turn, the passages in its system prompt, the whole
   history), at 2 passages a turn (its default) and 5, against folio at 2 and 5: folio as a
   model's turn has it (``search_book`` shows what answers of each passage, ``agent/excerpts``)
   and with whole passages (before that), in one run.

    .venv/bin/python benchmarks/bench_turn.py [--conversations 40] [--stores sqlite,memory]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.contract.library_data import book_from_file  # noqa: E402

from folio.adapters.embeddings.hashing import HashingEmbedder  # noqa: E402
from folio.adapters.llm.scripted import ScriptedChatProvider, tool_call  # noqa: E402
from folio.adapters.storage.memory.books import InMemoryLibrary  # noqa: E402
from folio.adapters.storage.memory.conversations import InMemoryConversationStore  # noqa: E402
from folio.adapters.storage.sqlite.conversations import SqliteConversationStore  # noqa: E402
from folio.adapters.storage.sqlite.db import Database  # noqa: E402
from folio.adapters.storage.sqlite.library import SqliteLibrary  # noqa: E402
from folio.agent.context import (  # noqa: E402
    RecentTurnsStrategy,
    estimate_tokens,
    shorten_tool_result,
    to_prompt_message,
)
from folio.agent.excerpts import PassageExcerpts  # noqa: E402
from folio.agent.guardrail import Guardrail  # noqa: E402
from folio.agent.strategies import AlwaysRetrieveStrategy, ToolUseRetrievalStrategy  # noqa: E402
from folio.agent.tools import ToolContext, ToolServices, default_registry  # noqa: E402
from folio.app.chat import ChatWithBook  # noqa: E402
from folio.app.search import SearchBook  # noqa: E402
from folio.domain.books import Book  # noqa: E402
from folio.domain.conversations import ChatMessage, Conversation  # noqa: E402
from folio.domain.llm import PromptMessage, PromptRole, ToolDefinition  # noqa: E402
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


def answering_script(
    k: int = 5,
) -> Callable[[Sequence[PromptMessage], Sequence[ToolDefinition] | None], Any]:
    """Search the question for ``k`` passages, then answer from the first two passages found,
    citing them as a model does ("(Chapter 5, p. 41)")."""

    def step(messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition] | None) -> Any:
        last = messages[-1]
        if last.role.value == "user" and tools is not None:
            return tool_call("search_book", {"query": last.content, "k": k})
        results = json.loads(last.content).get("data", {}).get("results", [])
        return scripted_answer([(r["chapter"], r["pages"]) for r in results])

    return step


def scripted_answer(places: Sequence[tuple[str | None, str]]) -> str:
    """The answer of the scripted model, citing the first two of ``places`` (chapter, pages)."""
    cites = "; ".join(f"{chapter}, p. {pages}" for chapter, pages in places[:2])
    return (
        "From the passages: the story tells it plainly, and the narrator dwells on it at "
        f"length, with feeling and detail ({cites}). " * 3
    )


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
                (PromptRole.USER, f"Question {turn} about Victor?", None, ()),
                (PromptRole.ASSISTANT, "", None, (call,)),
                (PromptRole.TOOL_RESULT, tool_json, call.tool_use_id, ()),
                (PromptRole.ASSISTANT, "An answer citing (Chapter 5, p. 41). " * 4, None, ()),
            ]
            for seq, (role, content, use_id, calls) in enumerate(rows):
                messages.append(
                    ChatMessage.of(
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
    fixed = FixedVectorEmbedder(embedder.dimensions)
    searcher = SearchBook(library, fixed)
    registry = default_registry()
    services = ToolServices(searcher, library, library)
    sample = registry.execute("search_book", ToolContext(book=book), services, {"query": "Victor"})
    # a model's turn: its passages cut to what answers
    services = replace(services, excerpts=PassageExcerpts())
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
            uow=stores[cid].unit_of_work,
            services=services,
            provider=provider,
            tools=registry,
            context=RecentTurnsStrategy(),
            retrieval=ToolUseRetrievalStrategy(fallback=AlwaysRetrieveStrategy()),
            guardrail=guardrail,
        )
        started = time.perf_counter()
        result = chat.execute(cid, QUESTIONS[i % len(QUESTIONS)])
        total = time.perf_counter() - started
        assert result.turn_number == 51, result
        timings.append((total - provider.seconds) * 1000)
    return timings


class LegacyWindow:
    """The context window before the token diet (kept here as the "before" of this benchmark):
    the last ``max_messages`` questions and answers, sliding by one turn, the last turn's tool
    results whole and older ones shortened to 160 characters per passage."""

    def __init__(self, *, max_messages: int = 20, token_budget: int = 8000) -> None:
        self.max_messages, self.token_budget = max_messages, token_budget

    def build_context(
        self, history: Sequence[ChatMessage], *, window: Any = None
    ) -> list[PromptMessage]:
        turns: list[list[ChatMessage]] = []
        for m in history:
            if not turns or turns[-1][0].turn_number != m.turn_number:
                turns.append([])
            turns[-1].append(m)
        kept: list[list[ChatMessage]] = []
        count = 0
        for turn in reversed(turns):
            visible = sum(
                1
                for m in turn
                if m.role is PromptRole.USER
                or (m.role is PromptRole.ASSISTANT and not m.tool_invocations)
            )
            if kept and count + visible > self.max_messages:
                break
            kept.insert(0, turn)
            count += visible
        rendered = [self._render(t, full=i == len(kept) - 1) for i, t in enumerate(kept)]
        while len(rendered) > 1 and estimate_tokens(_flat(rendered)) > self.token_budget:
            rendered.pop(0)
        return _flat(rendered)

    @staticmethod
    def _render(turn: list[ChatMessage], *, full: bool) -> list[PromptMessage]:
        out = []
        for message in turn:
            prompt = to_prompt_message(message)
            if not full and prompt.role is PromptRole.TOOL_RESULT:
                prompt = PromptMessage.tool_result(
                    prompt.tool_use_id or "", shorten_tool_result(prompt.content, passage_chars=160)
                )
            out.append(prompt)
        return out


def _flat(turns: list[list[PromptMessage]]) -> list[PromptMessage]:
    return [m for turn in turns for m in turn]


LEGACY_COMMIT = "4ea0658"  # the system prompt and tool schemas before the token diet, from git


@contextmanager
def legacy_prompts() -> Iterator[None]:
    """The system prompt and tool schemas as they were before the token diet, every tool offered
    on every call (as before issue 35)."""
    import folio.agent.prompt_builder as prompts
    import folio.agent.tools.registry as registry
    from folio.agent.tools import book

    saved_offer = registry.can_work
    registry.can_work = lambda tool, ctx, services: True  # type: ignore[assignment]

    saved_loader = prompts.load_template
    saved = {cls: (cls.description, cls.parameters) for cls in _tool_classes(book)}
    legacy = _legacy_tool_schemas()
    system = _git_show(f"src/folio/agent/prompts/{prompts.SYSTEM_PROMPT}")
    prompts.load_template = lambda name: (  # type: ignore[assignment]
        system if name == prompts.SYSTEM_PROMPT else saved_loader(name)
    )
    for cls in saved:
        if cls.name in legacy:
            cls.description, cls.parameters = legacy[cls.name]
    try:
        yield
    finally:
        registry.can_work = saved_offer  # type: ignore[assignment]
        prompts.load_template = saved_loader
        for cls, (description, parameters) in saved.items():
            cls.description, cls.parameters = description, parameters


def _tool_classes(module: Any) -> list[Any]:
    from folio.agent.tools.base import BaseTool

    return [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, BaseTool) and v is not BaseTool
    ]


def _legacy_tool_schemas() -> dict[str, tuple[str, Any]]:
    """name -> (description, parameters) of the book tools at ``LEGACY_COMMIT``."""
    import types

    module = types.ModuleType("legacy_book_tools")
    source = _git_show("src/folio/agent/tools/book.py")
    exec(compile(source, "legacy_book_tools", "exec"), module.__dict__)
    return {cls.name: (cls.description, cls.parameters) for cls in _tool_classes(module)}


def _git_show(path: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", "show", f"{LEGACY_COMMIT}:{path}"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout


def bench_tokens(context: Any, *, k: int = 5, excerpts: bool = True) -> list[list[Any]]:
    """The requests of each turn of a 20-turn conversation under ``context``, the model asking
    for ``k`` passages each turn; ``excerpts``: the model is shown what answers of each passage,
    as the composition root wires it (False: whole passages, as before)."""
    embedder = HashingEmbedder()
    library, store = InMemoryLibrary(), InMemoryConversationStore()
    book = load_book(library, embedder)
    with store.unit_of_work() as uow:
        uow.conversations.save(Conversation("c", book.id, "New conversation", T0, T0))
        uow.commit()
    provider = ScriptedChatProvider([answering_script(k)] * 40)
    chat = ChatWithBook(
        uow=store.unit_of_work,
        services=ToolServices(
            SearchBook(library, embedder),
            library,
            library,
            excerpts=PassageExcerpts() if excerpts else None,
        ),
        provider=provider,
        tools=default_registry(),
        context=context,
        retrieval=ToolUseRetrievalStrategy(fallback=AlwaysRetrieveStrategy()),
    )
    per_turn = []
    for question in QUESTIONS:
        before = len(provider.calls)
        chat.execute("c", question)
        per_turn.append(provider.calls[before:])
    return per_turn


# LlamaIndex's CondensePlusContextChatEngine, its default prompts (llama_index.core.chat_engine.
# condense_plus_context: DEFAULT_CONTEXT_PROMPT_TEMPLATE, DEFAULT_CONDENSE_PROMPT_TEMPLATE)
LLAMA_CONTEXT = """The following is a friendly conversation between a user and an AI assistant.
The assistant is talkative and provides lots of specific details from its context.
If the assistant does not know the answer to a question, it truthfully says it
does not know.

Here are the relevant documents for the context:

{context_str}

Instruction: Based on the above documents, provide a detailed answer for the user question below.
Answer "don't know" if not present in the document."""
LLAMA_CONDENSE = """Given the following conversation between a user and an AI assistant and a \
follow up question from user, rephrase the follow up question to be a standalone question.

Chat History:
{chat_history}
Follow Up Input: {question}
Standalone question:"""


def condense_plus_context_calls(*, k: int = 2) -> list[list[Any]]:
    """The requests LlamaIndex's CondensePlusContextChatEngine makes on this conversation: from
    the second turn a condense call (the whole history as text, the question), then the answer
    call (its system prompt holding ``k`` passages, the whole history, the question). ``k=2`` is
    its retrievers' default (``similarity_top_k``); its default memory keeps the whole
    conversation. The passages are folio's search of the question (each question here is already
    standalone, as a condensed one would be), their bare text (LlamaIndex adds node metadata);
    the answers are the scripted model's, as in folio's run."""
    from folio.adapters.llm.scripted import RecordedCall

    embedder = HashingEmbedder()
    library = InMemoryLibrary()
    book = load_book(library, embedder)
    searcher = SearchBook(library, embedder)
    history: list[PromptMessage] = []
    per_turn = []
    for question in QUESTIONS:
        calls = []
        if history:
            lines = "\n".join(f"{m.role.value}: {m.content}" for m in history)
            condense = LLAMA_CONDENSE.format(chat_history=lines, question=question)
            calls.append(RecordedCall("chat", (PromptMessage.user(condense),), None))
        hits = searcher.search(book, question, k=k)
        context = "\n\n".join(h.chunk.text.strip() for h in hits)
        system = PromptMessage.system(LLAMA_CONTEXT.format(context_str=context))
        user = PromptMessage.user(question)
        calls.append(RecordedCall("chat", (system, *history, user), None))
        answer = scripted_answer([(h.chunk.chapter, h.pages) for h in hits])
        history += [user, PromptMessage.assistant(answer)]
        per_turn.append(calls)
    return per_turn


def reference_report(after: list[list[Any]]) -> dict[str, dict[str, float]]:
    """folio against LlamaIndex's engine on this conversation: raw tokens at turn 1 and over the
    20 turns, and effective tokens over the 20 turns at Anthropic's prices (folio's breakpoints;
    LlamaIndex marks none) and OpenAI's (automatic for both; ``turn_costs`` compares prefixes
    message by message, and OpenAI's token-prefix cache would also serve part of LlamaIndex's
    condense call, one message that grows: its OpenAI figure is an upper bound); folio also with
    its model asking for as many passages as LlamaIndex retrieves."""
    from turn_costs import (
        ANTHROPIC_READ,
        ANTHROPIC_WRITE,
        OPENAI_READ,
        anthropic_costs,
        openai_costs,
    )

    def costs(turns: list[list[Any]], *, folio: bool) -> dict[str, float]:
        calls = [c for t in turns for c in t]
        anthropic = anthropic_costs(calls, breakpoints=folio)
        return {
            "turn 1": sum(c.raw for c in anthropic[: len(turns[0])]),
            "raw": sum(c.raw for c in anthropic),
            "anthropic": sum(
                c.effective(write_price=ANTHROPIC_WRITE, read_price=ANTHROPIC_READ)
                for c in anthropic
            ),
            "openai": sum(
                c.effective(write_price=0.0, read_price=OPENAI_READ) for c in openai_costs(calls)
            ),
        }

    two = bench_tokens(RecentTurnsStrategy(), k=2)
    whole = {n: bench_tokens(RecentTurnsStrategy(), k=n, excerpts=False) for n in (5, 2)}
    runs = {
        "folio, 5 passages a turn (the model asks for 5, as above)": costs(after, folio=True),
        "folio, 2 passages a turn": costs(two, folio=True),
        "folio, 5 whole passages a turn (before excerpts)": costs(whole[5], folio=True),
        "folio, 2 whole passages a turn (before excerpts)": costs(whole[2], folio=True),
        "LlamaIndex CondensePlusContextChatEngine, 2 passages (default)": costs(
            condense_plus_context_calls(k=2), folio=False
        ),
        "LlamaIndex CondensePlusContextChatEngine, 5 passages": costs(
            condense_plus_context_calls(k=5), folio=False
        ),
    }
    print(
        "\nThe same conversation (chars/4):                                   raw turn 1"
        "  raw 20 turns  eff. Anthropic  eff. OpenAI"
    )
    for name, c in runs.items():
        print(
            f"  {name:64} {c['turn 1']:8.0f}  {c['raw']:12.0f}  {c['anthropic']:14.0f}"
            f"  {c['openai']:11.0f}"
        )
    return runs


def token_report() -> dict[str, Any]:
    """Before/after per turn and summed: raw tokens, effective tokens at Anthropic's and
    OpenAI's cache prices."""
    from turn_costs import (
        ANTHROPIC_READ,
        ANTHROPIC_WRITE,
        OPENAI_READ,
        Cost,
        anthropic_costs,
        openai_costs,
    )

    with legacy_prompts():
        before = bench_tokens(LegacyWindow(), excerpts=False)
    runs = {"before": before, "after": bench_tokens(RecentTurnsStrategy())}
    rows: dict[str, list[dict[str, float]]] = {}
    for name, turns in runs.items():
        calls = [c for turn in turns for c in turn]
        anthropic = anthropic_costs(calls, breakpoints=name == "after")
        openai = openai_costs(calls)
        rows[name] = []
        i = 0
        for turn in turns:
            a, o = Cost(), Cost()
            for _ in turn:
                a += anthropic[i]
                o += openai[i]
                i += 1
            rows[name].append(
                {
                    "raw": a.raw,
                    "anthropic": a.effective(
                        write_price=ANTHROPIC_WRITE, read_price=ANTHROPIC_READ
                    ),
                    "openai": o.effective(write_price=0.0, read_price=OPENAI_READ),
                    "calls": len(turn),
                }
            )
    print(
        "\nInput tokens per turn, 20-turn conversation (chars/4), before -> after:"
        "\n  turn  raw before  raw after  eff. Anthropic before -> after"
        "   eff. OpenAI before -> after"
    )
    for n, (b, a) in enumerate(zip(rows["before"], rows["after"], strict=True), start=1):
        print(
            f"  {n:4}  {b['raw']:10.0f}  {a['raw']:9.0f}"
            f"  {b['anthropic']:14.0f} -> {a['anthropic']:7.0f}"
            f"  {b['openai']:18.0f} -> {a['openai']:7.0f}"
        )
    totals = {
        name: {k: sum(r[k] for r in rs) for k in ("raw", "anthropic", "openai")}
        for name, rs in rows.items()
    }
    b, a = totals["before"], totals["after"]
    print(
        f"  total raw {b['raw']:.0f} -> {a['raw']:.0f} ({a['raw'] / b['raw']:.2f}x, target <= 0.50)"
        f"\n  total effective, Anthropic prices: {b['anthropic']:.0f} -> {a['anthropic']:.0f}"
        f" ({a['anthropic'] / b['anthropic']:.2f}x of before, target <= 0.25)"
        f"\n  total effective, OpenAI prices (automatic caching both times): {b['openai']:.0f}"
        f" -> {a['openai']:.0f} ({a['openai'] / b['openai']:.2f}x)"
    )
    reference = reference_report(runs["after"])
    return {"per_turn": rows, "totals": totals, "reference": reference}


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
    tokens = token_report()
    return {"engine_ms": engine, "tokens": tokens}


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
    totals = numbers["tokens"]["totals"]
    before, after = totals["before"], totals["after"]
    reference = numbers["tokens"]["reference"]
    pairs = [
        (n, next(v for k, v in reference.items() if k.startswith(f"folio, {n} passages")),
         next(v for k, v in reference.items() if k.startswith("LlamaIndex") and f" {n} " in k))
        for n in (2, 5)
    ]  # fmt: skip
    raw_ratio = after["raw"] / before["raw"]
    eff_ratio = after["anthropic"] / before["anthropic"]
    rows += [
        Metric(
            "turn",
            "raw input tokens, 20-turn conversation",
            after["raw"],
            "tok",
            target="<= 0.5x before",
            ok=raw_ratio <= 0.5,
            note=f"before {before['raw']:.0f} ({raw_ratio:.2f}x); chars/4",
        ),
        Metric(
            "turn",
            "effective input tokens (Anthropic cache prices)",
            round(after["anthropic"]),
            "tok",
            target="<= 0.25x before",
            ok=eff_ratio <= 0.25,
            note=f"before {before['anthropic']:.0f} ({eff_ratio:.2f}x)",
        ),
    ]
    rows += [
        Metric(
            "turn",
            f"raw input tokens, 20 turns, {n} passages a turn, vs LlamaIndex CondensePlusContext",
            folio["raw"],
            "tok",
            target="<= LlamaIndex",
            ok=folio["raw"] <= llama["raw"],
            note=f"LlamaIndex {llama['raw']:.0f} (same conversation, same passages)",
        )
        for n, folio, llama in pairs
    ]
    return rows


DEPTH_QUESTIONS = [
    "Who is Victor's friend from Geneva?", "What did he study?", "Why?", "thanks!",
    "Where did Victor grow up?", "Who is Elizabeth?", "What happened to her mother?",
    "How did Victor feel about it?", "What did he do next?", "Who taught him chemistry?",
    "What did Waldman say?", "and Krempe?", "What did Victor build?", "When did it wake?",
    "What did he do then?", "Where did he go?", "Who came to visit him?", "Was he ill?",
    "Who nursed him?", "What letter did he get?",
]  # fmt: skip
DEPTHS = (1, 10, 20)


def bench_depth(conversations: int = 3) -> dict[str, dict[int, float]]:
    """Engine time per turn at turns 1, 10 and 20 of one conversation, on the bundled
    Frankenstein with the default embedder (query embeddings included), SQLite stores: offline,
    and a scripted model whose search_book query is the question (model time excluded)."""
    from folio.bootstrap import Container
    from folio.config import load_settings

    out: dict[str, dict[int, float]] = {}
    with tempfile.TemporaryDirectory() as home:
        container = Container(load_settings(env={"FOLIO_HOME": home}))
        book = container.ingest.execute(ROOT / "src" / "folio" / "data" / "frankenstein.txt").book
        for label in ("offline", "model"):
            times: dict[int, list[float]] = {d: [] for d in DEPTHS}
            for _ in range(conversations):
                conversation = container.conversations.create(book.id, "bench")
                for turn, question in enumerate(DEPTH_QUESTIONS, 1):
                    if label == "offline":
                        chat, provider = container.chat(provider="offline"), None
                    else:
                        script = [tool_call("search_book", {"query": question}), "ok"]
                        provider = TimedProvider(script)
                        chat = container.overridden(provider=provider).chat()
                    started = time.perf_counter()
                    chat.execute(conversation.id, question)
                    total = time.perf_counter() - started - (provider.seconds if provider else 0)
                    if turn in times:
                        times[turn].append(total * 1000)
            out[label] = {d: statistics.median(t) for d, t in times.items()}
            print(
                f"  {label:8} " + "  ".join(f"turn {d}: {v:6.1f} ms" for d, v in out[label].items())
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=40)
    parser.add_argument(
        "--depth",
        action="store_true",
        help="only the engine time at turns 1, 10 and 20 with the default embedder",
    )
    parser.add_argument(
        "--stores",
        default="sqlite",
        help="comma-separated: sqlite (the default stores), memory (the test fakes, which copy "
        "their state per unit of work and scan every chunk per query: not representative)",
    )
    args = parser.parse_args()
    if args.depth:
        print("Engine time per turn by depth (default embedder, provider time excluded):")
        bench_depth()
        return
    measure(conversations=args.conversations, stores=args.stores.split(","))


if __name__ == "__main__":
    main()
