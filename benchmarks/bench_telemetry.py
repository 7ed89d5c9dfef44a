"""What observing a turn costs: the same scripted turn (a search through the registry, then an
answer; in-memory stores, hashing embedder, the bundled Frankenstein) without telemetry and with
what ``folio serve`` runs: the Prometheus telemetry, the model-call wrapper, and every log line
(turn, tool call, model call) formatted as JSON at INFO into a discarded stream.

Turns alternate between the two set-ups so that both see the same machine; printed: the median
turn time of each (ms), the difference and the ratio.

    .venv/bin/python benchmarks/bench_telemetry.py [--turns 60]
"""

from __future__ import annotations

import argparse
import io
import logging
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.contract.library_data import book_from_file  # noqa: E402

from folio.adapters.embeddings.hashing import HashingEmbedder  # noqa: E402
from folio.adapters.llm.scripted import ScriptedChatProvider, tool_call  # noqa: E402
from folio.adapters.observability.logs import ContextFilter, json_formatter  # noqa: E402
from folio.adapters.observability.metrics import PrometheusTelemetry  # noqa: E402
from folio.adapters.storage.memory.books import InMemoryLibrary  # noqa: E402
from folio.adapters.storage.memory.conversations import InMemoryConversationStore  # noqa: E402
from folio.app.conversations import Conversations  # noqa: E402
from folio.app.search import SearchBook  # noqa: E402
from folio.bootstrap import Container  # noqa: E402
from folio.config import load_settings  # noqa: E402
from folio.domain.telemetry import NoTelemetry, Telemetry  # noqa: E402

FRANKENSTEIN = ROOT / "src" / "folio" / "data" / "frankenstein.txt"
ANSWER = "Henry Clerval is Victor's friend from Geneva (Chapter 1, p. 3)."


def turn_time(container: Container, book_id: str) -> float:
    """Seconds of one turn in a new conversation (in a store of its own, so that no turn pays
    for the ones before it)."""
    store = InMemoryConversationStore()
    conversation = Conversations(store.unit_of_work, container.books).create(book_id)
    provider = ScriptedChatProvider([tool_call("search_book", {"query": "Clerval"}), ANSWER])
    chat = container.overridden(provider=provider, uow=store.unit_of_work).chat()
    started = time.perf_counter()
    chat.execute(conversation.id, "Who is Clerval?")
    return time.perf_counter() - started


def json_logs_to_nowhere() -> None:
    handler = logging.StreamHandler(io.StringIO())
    handler.setFormatter(json_formatter())
    handler.addFilter(ContextFilter())
    folio = logging.getLogger("folio")
    folio.addHandler(handler)
    folio.propagate = False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    args = parser.parse_args()

    embedder = HashingEmbedder()
    library = InMemoryLibrary()
    stored = book_from_file(FRANKENSTEIN, embedder, book_id="frankenstein")
    library.add(stored.book, stored.text, stored.chunks, stored.vectors)
    settings = load_settings(env={}, guardrail="none")
    telemetries: dict[str, Telemetry] = {"off": NoTelemetry(), "on": PrometheusTelemetry()}
    containers = {
        name: Container(
            settings,
            library=library,
            searcher=SearchBook(library, embedder),
            embedder=embedder,
            telemetry=telemetry,
        )
        for name, telemetry in telemetries.items()
    }
    json_logs_to_nowhere()
    folio = logging.getLogger("folio")
    times: dict[str, list[float]] = {"off": [], "on": []}
    for _ in range(3):  # warm-up
        for container in containers.values():
            turn_time(container, stored.book.id)
    for _ in range(args.turns):
        for name, container in containers.items():
            folio.setLevel(logging.INFO if name == "on" else logging.WARNING)
            times[name].append(turn_time(container, stored.book.id))
    off, on = (statistics.median(times[k]) * 1000 for k in ("off", "on"))
    print(f"turns per set-up: {args.turns}")
    print(f"median turn, telemetry and logs off: {off:.2f} ms")
    print(f"median turn, Prometheus + JSON logs: {on:.2f} ms")
    print(f"difference: {on - off:+.2f} ms per turn (ratio {on / off:.3f})")


if __name__ == "__main__":
    main()
