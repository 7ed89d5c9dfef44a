"""A click group whose subcommands are imported only when one of them runs, so that ``folio --help``
and a command import what that command needs and nothing else (rich, pydantic, the storage
adapters and the HTTP stack cost more than a second on a loaded machine when imported up front).

Invariant: the one-line summary given for each command here is the one its own docstring gives
(``tests/unit/test_cli_lazy.py`` checks every one), so ``folio --help`` says what loading them
would say.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

import click

# name -> ("module:attribute", one-line summary shown by `folio --help`)
LazyCommands = Mapping[str, tuple[str, str]]


class LazyGroup(click.Group):
    def __init__(
        self,
        *args: object,
        lazy_commands: LazyCommands,
        on_load: Callable[[click.Command], None] | None = None,
        **kwargs: object,
    ) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy_commands = dict(lazy_commands)
        self._on_load = on_load

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy_commands:
            self.add_command(self.load(cmd_name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def load(self, name: str) -> click.Command:
        """Import the command ``name`` (the import path it was registered with)."""
        module_name, attribute = self.lazy_commands[name][0].split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{module_name}:{attribute} is not a click command")
        if self._on_load is not None:
            self._on_load(command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Click's own listing, with the summaries above for commands not imported yet."""
        rows: list[tuple[str, click.Command]] = []
        for name in self.list_commands(ctx):
            # help=, not short_help=: click cuts it to the line as it cuts a docstring.
            command = self.commands.get(name) or click.Command(
                name, help=self.lazy_commands[name][1]
            )
            if not command.hidden:
                rows.append((name, command))
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, c.get_short_help_str(limit)) for name, c in rows])
