"""A limit on failed sync logins, per login and per client address.

After ``per_login`` failures of one login, or ``per_address`` failures from one client address,
within ``window_s`` seconds of the first of them, further attempts are refused until the window
has passed, without checking their key: a refused attempt costs no scrypt. A success resets its
login's count (not its address's: one right password does not buy an address more guesses).

Memory stays bounded whatever a flood sends: each table keeps at most ``max_entries`` counts and
drops the least recently failed first. Only logins that exist are counted per login (an unknown
login costs no key check, and counting it would let random names push real logins' counts out),
so the login table holds at most one count per sync account.

The counts live in this process: with ``folio serve --workers N`` each worker counts its own, so
a login gets at most N times its limit before every worker refuses it.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_PER_LOGIN = 10
DEFAULT_PER_ADDRESS = 30
DEFAULT_WINDOW_S = 15 * 60.0
DEFAULT_MAX_ENTRIES = 10_000


@dataclass(slots=True)
class _Count:
    since: float  # when the window's first failure happened
    failures: int


class _Window:
    """Failures per key within a fixed window that starts at the key's first failure; at most
    ``max_entries`` keys, least recently failed dropped first."""

    def __init__(self, limit: int, window_s: float, max_entries: int) -> None:
        self.limit = limit
        self.window_s = window_s
        self.max_entries = max_entries
        self._counts: OrderedDict[str, _Count] = OrderedDict()

    def wait(self, key: str, now: float) -> float:
        """Seconds before ``key`` may try again (0: now)."""
        count = self._counts.get(key)
        if count is None:
            return 0.0
        left = count.since + self.window_s - now
        if left <= 0:
            del self._counts[key]
            return 0.0
        return left if count.failures >= self.limit else 0.0

    def fail(self, key: str, now: float) -> None:
        count = self._counts.get(key)
        if count is None or count.since + self.window_s <= now:
            count = self._counts[key] = _Count(now, 0)
        count.failures += 1
        self._counts.move_to_end(key)
        while len(self._counts) > self.max_entries:
            self._counts.popitem(last=False)

    def reset(self, key: str) -> None:
        self._counts.pop(key, None)

    def __len__(self) -> int:
        return len(self._counts)


class FailedLogins:
    """The failed-login limit (see the module docstring). Thread-safe: key checks run in worker
    threads."""

    def __init__(
        self,
        *,
        per_login: int = DEFAULT_PER_LOGIN,
        per_address: int = DEFAULT_PER_ADDRESS,
        window_s: float = DEFAULT_WINDOW_S,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logins = _Window(per_login, window_s, max_entries)
        self._addresses = _Window(per_address, window_s, max_entries)
        self._clock = clock
        self._lock = threading.Lock()

    def retry_after(self, login: str | None, address: str | None) -> int:
        """Whole seconds before a login attempt of ``login`` from ``address`` may be checked
        (0: it may be now)."""
        now = self._clock()
        with self._lock:
            waits = [
                self._logins.wait(login, now) if login else 0.0,
                self._addresses.wait(address, now) if address else 0.0,
            ]
        return math.ceil(max(waits))

    def failed(self, login: str | None, address: str | None) -> None:
        """Count a failed attempt: against ``login`` (pass ``None`` for a login that does not
        exist) and against ``address``."""
        now = self._clock()
        with self._lock:
            if login:
                self._logins.fail(login, now)
            if address:
                self._addresses.fail(address, now)

    def succeeded(self, login: str) -> None:
        with self._lock:
            self._logins.reset(login)

    def sizes(self) -> tuple[int, int]:
        """How many logins and addresses are counted now (memory stays bounded by
        ``max_entries`` each)."""
        with self._lock:
            return len(self._logins), len(self._addresses)
