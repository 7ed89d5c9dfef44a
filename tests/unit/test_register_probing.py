"""KOReader's Register tells an existing login ("already registered") from an unknown one
("registration is disabled"), without a key check: an address that tries names there is counted
as one that tries them at Login, so that it cannot list the server's sync logins without limit."""

from __future__ import annotations

import pytest

from folio.app.login_limits import FailedLogins
from folio.app.sync import device_key
from folio.domain.sync import SyncError, SyncErrorCode
from tests.unit.test_failed_logins import Ticks, _sync


def test_registering_unknown_names_counts_against_the_address() -> None:
    sync = _sync(FailedLogins(per_login=100, per_address=3, window_s=600, clock=Ticks()))
    for name in ("mallory", "eve", "trent"):
        with pytest.raises(SyncError) as caught:
            sync.register({"username": name, "password": device_key("x")}, address="192.0.2.1")
        assert caught.value.code is SyncErrorCode.REGISTRATION_DISABLED

    for attempt in ("bob", "alice"):  # the next name, even an existing one, is not answered
        with pytest.raises(SyncError) as caught:
            sync.register({"username": attempt, "password": device_key("x")}, address="192.0.2.1")
        assert caught.value.code is SyncErrorCode.RATE_LIMITED
    # another address still registers its own login
    right = {"username": "alice", "password": device_key("correct horse")}
    assert sync.register(right, address="192.0.2.2") == "alice"
