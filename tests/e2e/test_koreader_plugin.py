"""The KOReader plugin (``koreader/folio.koplugin``) under LuaJIT.

- Its busted specs (KOReader's UI modules stubbed in ``spec/stubs``: what each dialog would show
  is recorded and asserted as text) run under Debian's ``luajit``.

They skip with the reason when ``luajit``, ``busted``, ``lua-socket`` or ``lua-cjson`` is missing
(``.ci/run`` installs them).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "koreader" / "folio.koplugin"


def _missing_lua() -> str | None:
    """Why the Lua side cannot run here, or None."""
    for tool in ("luajit", "busted"):
        if shutil.which(tool) is None:
            return f"needs {tool} (Debian: apt-get install luajit lua-busted)"
    probe = subprocess.run(
        ["luajit", "-e", "require('cjson'); require('socket.http'); require('ltn12')"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        return f"needs lua-cjson and lua-socket for LuaJIT: {probe.stderr.strip()[:200]}"
    return None


@pytest.fixture(scope="module")
def lua() -> None:
    reason = _missing_lua()
    if reason:
        pytest.skip(reason)


def test_plugin_specs_pass_under_luajit(lua: None) -> None:
    run = subprocess.run(
        ["busted", "--lua=luajit", "--output=TAP"],
        cwd=PLUGIN,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    passed = re.findall(r"^ok \d+", run.stdout, re.MULTILINE)
    assert not re.search(r"^not ok", run.stdout, re.MULTILINE)
    # the specs themselves: client, view, plugin (menus, dialogs, jumps, messages, settings)
    assert len(passed) >= 35, run.stdout
