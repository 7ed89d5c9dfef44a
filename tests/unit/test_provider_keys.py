"""A provider without its key says so before its SDK is imported (importing ``anthropic`` alone
takes over a second): the reader's first mistake gets its answer at once."""

from __future__ import annotations

import subprocess
import sys

import pytest

CODE = """
import sys
from folio.config import load_settings
from folio.bootstrap import make_provider
from folio.domain.errors import LLMError
try:
    make_provider(load_settings(env={"FOLIO_HOME": sys.argv[2]}), name=sys.argv[1])
except LLMError as e:
    print(e.code.name, sys.argv[1] in sys.modules, str(e))
"""


@pytest.mark.parametrize(
    ("provider", "variable"), [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")]
)
def test_a_missing_key_is_reported_without_loading_the_sdk(
    provider: str, variable: str, tmp_path: object
) -> None:
    pytest.importorskip(provider)
    done = subprocess.run(
        [sys.executable, "-c", CODE, provider, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    code, loaded, message = done.stdout.strip().split(" ", 2)
    assert (code, loaded) == ("AUTH", "False"), done.stderr
    assert variable in message
