"""A citation from an earlier volume of a series names that volume and its own page (issue 36,
item 4): volume 1's offsets were turned into pages with volume 2's page table (the quote on p. 31
cited as pp. 28-29), and the JSON citation did not say which volume. Checked against what
``folio read`` prints for that volume's page."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.e2e.conftest import RunFolio, ok
from tests.series_books import write_epub

FILLER = "The rain fell on the old forum while the crowd waited in the square below the steps. "


def _volume(folder: Path, number: int, name: str, chapters: int) -> Path:
    def paragraph(c: int, p: int) -> str:  # the name from chapter 4: past a short volume's pages
        who = name if c >= 4 or chapters < 4 else "A senator"
        return f"{FILLER * 5}{who} stood by column {c}.{p} and spoke to the senators. {FILLER * 5}"

    content = [
        (f"Chapter {c}", [paragraph(c, p) for p in range(5)]) for c in range(1, chapters + 1)
    ]
    return write_epub(folder / f"v{number}.epub", f"Ides Volume {number}", content,
                      series="Ides", index=str(number))  # fmt: skip


def test_a_citation_from_an_earlier_volume_names_it_and_its_own_page(
    run_folio: RunFolio, tmp_path: Path
) -> None:
    ok(run_folio("add", str(_volume(tmp_path, 1, "Brutus", 12)), "--position", "whole"))
    ok(run_folio("add", str(_volume(tmp_path, 2, "Cassius", 2)), "--position", "Chapter 2"))
    second = json.loads(ok(run_folio("show", "Ides Volume 2", "--json")))

    turn = json.loads(ok(run_folio("chat", "Ides Volume 2", "-m", "Who is Brutus?", "--json")))

    cited = [c for c in turn["citations"] if c["volume"] == "Ides Volume 1"]
    assert cited and all(c["book_id"] for c in cited), turn
    assert any(int(c["page_start"]) > second["pages"] for c in cited)  # past volume 2's pages
    for c in cited:
        place = f"(Ides Volume 1, {c['chapter']}, p. {c['page_start']})"
        assert f'"{c["quote"]}" {place}' in turn["answer"]  # the bullet names the chip's page
        page = ok(run_folio("read", "Ides Volume 1", "--page", c["page_start"]))
        assert c["quote"] in " ".join(page.split()), (c, page[:300])


def test_mcp_passages_from_an_earlier_volume_name_it_and_its_own_pages(
    run_folio: RunFolio, e2e_home: Path, tmp_path: Path
) -> None:
    from tests.e2e.test_mcp import data, run, stdio

    ok(run_folio("add", str(_volume(tmp_path, 1, "Brutus", 12)), "--position", "whole"))
    ok(run_folio("add", str(_volume(tmp_path, 2, "Cassius", 2)), "--position", "Chapter 2"))

    async def scenario(client: Any) -> Any:
        query = {"book": "Ides Volume 2", "query": "Brutus stood by column 11.3", "k": 5}
        return data(await client.call_tool("search_book", query))

    found = run(scenario, stdio(e2e_home))["results"]
    earlier = [p for p in found if p.get("volume") == "Ides Volume 1"]
    assert earlier and all(p["book_id"] for p in earlier), found
    assert any(int(p["page_start"]) > 5 for p in earlier)  # volume 2 has 5 pages
    for passage in earlier[:3]:
        first, last = int(passage["page_start"]), int(passage["page_end"])
        pages = ok(run_folio("read", "Ides Volume 1", "--page", str(first),
                             "--pages", str(last - first + 1)))  # fmt: skip
        said = re.findall(r"Brutus stood by column \d+\.\d+", passage["text"])
        assert said and all(s in " ".join(pages.split()) for s in said), (passage, said)
