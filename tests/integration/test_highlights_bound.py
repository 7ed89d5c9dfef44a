"""The setting ``max_highlights_mb`` bounds a highlights file wherever folio reads one: the
composition root gives it to the readers (the CLI's import and the API's alike), so a file over
it is refused naming the bound, and one under it is read (real SQLite, a Kindle clippings file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.highlights import HighlightError

ENTRY = """The Keeper (Anonymous)
- Your Highlight on page 1 | Location 1-2 | Added on Friday, 20 November 2026 21:14:03

The keeper wound the clock before the storm came in.
==========
"""


def _container(tmp_path: Path, **env: str) -> Container:
    home = {"FOLIO_HOME": str(tmp_path / "home"), "FOLIO_EMBEDDING_MODEL": "hashing"}
    return Container(load_settings(env={**home, **env}))


def test_a_highlights_file_is_bounded_by_its_setting(tmp_path: Path) -> None:
    clippings = tmp_path / "My Clippings.txt"
    clippings.write_text(ENTRY * 20, encoding="utf-8")  # about 3.6 KB
    small = _container(tmp_path, FOLIO_MAX_HIGHLIGHTS_MB="0.002")  # 2,097 bytes
    assert small.settings.max_highlights_bytes < clippings.stat().st_size
    with pytest.raises(HighlightError, match=r"My Clippings\.txt is larger than 0\.002 MB"):
        small.highlights.import_file(clippings)

    report = _container(tmp_path).highlights.import_file(clippings)  # 20 MB by default
    assert report.unmatched == ("The Keeper (Anonymous)",)
