"""Calibre's search language over a Calibre library's books, the part folio supports.

Supported, with Calibre's meaning (checked against ``calibredb search`` on a real library):

- ``field:value`` with field ``title``, ``author(s)``, ``series``, ``tag(s)`` or
  ``identifier(s)`` (``identifiers:isbn:978...``); a bare word or ``"quoted phrase"`` looks in
  the title and the authors. A value "contains" (case-insensitive), or is ``=exact``,
  ``~regular expression`` (Python's, case-insensitive), ``true`` (the field has a value) or
  ``false`` (it has none): ``series:false``, ``identifiers:isbn:true``.
- ``and`` (also implied between terms), ``or``, ``not`` (or a leading ``-``) and parentheses;
  ``and`` binds tighter than ``or``, as in Calibre.

Anything else is refused with ``CalibreError(INVALID_SEARCH)`` naming what is supported (another
field such as ``formats:`` or ``#genre:``, an unbalanced parenthesis, a dangling ``or``, an invalid
regular expression): a search never silently matches nothing because folio misread it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from folio.domain.calibre import CalibreBook, CalibreError, CalibreErrorCode

MAX_SEARCH_CHARS = 500
MAX_NESTING = 20
FIELDS = {
    "title": "title",
    "author": "authors",
    "authors": "authors",
    "series": "series",
    "tag": "tags",
    "tags": "tags",
    "identifier": "identifiers",
    "identifiers": "identifiers",
}
SUPPORTED = (
    'title:, author:, series:, tag:, identifier:, bare words, "phrases"; values as text,'
    " =exact, ~regex, true or false; and, or, not, -, parentheses"
)
_FIELD_PREFIX = re.compile(r"#?[A-Za-z_][\w]*$")


class Match(StrEnum):
    CONTAINS = "contains"
    EXACT = "exact"
    REGEX = "regex"
    PRESENT = "true"
    ABSENT = "false"


@dataclass(frozen=True, slots=True)
class SearchTerm:
    """One ``field:value`` term; ``field`` None looks in the title and the authors."""

    field: str | None
    value: str
    match: Match = Match.CONTAINS
    scheme: str | None = None  # identifiers: the scheme named (``isbn``), else any
    pattern: re.Pattern[str] | None = None

    def matches(self, book: CalibreBook) -> bool:
        values = self._values(book)
        if self.match is Match.PRESENT:
            return bool(values)
        if self.match is Match.ABSENT:
            return not values
        return any(self._same(v) for v in values)

    def _values(self, book: CalibreBook) -> tuple[str, ...]:
        if self.field == "identifiers":
            if self.scheme is None:
                return tuple(book.identifiers)
            found = {k.casefold(): v for k, v in book.identifiers.items()}
            return (found[self.scheme],) if self.scheme in found else ()
        if self.field == "title":
            return (book.title,)
        if self.field == "authors":
            return book.authors
        if self.field == "series":
            return (book.series,) if book.series else ()
        if self.field == "tags":
            return book.tags
        return (book.title, *book.authors)

    def _same(self, have: str) -> bool:
        if self.pattern is not None:
            return self.pattern.search(have) is not None
        if self.match is Match.EXACT:
            return have.casefold() == self.value.casefold()
        return self.value.casefold() in have.casefold()


@dataclass(frozen=True, slots=True)
class Not:
    part: Search

    def matches(self, book: CalibreBook) -> bool:
        return not self.part.matches(book)


@dataclass(frozen=True, slots=True)
class AllOf:
    parts: tuple[Search, ...] = ()

    def matches(self, book: CalibreBook) -> bool:
        return all(p.matches(book) for p in self.parts)


@dataclass(frozen=True, slots=True)
class AnyOf:
    parts: tuple[Search, ...]

    def matches(self, book: CalibreBook) -> bool:
        return any(p.matches(book) for p in self.parts)


Search = SearchTerm | Not | AllOf | AnyOf


@dataclass(frozen=True, slots=True)
class _Token:
    text: str
    quoted: bool = False  # the token began with a quote: a phrase, never a keyword or a field

    @property
    def keyword(self) -> str | None:
        folded = self.text.casefold()
        return folded if not self.quoted and folded in {"and", "or", "not", "(", ")"} else None


def parse_search(query: str) -> Search:
    """The search ``query`` means (see the module docstring); an empty query matches every book.

    Raises:
        CalibreError: ``INVALID_SEARCH``, naming what folio supports.
    """
    if len(query) > MAX_SEARCH_CHARS:
        raise _invalid(f"A Calibre search has at most {MAX_SEARCH_CHARS} characters")
    parser = _Parser(list(_tokens(query)), query)
    found = parser.expression()
    if parser.rest is not None:
        raise _invalid(f"Unexpected {parser.rest.text!r} in the search {query!r}")
    return found


def matches_all(book: CalibreBook, search: Search) -> bool:
    return search.matches(book)


class _Parser:
    """Recursive descent: ``or`` of ``and`` of (``not``) terms or parenthesised searches."""

    def __init__(self, tokens: list[_Token], query: str) -> None:
        self._tokens = tokens
        self._at = 0
        self._query = query
        self._depth = 0

    @property
    def rest(self) -> _Token | None:
        return self._tokens[self._at] if self._at < len(self._tokens) else None

    def _take(self) -> _Token:
        token = self._tokens[self._at]
        self._at += 1
        return token

    def expression(self) -> Search:
        parts = [self._all()]
        while self.rest is not None and self.rest.keyword == "or":
            self._take()
            parts.append(self._all(after="or"))
        return parts[0] if len(parts) == 1 else AnyOf(tuple(parts))

    def _all(self, after: str | None = None) -> Search:
        parts: list[Search] = []
        while self.rest is not None and self.rest.keyword not in {"or", ")"}:
            if self.rest.keyword == "and":
                self._take()
                after = "and"
                continue
            parts.append(self._unary())
            after = None
        if after is not None:
            raise _invalid(f"Nothing to search after {after!r} in {self._query!r}")
        if not parts and self.rest is not None:
            raise _invalid(f"Nothing to search before {self.rest.text!r} in {self._query!r}")
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))

    def _unary(self) -> Search:
        token = self._take()
        if token.keyword == "not":
            if self.rest is None or self.rest.keyword in {"or", "and", ")"}:
                raise _invalid(f"Nothing to search after 'not' in {self._query!r}")
            return Not(self._unary())
        if token.keyword == "(":
            self._depth += 1
            if self._depth > MAX_NESTING:
                raise _invalid(f"A search nests at most {MAX_NESTING} parentheses deep")
            inner = self.expression()
            self._depth -= 1
            if self.rest is None or self.rest.keyword != ")":
                raise _invalid(f"A parenthesis is not closed in {self._query!r}")
            self._take()
            return inner
        return _term(token)


def _tokens(query: str) -> Iterator[_Token]:
    """Words, quoted phrases (a quote may open mid-word: ``series:"The Moons"``) and
    parentheses outside quotes."""
    i, n = 0, len(query)
    while i < n:
        char = query[i]
        if char.isspace():
            i += 1
        elif char in "()":
            yield _Token(char)
            i += 1
        else:
            start, text = i, []
            while i < n and not query[i].isspace() and query[i] not in "()":
                if query[i] == '"':
                    end = query.find('"', i + 1)
                    if end < 0:
                        raise _invalid(f"A quote is not closed in {query!r}")
                    text.append(query[i + 1 : end])
                    i = end + 1
                else:
                    text.append(query[i])
                    i += 1
            yield _Token("".join(text), quoted=query[start] == '"')


def _term(token: _Token) -> Search:
    word = token.text
    if token.quoted:
        return _valued(None, word, quoted=True)
    stripped = word.lstrip("-")
    if stripped and stripped != word:  # -tag:x excludes; each leading "-" negates once more
        inner = _term(_Token(stripped))
        return Not(inner) if (len(word) - len(stripped)) % 2 else inner
    name, colon, value = word.partition(":")
    if not colon:
        return _valued(None, word)
    if name.casefold() in FIELDS:
        fld = FIELDS[name.casefold()]
        if fld == "identifiers":
            return _identifier(value)
        return _valued(fld, value)
    if _FIELD_PREFIX.match(name):
        raise _invalid(f"Unknown search field {name + ':'!r}; folio searches {SUPPORTED}")
    return _valued(None, word)


def _identifier(value: str) -> SearchTerm:
    scheme, colon, wanted = value.partition(":")
    if not colon:  # identifiers:isbn (the scheme is there), identifiers:true / false
        if scheme.casefold() in {"true", "false"}:
            return SearchTerm("identifiers", "", Match(scheme.casefold()))
        return SearchTerm("identifiers", "", Match.PRESENT, scheme=scheme.casefold())
    term = _valued("identifiers", wanted)
    return SearchTerm(
        term.field, term.value, term.match, scheme=scheme.casefold(), pattern=term.pattern
    )


def _valued(fld: str | None, value: str, *, quoted: bool = False) -> SearchTerm:
    if not value:
        raise _invalid(f"{fld or 'A term'}: has no value to search for; folio searches {SUPPORTED}")
    if quoted:
        return SearchTerm(fld, value)
    if fld is not None and value.casefold() in {"true", "false"}:
        return SearchTerm(fld, "", Match(value.casefold()))
    if value.startswith("="):
        return SearchTerm(fld, value[1:], Match.EXACT)
    if value.startswith("~"):
        try:
            pattern = re.compile(value[1:], re.IGNORECASE)
        except re.error as e:
            raise _invalid(f"{value[1:]!r} is not a regular expression ({e})") from e
        return SearchTerm(fld, value[1:], Match.REGEX, pattern=pattern)
    return SearchTerm(fld, value)


def _invalid(message: str) -> CalibreError:
    return CalibreError(message, code=CalibreErrorCode.INVALID_SEARCH)
