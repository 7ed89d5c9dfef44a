"""Secrets out of what people see: database URLs and the error texts that repeat them.

A PostgreSQL URL carries its password as ``user:password@host`` or as ``?password=...``; libpq's
own errors may repeat it (raw or percent-decoded). ``redact_url`` shows a URL without it and
``scrub`` removes it from any text; a URL too malformed to parse is hidden whole.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

MASK = "***"


def _passwords(url: str) -> list[str]:
    try:
        parts = urlsplit(url)
        found = [parts.password] if parts.password else []
    except ValueError:
        return []
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k == "password" and v]
    raw = [p for p in found if p]
    return sorted({*raw, *(unquote(p) for p in raw)} - {""}, key=len, reverse=True)


def redact_url(url: str) -> str:
    """``url`` without its password (in the user part or the query)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return f"{url.split(':', 1)[0]}://{MASK}"
    netloc = parts.netloc
    if password:
        netloc = netloc.replace(f":{password}@", f":{MASK}@", 1)
    query = parts.query
    if "password" in query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, MASK if k == "password" else v) for k, v in pairs], safe="/:*")
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def scrub(text: str, url: str) -> str:
    """``text`` (an error message) with every form of ``url``'s password replaced by ``***``."""
    for secret in _passwords(url):
        text = text.replace(secret, MASK)
    return text
