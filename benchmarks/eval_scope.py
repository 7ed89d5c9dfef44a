"""Scope guardrail quality: how many reader questions it refuses (should be none) and how many
off-topic messages (as many as possible), on whole novels from ../shared/data/books.

Each book is imported with the configured embedder into a temporary FOLIO_HOME (the default
model: a few minutes for the four books), read to the end; every message of
``data/scope_messages.json`` is checked alone (no conversation) by the configured guardrail.
Prints refusals per book and in total, for the book's own messages (held out when the rules were
written) and for the generic ones.

    .venv/bin/python benchmarks/eval_scope.py [--book pg84_frankenstein.txt ...] [--show]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.books import ReadingPosition

ROOT = Path(__file__).resolve().parents[1]
BOOKS = ROOT.parent / "shared" / "data" / "books"
MESSAGES = Path(__file__).with_name("data") / "scope_messages.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", action="append", help="a file in ../shared/data/books")
    parser.add_argument("--show", action="store_true", help="print every wrong verdict")
    args = parser.parse_args()
    data = json.loads(MESSAGES.read_text(encoding="utf-8"))
    names = args.book or list(data["books"])
    totals: dict[str, list[int]] = {}
    with tempfile.TemporaryDirectory(prefix="folio-scope-") as home:
        settings = load_settings().replaced(home=Path(home))
        if settings.guardrail == "none":  # off by default: measure the retrieval one
            settings = settings.replaced(guardrail="retrieval")
        container = Container(settings)
        guardrail = container.guardrail
        for name in names:
            path = BOOKS / name
            if not path.exists():
                raise SystemExit(f"{path} is missing: this benchmark needs ../shared/data/books")
            book = container.ingest.execute(path).book.with_position(ReadingPosition())
            sets = {f"own {k}": v for k, v in data["books"].get(name, {}).items()}
            sets |= {f"any {k}": v for k, v in data["any_book"].items()}
            line = []
            for label, messages in sets.items():
                refused = [m for m in messages if not guardrail.check(book, m, []).allowed]
                count = totals.setdefault(label, [0, 0])
                count[0] += len(refused)
                count[1] += len(messages)
                line.append(f"{label} refused {len(refused)}/{len(messages)}")
                wrong = refused if label.endswith(" in") else sorted(set(messages) - set(refused))
                if args.show:
                    for message in wrong:
                        print(f"    {'REFUSED' if label.endswith(' in') else 'passed'}: {message}")
            print(f"{book.title[:40]:40} " + "; ".join(line), flush=True)
        container.close()
    print("total: " + "; ".join(f"{k} refused {a}/{b}" for k, (a, b) in totals.items()))


if __name__ == "__main__":
    main()
