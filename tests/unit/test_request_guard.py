"""The request guard's decisions (Host, Origin, body bounds) and the server's fixed auth mode,
without a server: the same functions the middleware calls."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.datastructures import Headers

from folio.app.users import Users
from folio.config import load_settings
from folio.domain.users import LOCAL_USER_ID, UserError
from folio.entrypoints.api.guard import RequestGuard, body_bound, host_name, parsed_as_json


def _guard(tmp_path: Path, **env: str) -> RequestGuard:
    settings = load_settings({"FOLIO_HOME": str(tmp_path), **env})
    return RequestGuard(lambda *a: None, settings=settings, authenticate=lambda h: "local")  # type: ignore[arg-type]


def _refusal(guard: RequestGuard, method: str, **headers: str) -> int | None:
    found = guard.refusal(method, Headers({k.replace("_", "-"): v for k, v in headers.items()}))
    return None if found is None else found[0]


def test_host_names_drop_the_port_and_brackets() -> None:
    assert host_name("127.0.0.1:8000") == "127.0.0.1"
    assert host_name("[::1]:8000") == "::1"
    assert host_name("LOCALHOST") == "localhost"
    assert host_name("evil.example:80") == "evil.example"


def test_only_loopback_and_configured_names_are_served(tmp_path: Path) -> None:
    guard = _guard(tmp_path, FOLIO_ALLOWED_HOSTS="folio.example, 192.168.1.5")
    assert _refusal(guard, "GET", host="127.0.0.1:8000") is None
    assert _refusal(guard, "GET", host="[::1]:8000") is None
    assert _refusal(guard, "GET", host="folio.example") is None
    assert _refusal(guard, "GET", host="192.168.1.5:8000") is None
    assert _refusal(guard, "GET", host="evil.example") == 421
    assert _refusal(guard, "GET", host="") == 421


def test_an_ip_address_is_served_as_no_name_was_rebound(tmp_path: Path) -> None:
    """A browser sends an address as Host only when it connected to that address: an e-reader
    on the LAN, a forwarded port. A page there may call its own server; a page elsewhere not."""
    guard = _guard(tmp_path)
    assert _refusal(guard, "GET", host="192.168.1.5:8000") is None
    assert _refusal(guard, "GET", host="[fe80::1]:8000") is None
    assert _refusal(guard, "GET", host="192.168.1.5.evil.example") == 421
    lan = {"host": "192.168.1.5:8000", "origin": "http://192.168.1.5:8000"}
    assert _refusal(guard, "POST", content_type="text/plain", **lan) is None
    assert _refusal(guard, "GET", host="192.168.1.5:8000", origin="http://192.168.1.9:8000") == 403


def test_form_and_text_bodies_only_from_the_page_itself(tmp_path: Path) -> None:
    guard = _guard(tmp_path)
    own = {"host": "127.0.0.1:8000", "origin": "http://127.0.0.1:8000"}
    assert _refusal(guard, "POST", content_type="text/plain", **own) is None
    assert _refusal(guard, "POST", content_type="multipart/form-data; boundary=x", **own) is None
    other_port = {"host": "127.0.0.1:8000", "origin": "http://localhost:3000"}
    assert _refusal(guard, "POST", content_type="text/plain", **other_port) == 403
    assert _refusal(guard, "POST", content_type="application/json", **other_port) is None
    assert _refusal(guard, "GET", host="127.0.0.1", origin="http://evil.example") == 403
    assert _refusal(guard, "POST", host="127.0.0.1", origin="null") == 403
    # no browser: no Origin, no Sec-Fetch-Site
    assert _refusal(guard, "POST", host="127.0.0.1", content_type="text/plain") is None
    assert _refusal(guard, "DELETE", host="127.0.0.1", sec_fetch_site="cross-site") == 403


def test_each_route_has_its_body_bound_named_by_its_setting(tmp_path: Path) -> None:
    settings = load_settings({"FOLIO_HOME": str(tmp_path)})
    upload = body_bound(settings, "POST", "/api/v1/books")
    assert upload.limit > settings.max_book_bytes and "max_book_mb" in upload.message
    assert "max_import_mb" in body_bound(settings, "POST", "/api/v1/conversations/import").message
    small = load_settings({"FOLIO_HOME": str(tmp_path), "FOLIO_MAX_HIGHLIGHTS_MB": "2"})
    highlights = body_bound(small, "POST", "/api/v1/highlights/import")
    assert small.max_highlights_bytes == 2 * 1024 * 1024 < highlights.limit < 3 * 1024 * 1024
    assert "at most 2 MB (setting max_highlights_mb)" in highlights.message
    turn = body_bound(settings, "POST", "/api/v1/conversations/abc/messages")
    assert turn.limit < 100 * 1024 and "max_message_chars" in turn.message
    assert body_bound(settings, "POST", "/api/v1/chat").limit == turn.limit
    for path in ("/v1/chat/completions", "/mcp/", "/syncs/progress", "/api/v1/anything"):
        assert body_bound(settings, "PUT", path).limit == settings.max_request_bytes


def test_json_is_checked_for_json_text_and_untyped_bodies() -> None:
    assert parsed_as_json("application/json; charset=utf-8")
    assert parsed_as_json("application/vnd.koreader.v1+json")
    assert parsed_as_json("text/plain") and parsed_as_json(None)
    assert not parsed_as_json("multipart/form-data; boundary=x")


class _FakeUsers:
    def __init__(self, count: int) -> None:
        self.n = count

    def count(self) -> int:
        return self.n

    def get_by_token_hash(self, token_hash: str) -> None:
        return None


def test_a_server_that_has_seen_users_never_opens_again() -> None:
    store = _FakeUsers(1)
    users = Users(store)  # type: ignore[arg-type]
    with pytest.raises(UserError):
        users.authenticate(None)
    store.n = 0  # the last user removed
    with pytest.raises(UserError):
        users.authenticate(None)


def test_require_tokens_holds_without_any_user() -> None:
    users = Users(_FakeUsers(0))  # type: ignore[arg-type]
    assert users.authenticate(None) == LOCAL_USER_ID
    users.require_tokens()
    with pytest.raises(UserError):
        users.authenticate(None)


def test_allowed_hosts_reject_what_is_not_a_name(tmp_path: Path) -> None:
    from folio.domain.errors import ConfigError

    with pytest.raises(ConfigError, match="allowed_hosts"):
        load_settings({"FOLIO_HOME": str(tmp_path), "FOLIO_ALLOWED_HOSTS": "http://x/ y"})
