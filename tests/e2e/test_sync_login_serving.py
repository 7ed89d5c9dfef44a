"""One reader, their own library, their e-reader on the LAN, as the README's progress sync section
says: the sync login set while no user exists is the local user's (the library of ``folio add``),
and ``FOLIO_REQUIRE_TOKENS=1 folio serve --host 0.0.0.0`` serves it on the network without
creating a user: every request then needs a login (a bearer token, or that sync login), so
nothing is open. Without ``FOLIO_REQUIRE_TOKENS`` the bind is still refused."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import httpx
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import demo_book_home, folio_env, ok, run_folio_in

PASSWORD = "a reading password"
KEY = hashlib.md5(PASSWORD.encode(), usedforsecurity=False).hexdigest()
KOREADER = {"accept": "application/vnd.koreader.v1+json", "x-auth-user": "alice", "x-auth-key": KEY}


def test_a_local_sync_login_serves_the_cli_library_on_the_network(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    home = demo_book_home(tmp_path_factory, "sync-login-serving")
    ok(run_folio_in(home, "users", "sync-password", "alice", input=PASSWORD + "\n"))
    refused = subprocess.run(
        [sys.executable, "-m", "folio.entrypoints.cli.main", "serve", "--host", "0.0.0.0"],
        env=folio_env(home), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert refused.returncode != 0
    assert "FOLIO_REQUIRE_TOKENS=1" in refused.stderr
    args = ("--host", "0.0.0.0", "--log-level", "warning")
    env = {"FOLIO_REQUIRE_TOKENS": "1"}
    with (
        FolioServer(home, args=args, env=env) as server,
        httpx.Client(base_url=server.url, timeout=30) as c,
    ):
        assert c.get("/api/v1/books").status_code == 401
        assert c.get("/opds/recent").status_code == 401
        assert c.get("/metrics").status_code == 401
        assert c.get("/users/auth", headers={**KOREADER, "x-auth-key": "0" * 32}).status_code == 401
        assert c.get("/users/auth", headers=KOREADER).status_code == 200
        feed = c.get("/opds/recent", auth=("alice", PASSWORD))
        assert feed.status_code == 200
        assert "Frankenstein" in feed.text  # the CLI's book: the local user's library
