"""The limit on failed sync logins: per login and per client address, in a window, refused
without a key check (no scrypt), reset by a success, and bounded in memory whatever a flood
sends."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from folio.app.login_limits import FailedLogins
from folio.app.sync import ProgressSync, device_key
from folio.domain.sync import SyncError, SyncErrorCode
from tests.unit.test_progress_sync import Clock, Owners, Users


class Ticks:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _sync(limits: FailedLogins) -> ProgressSync:
    from folio.adapters.storage.memory.books import InMemoryLibrary
    from folio.adapters.storage.memory.sync import InMemorySyncStore

    def identify(*_: Any) -> Any:
        raise OSError

    sync = ProgressSync(InMemorySyncStore(), Users("alice"), InMemoryLibrary(), Owners(),
                        identify, clock=Clock(), failed_logins=limits)  # fmt: skip
    sync.set_login("alice", "correct horse")
    return sync


@pytest.fixture
def scrypts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many scrypt key derivations ran (the cost a flood must not buy)."""
    calls: list[int] = []
    real = hashlib.scrypt

    def counted(*args: Any, **kwargs: Any) -> bytes:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(hashlib, "scrypt", counted)
    return calls


def test_a_login_over_its_limit_is_refused_without_a_key_check(scrypts: list[int]) -> None:
    ticks = Ticks()
    sync = _sync(FailedLogins(per_login=3, per_address=100, window_s=900, clock=ticks))
    for n in range(3):
        with pytest.raises(SyncError) as caught:
            sync.authenticate("alice", device_key(f"guess {n}"), address="10.0.0.9")
        assert caught.value.code is SyncErrorCode.UNAUTHORIZED
    checked = len(scrypts)

    for key in (device_key("guess 4"), device_key("correct horse")):  # even the right one
        with pytest.raises(SyncError) as caught:
            sync.authenticate("alice", key, address="10.0.0.7")
        assert caught.value.code is SyncErrorCode.RATE_LIMITED
        assert caught.value.details["retry_after"] == 900
    assert len(scrypts) == checked

    ticks.now += 900  # the window has passed
    assert sync.authenticate("alice", device_key("correct horse")) == "id-alice"


def test_an_address_over_its_limit_is_refused_for_every_login() -> None:
    ticks = Ticks()
    sync = _sync(FailedLogins(per_login=100, per_address=4, window_s=600, clock=ticks))
    for name in ("alice", "mallory", "eve", "trent"):  # unknown logins count per address too
        with pytest.raises(SyncError):
            sync.authenticate(name, device_key("guess"), address="192.0.2.1")
    ticks.now += 60

    with pytest.raises(SyncError) as caught:
        sync.authenticate("alice", device_key("correct horse"), address="192.0.2.1")
    assert caught.value.code is SyncErrorCode.RATE_LIMITED
    assert caught.value.details["retry_after"] == 540
    assert "try again in 9 min" in caught.value.message
    # another address is not held back
    assert sync.authenticate("alice", device_key("correct horse"), address="192.0.2.2")


def test_a_success_resets_the_logins_count() -> None:
    sync = _sync(FailedLogins(per_login=3, per_address=100, clock=Ticks()))
    for _ in range(2):
        for n in range(2):
            with pytest.raises(SyncError):
                sync.authenticate("alice", device_key(f"typo {n}"))
        assert sync.authenticate("alice", device_key("correct horse")) == "id-alice"

    assert sync.authenticate("alice", device_key("correct horse")) == "id-alice"


def test_a_wrong_password_at_register_counts_as_a_failed_login() -> None:
    sync = _sync(FailedLogins(per_login=2, per_address=100, clock=Ticks()))
    for _ in range(2):
        with pytest.raises(SyncError) as caught:
            sync.register({"username": "alice", "password": device_key("guess")})
        assert caught.value.code is SyncErrorCode.USER_EXISTS

    with pytest.raises(SyncError) as caught:
        sync.register({"username": "alice", "password": device_key("correct horse")})
    assert caught.value.code is SyncErrorCode.RATE_LIMITED


def test_memory_stays_bounded_under_a_flood_of_addresses_and_names() -> None:
    limits = FailedLogins(per_login=5, per_address=5, max_entries=100, clock=Ticks())
    sync = _sync(limits)
    for n in range(1000):
        with pytest.raises(SyncError):
            sync.authenticate(f"name{n}", "0" * 32, address=f"10.1.{n // 250}.{n % 250}")

    logins, addresses = limits.sizes()
    assert logins == 0  # unknown names are not counted per login
    assert addresses == 100


def test_random_names_do_not_push_a_real_logins_count_out() -> None:
    ticks = Ticks()
    limits = FailedLogins(per_login=3, per_address=10_000, max_entries=50, clock=ticks)
    sync = _sync(limits)
    for n in range(3):
        with pytest.raises(SyncError):
            sync.authenticate("alice", device_key(f"guess {n}"))
    for n in range(500):
        with pytest.raises(SyncError):
            sync.authenticate(f"name{n}", device_key("guess"))

    assert limits.retry_after("alice", None) > 0
