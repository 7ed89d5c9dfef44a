"""Wrong-key sync logins flooding a real ``folio serve``: what they cost the server.

Setup (in a fresh interpreter running the code under test): a library with two users, each with
a KOReader sync login. Load: ``--requests`` ``GET /users/auth`` with a real login and a random
key, from ``--clients`` threads at once, while one more client asks ``/api/v1/health`` every
50 ms. Reported: the answers' statuses, how many were refused by the failed-login limit without a
key check (a ``Retry-After`` header: 401 on ``/users/auth``, which KOReader's Login shows, 429 on
the progress routes), the server's resident memory before and after (``/proc``), its growth, the
health check's latency p50/p99 during the flood, and how long the flood took. Loopback only,
bounded in requests and time; the server is stopped by the script. ``--path push`` floods
``PUT /syncs/progress`` instead.

    .venv/bin/python benchmarks/bench_login_flood.py [--requests 400] [--clients 64]
        [--code /path/to/another/src] [--label before] [--path auth|push]

Goals (issue 36): growth under 100 MB, health p99 under 200 ms.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.api_server import FolioServer  # noqa: E402

SETUP = r"""
import sys
from pathlib import Path
from folio.bootstrap import Container
from folio.config import load_settings

home = Path(sys.argv[1])
env = {"FOLIO_HOME": str(home), "FOLIO_EMBEDDING_MODEL": "hashing"}
container = Container(load_settings(env=env))
for name in ("alice", "bob"):
    container.users.add(name)
    container.progress_sync.set_login(name, "a long sync password")
container.close()
"""
DEADLINE_S = 300.0


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run(code: str | None, label: str, requests: int, clients: int, path: str = "auth") -> None:
    env = dict(os.environ)
    if code:
        env["PYTHONPATH"] = code
    with tempfile.TemporaryDirectory(prefix="folio-flood-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        subprocess.run([sys.executable, "-c", SETUP, str(home)], env=env, check=True,
                       timeout=300)  # fmt: skip
        extra = {"FOLIO_PROVIDER": "offline", "FOLIO_EMBEDDING_MODEL": "hashing"}
        if code:
            extra["PYTHONPATH"] = code
        server = FolioServer(home, env=extra).start()
        try:
            assert server.process is not None
            pid = server.process.pid
            before = rss_mb(pid)
            health: list[float] = []
            done = threading.Event()

            def probe() -> None:
                with httpx.Client(base_url=server.url, timeout=30) as client:
                    while not done.is_set():
                        started = time.perf_counter()
                        client.get("/api/v1/health")
                        health.append((time.perf_counter() - started) * 1000)
                        time.sleep(0.05)

            left = iter(range(requests))
            lock = threading.Lock()
            statuses: dict[int, int] = {}
            limited = [0]
            deadline = time.monotonic() + DEADLINE_S

            def flood() -> None:
                with httpx.Client(base_url=server.url, timeout=120) as client:
                    while time.monotonic() < deadline:
                        with lock:
                            if next(left, None) is None:
                                return
                        headers = {"x-auth-user": "alice", "x-auth-key": secrets.token_hex(16),
                                   "accept": "application/vnd.koreader.v1+json"}  # fmt: skip
                        if path == "push":
                            body = {"document": "0" * 32, "progress": "1", "percentage": 0.1,
                                    "device": "bench", "device_id": "b"}  # fmt: skip
                            r = client.put("/syncs/progress", json=body, headers=headers)
                        else:
                            r = client.get("/users/auth", headers=headers)
                        with lock:
                            statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
                            limited[0] += "retry-after" in r.headers

            prober = threading.Thread(target=probe)
            prober.start()
            started = time.perf_counter()
            threads = [threading.Thread(target=flood) for _ in range(clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            took = time.perf_counter() - started
            done.set()
            prober.join()
            after = rss_mb(pid)
            p50 = statistics.median(health)
            p99 = sorted(health)[max(0, int(len(health) * 0.99) - 1)]
            print(f"{label}: {requests} wrong-key logins ({path}) from {clients} clients in "
                  f"{took:.1f} s (statuses {statuses}, {limited[0]} refused by the failed-login "
                  f"limit with Retry-After); server RSS {before:.0f} -> {after:.0f} MB "
                  f"(+{after - before:.0f}); health during it p50 {p50:.0f} ms, p99 {p99:.0f} ms "
                  f"({len(health)} checks)", flush=True)  # fmt: skip
        finally:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--code", help="source folder of the folio to measure")
    parser.add_argument("--label", default="HEAD")
    parser.add_argument("--path", choices=("auth", "push"), default="auth")
    args = parser.parse_args()
    run(args.code, args.label, min(args.requests, 5000), min(args.clients, 256), args.path)


if __name__ == "__main__":
    main()
