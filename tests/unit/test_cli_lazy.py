"""`folio --help` imports no command: each is imported when it runs, and the help lists them with
the summaries their own docstrings give."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from folio.entrypoints.cli.main import COMMANDS, cli


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_lazy_command_is_the_one_its_summary_describes(name: str) -> None:
    command = cli.load(name)

    assert command.name == name
    assert command.get_short_help_str(1000) == COMMANDS[name][1]


def test_the_help_lists_every_command_with_its_summary_cut_to_the_line() -> None:
    help_text = cli.get_help(click.Context(cli, info_name="folio"))

    for name in [*COMMANDS, "config"]:
        assert f"\n  {name} " in help_text
    assert "Print the effective settings (API keys and database..." in help_text


def test_help_and_version_import_no_command_rich_or_settings() -> None:
    code = (
        "import sys\n"
        "from folio.entrypoints.cli.main import main\n"
        "sys.argv = ['folio', '--help']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('rich', 'pydantic', 'pydantic_settings', 'numpy', 'folio.bootstrap',\n"
        "         'folio.config', 'folio.entrypoints.cli.books', 'folio.entrypoints.cli.chat')\n"
        "print([m for m in heavy if m in sys.modules], file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )

    assert "Commands:" in result.stdout
    assert result.stderr.strip() == "[]"
