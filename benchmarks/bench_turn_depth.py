"""Engine cost of a turn by conversation depth, of two versions of folio in one run.

One 20-turn reader conversation over the bundled Frankenstein (real SQLite, the packaged embedder,
position at Chapter 12), played twice per version:
- offline (no model): the whole turn is folio's own work;
- with a model (the scripted provider, whose time is nil): each turn the model calls
  ``search_book`` with a self-contained query it wrote, then answers.
For turns 1, 10 and 20 it prints the turn's wall time (median of the two turns around it when
there are), the embedder calls and the characters embedded in the turn, the searches per
``search_book`` call (with a model), and the prompt tokens the model was sent (chars / 4).

"before" is another commit (default 11248dd, the last with the hand-written follow-up, referent
and conversation-prior rules) checked out into a temporary git worktree and run with the same
interpreter; "after" is this checkout.

    .venv/bin/python benchmarks/bench_turn_depth.py [--before 11248dd]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "src" / "folio" / "data" / "frankenstein.txt"
# A reader's conversation in their own words: names, pronoun follow-ups, small talk, why/how.
QUESTIONS = [
    "Who is Victor's closest friend?",
    "What did he study at Ingolstadt?",
    "Who taught him chemistry?",
    "What did the professor say about the old alchemists?",
    "thanks",
    "Why did Victor fall ill?",
    "Who nursed him back to health?",
    "What news came from Geneva?",
    "Who was accused of the crime?",
    "Was she guilty?",
    "How did Victor feel at the trial?",
    "Where did he go after the trial?",
    "What did he see on the glacier?",
    "What did the creature ask him for?",
    "Where did the creature hide?",
    "Who lived in the cottage?",
    "How did he learn to speak?",
    "What book did he find?",
    "ok, interesting",
    "Why did the cottagers leave?",
]
MODEL_QUERIES = [  # what a model would search for each question: self-contained
    "Victor Frankenstein closest friend", "Victor's studies at Ingolstadt",
    "Victor's chemistry teacher at Ingolstadt", "professor's opinion of the alchemists",
    None, "why Victor Frankenstein fell ill", "who nursed Victor during his illness",
    "letter with news from Geneva", "who was accused of William's murder",
    "was Justine guilty of the murder", "Victor's feelings at Justine's trial",
    "where Victor went after Justine's trial", "what Victor saw on the glacier",
    "the creature's request to Victor", "where the creature hid near the cottage",
    "the family living in the cottage", "how the creature learned to speak",
    "books the creature found", None, "why the De Lacey family left the cottage",
]  # fmt: skip
# With a model, small talk is the model's to answer; two more questions keep 20 turns.
MODEL_TURNS = [(q, m) for q, m in zip(QUESTIONS, MODEL_QUERIES, strict=True) if m] + [
    ("What did the creature do to the cottage?", "what the creature did to the cottage"),
    ("Where did he go next?", "where the creature went after burning the cottage"),
]
DEPTHS = (1, 10, 20)

CHILD = r"""
import json, sys, time
from pathlib import Path
from folio.adapters.llm.scripted import ScriptedChatProvider, tool_call
from folio.bootstrap import Container
from folio.config import load_settings

home, book_path = sys.argv[1], sys.argv[2]
questions, model_turns = json.loads(sys.argv[3]), json.loads(sys.argv[4])
container = Container(load_settings(env={"FOLIO_HOME": home}, conversation_store="sqlite"))
book = container.ingest.execute(Path(book_path)).book
container.library.set_position(book.id, chapter="Chapter 12")
embedder = container.embedder
calls = []
inner = embedder.embed
def counted(texts):
    calls.append(sum(len(t) for t in texts))
    return inner(texts)
embedder.embed = counted
inner(["warm up the model"])

def play(chat, asked, script=None):
    conversation = container.conversations.create(book.id, "bench")
    out = []
    for q in asked:
        calls.clear()
        sent = len(script.calls) if script is not None else 0
        started = time.perf_counter()
        result = chat.execute(conversation.id, q)
        seconds = time.perf_counter() - started
        prompt = 0
        if script is not None:
            prompt = sum(len(m.content or "") for c in script.calls[sent:] for m in c.messages) // 4
        out.append({"seconds": seconds, "embeds": len(calls), "chars": sum(calls),
                    "searches": len(result.searches), "prompt_tokens": prompt})
    return out

offline = play(container.chat(provider="offline"), questions)
steps = []
for _, query in model_turns:
    steps += [tool_call("search_book", {"query": query}), "An answer from the passages found."]
provider = ScriptedChatProvider(steps)
model = play(container.overridden(provider=provider).chat(), [q for q, _ in model_turns], provider)
print(json.dumps({"offline": offline, "model": model}))
"""


def run(src: Path, home: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FOLIO_", "ANTHROPIC_"))}
    env["PYTHONPATH"] = str(src)
    args = [str(home), str(BOOK), json.dumps(QUESTIONS), json.dumps(MODEL_TURNS)]
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode:
        sys.exit(f"{src}: exit {done.returncode}\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def at(turns: list[dict[str, Any]], depth: int, key: str) -> float:
    around = [turns[i][key] for i in (depth - 2, depth - 1, depth) if 0 <= i < len(turns)]
    return sorted(around)[len(around) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="11248dd")
    args = parser.parse_args()
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="folio-turns-") as tmp:
        before = Path(tmp) / "before"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(before), args.before],
            check=True,
        )
        try:
            started = time.perf_counter()
            results["before"] = run(before / "src", Path(tmp) / "home-before")
            results["after"] = run(ROOT / "src", Path(tmp) / "home-after")
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)])
    print(f"{len(QUESTIONS)}-turn conversation, Frankenstein at Chapter 12; before = {args.before}")
    print(f"(both versions ran in {time.perf_counter() - started:.0f} s, imports included)")
    for path in ("offline", "model"):
        print(f"\n{path}: turn  ms before  ms after  embeds b/a  chars embedded b/a", end="")
        print("  searches b/a  prompt tokens b/a" if path == "model" else "")
        for depth in DEPTHS:
            b, a = results["before"][path], results["after"][path]
            line = (
                f"  turn {depth:2}  {at(b, depth, 'seconds') * 1000:9.0f} "
                f"{at(a, depth, 'seconds') * 1000:9.0f}  {b[depth - 1]['embeds']:4} /"
                f" {a[depth - 1]['embeds']:<4}  {b[depth - 1]['chars']:7} /"
                f" {a[depth - 1]['chars']:<7}"
            )
            if path == "model":
                line += (
                    f"  {b[depth - 1]['searches']:4} / {a[depth - 1]['searches']:<4}"
                    f"  {b[depth - 1]['prompt_tokens']:7} / {a[depth - 1]['prompt_tokens']}"
                )
            print(line)


if __name__ == "__main__":
    main()
