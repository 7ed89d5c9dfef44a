"""``folio serve``: the HTTP API (and the web page) on uvicorn."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

import click

from folio.entrypoints.cli.errors import handle_errors

LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
WILDCARDS = {"0.0.0.0", "::", ""}


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64))
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
    help="The least severe log lines written (info: a line per request, turn, tool, model call).",
)
@click.option(
    "--log-format",
    default="text",
    show_default=True,
    type=click.Choice(["json", "text"]),
    help="Log lines on stderr as JSON objects (one per line) or as text.",
)
@click.pass_obj
@handle_errors
def serve_cmd(
    lazy: Any, host: str, port: int, workers: int, log_level: str, log_format: str
) -> None:
    """Serve the HTTP API (OpenAPI docs at /docs, routes under /api/v1, Prometheus metrics at
    /metrics).

    Without users the server runs as the local single user and binds loopback only (unless
    FOLIO_REQUIRE_TOKENS=1: then only a sync login gets in, e.g. an e-reader's); with users
    (`folio users add NAME`) every request needs a bearer token, until the server stops (removing
    the last user does not open it); /metrics too (or the FOLIO_METRICS_TOKEN setting's). It
    answers to loopback names, any IP address (an e-reader on the LAN at http://192.168.1.5:8000),
    the names in FOLIO_ALLOWED_HOSTS (comma-separated), and, bound to all addresses (--host
    0.0.0.0), this machine's own names (its host name, NAME.local): other Host names get 421.
    Each response has an X-Request-ID that its log lines name.

    \b
    folio serve --port 8000
    curl -s localhost:8000/api/v1/books
    """
    import os
    import shutil
    import tempfile

    from folio.bootstrap import requires_extra

    with requires_extra("server", "folio serve"):
        import fastapi  # noqa: F401 - the workers import it; say what is missing here, once
        import pythonjsonlogger  # noqa: F401
        import uvicorn

        from folio.adapters.observability.logs import logging_config
        from folio.adapters.observability.metrics import MULTIPROC_ENV

    container = lazy.get()
    container.database  # noqa: B018 - migrate once here, before the workers start
    banner = serving_banner(container, f"http://{_url_host(host)}:{port}/")
    # Imports run in the server's threads: those of a previous server stopped with it.
    container.import_jobs.fail_unfinished("The server stopped during the import; upload it again")
    no_users = not container.users.any()
    container.close()  # the workers open their own connections; this process only waits
    if not is_loopback(host) and no_users and not container.settings.require_tokens:
        raise click.UsageError(
            f"Refusing to bind {host}: without users anyone who can reach it could read every "
            "book and conversation. Bind 127.0.0.1, create a user first (`folio users add NAME`), "
            "or set FOLIO_REQUIRE_TOKENS=1 (then only a token or a sync login gets in)"
        )
    say = _announcer(log_format, log_level)
    say(banner)
    # The app is built by the server (one per worker process) from the environment: hand it the
    # data directory this command resolved (``--home`` included), the address it binds as a name
    # it answers to, and the auth mode fixed now (with users at start, tokens for good).
    settings = container.settings
    os.environ["FOLIO_HOME"] = str(settings.home)
    own = machine_names() if host in WILDCARDS else []
    names = [*settings.allowed_hosts, *([] if host in WILDCARDS else [host]), *own]
    os.environ["FOLIO_ALLOWED_HOSTS"] = ",".join(dict.fromkeys(names))
    if not no_users:
        os.environ["FOLIO_REQUIRE_TOKENS"] = "1"
    if host in WILDCARDS:
        say(
            f"Answering to this machine's IP addresses and names ({', '.join(own) or 'none'})"
            " and to FOLIO_ALLOWED_HOSTS (set it to any other name clients use, e.g. folio.example)"
        )
    # Every worker writes its metrics into this folder, and /metrics sums them (prometheus_client's
    # multiprocess mode); set before any worker imports prometheus_client, removed at the end.
    metrics_dir = tempfile.mkdtemp(prefix="folio-metrics-")
    os.environ[MULTIPROC_ENV] = metrics_dir
    try:
        uvicorn.run(
            "folio.entrypoints.api.app:create_app",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            log_level=log_level,
            log_config=logging_config("json" if log_format == "json" else "text", log_level),
            timeout_graceful_shutdown=10,
            access_log=log_level == "debug",
        )
    finally:
        shutil.rmtree(metrics_dir, ignore_errors=True)


def machine_names() -> list[str]:
    """This machine's own names, as a device on its network may reach it: its host name and the
    ``.local`` name mDNS gives it (those a Host header can hold). No DNS lookup: a machine on a
    LAN without a resolver would wait for it at every start."""
    import re
    import socket

    name = socket.gethostname().strip().lower()
    found = [name, f"{name.split('.')[0]}.local"] if name else []
    dns_name = re.compile(r"[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?")
    return [n for n in dict.fromkeys(found) if dns_name.fullmatch(n) and n != "localhost"]


def _announcer(log_format: str, log_level: str) -> Callable[[str], None]:
    """How the server says what it does before it serves: text on stderr for a person, or, with
    JSON logs, a log line like every other (so that stderr holds nothing but JSON)."""
    if log_format != "json":
        return lambda message: click.echo(message, err=True)
    import logging
    import logging.config

    from folio.adapters.observability.logs import logging_config

    logging.config.dictConfig(logging_config("json", log_level))
    return logging.getLogger("folio.serve").info


def serving_banner(container: Any, url: str) -> str:
    """What ``folio serve`` says it is running: the page's address, the provider and model that
    answer, and the database that holds the library."""
    s = container.serving()
    return (
        f"folio is serving the page on {url}  (API: {url}api/v1, docs: {url}docs)\n"
        f"  provider: {s['provider']} (model: {s['model']})\n"
        f"  database: {s['database']} {s['location']}\n"
        "Ctrl-C stops it"
    )


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
