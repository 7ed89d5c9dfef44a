"""Where PostgreSQL's exact vector scan runs: a pgvector build for AVX-512 on a CPU without it
must not be asked to compute distances (it stops the server), so ``folio db start`` says to scan
in folio there."""

from __future__ import annotations

from pathlib import Path

import pytest

from folio.adapters.storage.postgres.server import vector_scan_for_this_cpu
from folio.config import load_settings
from folio.domain.errors import ConfigError


def _cpuinfo(tmp_path: Path, flags: str) -> Path:
    path = tmp_path / "cpuinfo"
    path.write_text(f"processor\t: 0\nmodel name\t: CPU\nflags\t\t: {flags}\n\n", encoding="utf-8")
    return path


def test_a_cpu_without_avx512_scans_in_folio(tmp_path: Path) -> None:
    assert vector_scan_for_this_cpu(_cpuinfo(tmp_path, "fpu sse4_2 avx avx2 fma")) == "client"


def test_a_cpu_with_avx512_uses_pgvectors_operator(tmp_path: Path) -> None:
    flags = "fpu avx2 avx512f avx512dq avx512bw"
    assert vector_scan_for_this_cpu(_cpuinfo(tmp_path, flags)) == "database"


def test_no_cpuinfo_keeps_pgvectors_operator(tmp_path: Path) -> None:
    assert vector_scan_for_this_cpu(tmp_path / "absent") == "database"


def test_the_setting_takes_only_the_two_modes(tmp_path: Path) -> None:
    env = {"FOLIO_HOME": str(tmp_path), "FOLIO_PG_VECTOR_SCAN": "client"}
    assert load_settings(env=env).pg_vector_scan == "client"
    assert load_settings(env={"FOLIO_HOME": str(tmp_path)}).pg_vector_scan == "database"
    with pytest.raises(ConfigError, match="FOLIO_PG_VECTOR_SCAN"):
        load_settings(env={**env, "FOLIO_PG_VECTOR_SCAN": "gpu"})
