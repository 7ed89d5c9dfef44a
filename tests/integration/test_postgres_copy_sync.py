"""``folio db copy`` carries what matches a KOReader push beyond its exact file (SQLite 017,
PostgreSQL 011): an EPUB's structure digest, and a kept push's description (its file's name,
title and authors, and the digests it named), so that the PostgreSQL library matches pushes as the
local one did. Real SQLite and a real PostgreSQL server (pgserver), through the composition
root."""

from __future__ import annotations

from pathlib import Path

from folio.adapters.parsers.koreader_ids import epub_structure_md5
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.users import LOCAL_USER_ID
from tests.postgres_support import PgTestServer
from tests.unit.test_sync_matching import _described_push, _epub


def test_db_copy_keeps_the_structure_digests_and_a_pushs_description(
    pg_server: PgTestServer, tmp_path: Path
) -> None:
    env = {"FOLIO_HOME": str(tmp_path / "local"), "FOLIO_EMBEDDING_MODEL": "hashing"}
    local = Container(load_settings(env=env))
    epub = _epub(tmp_path, title="Keeper")
    book = local.ingest.execute(epub).book
    metadata = {"filename": "keeper.epub", "title": "The Keeper", "authors": "Doe, Jane"}
    waiting = _described_push(0.5, "0.5", metadata=metadata, identifiers={"structure": "b" * 32})
    local.progress_sync.push(LOCAL_USER_ID, waiting)  # names no book of the library: kept
    kept = local.progress_sync.pull(LOCAL_USER_ID, "0" * 32)
    assert kept is not None and kept.described.title == "The Keeper"

    url = pg_server.database("copy_sync")
    _, copied = local.copy_library_to(url)
    assert copied["books"] == 1
    shared = Container(load_settings(env={**env, "FOLIO_DATABASE_URL": url}))
    try:
        assert shared.progress_sync.pull(LOCAL_USER_ID, "0" * 32) == kept
        # a copy of the EPUB that Calibre rewrote (another file digest, the same structure)
        rewritten = {"structure": epub_structure_md5(epub)}
        push = {**_described_push(0.5, "0.5", identifiers=rewritten), "document": "1" * 32}
        shared.progress_sync.push(LOCAL_USER_ID, push)
        moved = shared.library.get(book.id).position
        assert "matched by the EPUB's identifier and spine" in (moved.source or "")
    finally:
        shared.close()
        local.close()
