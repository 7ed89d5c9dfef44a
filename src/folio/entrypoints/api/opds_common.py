"""What both OPDS versions (Atom, ``opds_atom``; JSON, ``opds_json``) share: the acquisition
relation, the text every title and link is cleaned to (characters XML 1.0 cannot carry dropped),
the timestamp format, and the catalogue's navigation entries and group listings."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

ACQUISITION = "application/atom+xml;profile=opds-catalog;kind=acquisition"
ACQUIRE = "http://opds-spec.org/acquisition"

_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def clean(text: str) -> str:
    return _NOT_XML.sub("", text)


def stamp(moment: datetime | None) -> str:
    """``moment`` (now when unknown) in UTC, as both versions write a time."""
    return (moment or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Listing:
    """Where a group's books are listed (``path?name=...``), its ids' ``key``, the title of the
    group without a name."""

    path: str
    key: str
    unnamed: str


@dataclass(frozen=True, slots=True)
class Nav:
    """A navigation entry: a subsection of the catalogue."""

    key: str  # its id's last part
    title: str
    summary: str
    href: str
    kind: str = ACQUISITION
    rel: str = "subsection"
