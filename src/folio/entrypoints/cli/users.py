"""``folio users``: the users of ``folio serve`` and their bearer tokens."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from folio.entrypoints.cli.errors import handle_errors


@click.group("users")
def users_group() -> None:
    """Users of the HTTP API. Once one exists, every request needs a bearer token.

    \b
    folio users add alice        # prints alice's token once
    folio users list
    folio users rotate alice     # a new token; the old one stops working
    folio users rm alice
    folio users sync-password alice   # KOReader's progress sync login (asks the password)
    """


@users_group.command("add")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def add_cmd(lazy: Any, name: str, as_json: bool) -> None:
    """Create user NAME and print its bearer token (shown only now; stored as a hash)."""
    user, token = lazy.get().users.add(name)
    if as_json:
        click.echo(json.dumps({"id": user.id, "name": user.name, "token": token}))
        return
    click.echo(f"Created user {user.name}. Its token (shown only once):", err=True)
    click.echo(token)


@users_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def list_cmd(lazy: Any, as_json: bool) -> None:
    """List users (never their tokens)."""
    users = lazy.get().users.list()
    if as_json:
        data = [{"id": u.id, "name": u.name, "created_at": u.created_at.isoformat()} for u in users]
        click.echo(json.dumps(data, indent=2))
        return
    if not users:
        click.echo("No users: `folio serve` runs as the local user, on loopback only.")
    for u in users:
        click.echo(f"{u.name:24} created {u.created_at:%Y-%m-%d %H:%M} UTC  id {u.id[:8]}")


@users_group.command("rm")
@click.argument("name")
@click.pass_obj
@handle_errors
def rm_cmd(lazy: Any, name: str) -> None:
    """Remove user NAME: its token stops working; its books and conversations stay stored but
    no other user can see them."""
    user = lazy.get().users.remove(name)
    click.echo(f"Removed user {user.name}.")


@users_group.command("rotate")
@click.argument("name")
@click.pass_obj
@handle_errors
def rotate_cmd(lazy: Any, name: str) -> None:
    """Give NAME a new token (printed once); the old one stops working at once."""
    click.echo(lazy.get().users.rotate(name))


@users_group.command("sync-password")
@click.argument("login")
@click.pass_obj
@handle_errors
def sync_password_cmd(lazy: Any, login: str) -> None:
    """Set the progress sync password of folio user LOGIN, for KOReader and Readest (Settings >
    Progress sync > Custom sync server: this server's URL; then Login with LOGIN and this
    password). While no user exists, LOGIN becomes the local user's sync login. The password is
    asked for (read from stdin when piped) and stored only as a scrypt hash."""
    if sys.stdin.isatty():
        password = click.prompt(
            "Sync password", hide_input=True, confirmation_prompt=True, err=True
        )
    else:  # piped: the first line is the password (no echo to hide, nothing to confirm)
        password = sys.stdin.readline().rstrip("\r\n")
    whose = lazy.get().progress_sync.set_login(login, password)
    click.echo(f"Sync login {login.strip()} set for {whose}.", err=True)
