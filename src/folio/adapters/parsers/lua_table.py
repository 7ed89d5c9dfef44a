"""Read the Lua data file KOReader writes (``return { ... }``, from its ``dump.lua``) without
running Lua: a parser of literal values only (tables, strings, numbers, booleans, nil).

The PyPI parsers for this (``slpp``, ``luadata``) have not been released since 2020/2021 and
do not handle every escape ``string.format("%q")`` writes (``\\`` + newline, ``\\ddd``); this
small reader does, and refuses anything that is not a literal (a call, a variable, an
operator) with a ``ValueError`` naming the offset.

Invariant: nothing is evaluated; nesting deeper than ``MAX_DEPTH`` is refused.
"""

from __future__ import annotations

import re
from typing import Any

MAX_DEPTH = 64
_NUMBER = re.compile(r"-?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
_NAME = re.compile(r"[A-Za-z_]\w*")
_SKIP = re.compile(r"(?:\s+|--(?!\[=*\[)[^\n]*)+")  # whitespace and line comments
_LONG_COMMENT = re.compile(r"--\[(=*)\[")  # --[[ ... ]] or --[==[ ... ]==]
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
            "\\": "\\", '"': '"', "'": "'", "\n": "\n"}  # fmt: skip


def loads(text: str) -> Any:
    """The value of a Lua data file: an optional ``return`` then one literal. Tables become
    dicts (keys as written: ``[1]`` an int, ``["a"]`` and ``a`` a str)."""
    parser = _Parser(text)
    parser.skip()
    if parser.text.startswith("return", parser.at):
        parser.at += len("return")
    value = parser.value(0)
    parser.skip()
    if parser.at != len(text):
        parser.fail("text after the value")
    return value


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def fail(self, what: str) -> None:
        raise ValueError(f"not a Lua data file: {what} at offset {self.at}")

    def skip(self) -> None:
        """Past whitespace and comments; a long comment's end is found once (an unterminated one
        is refused, not searched for again from each later line)."""
        while True:
            m = _SKIP.match(self.text, self.at)
            if m:
                self.at = m.end()
            m = _LONG_COMMENT.match(self.text, self.at)
            if m is None:
                return
            close = f"]{m.group(1)}]"
            end = self.text.find(close, m.end())
            if end < 0:
                self.fail("an unterminated comment")
            self.at = end + len(close)

    def value(self, depth: int) -> Any:
        self.skip()
        ch = self.text[self.at : self.at + 1]
        if ch == "{":
            return self.table(depth + 1)
        if ch in {'"', "'"}:
            return self.string(ch)
        m = _NUMBER.match(self.text, self.at)
        if m:
            self.at = m.end()
            raw = m.group()
            if raw.lstrip("-").lower().startswith("0x"):
                return int(raw, 16)
            return float(raw) if any(c in raw for c in ".eE") else int(raw)
        m = _NAME.match(self.text, self.at)
        literals = {"true": True, "false": False, "nil": None}
        if m and m.group() in literals:
            self.at = m.end()
            return literals[m.group()]
        self.fail("expected a literal value")

    def table(self, depth: int) -> dict[Any, Any]:
        if depth > MAX_DEPTH:
            self.fail(f"tables nested deeper than {MAX_DEPTH}")
        self.at += 1
        out: dict[Any, Any] = {}
        index = 1
        while True:
            self.skip()
            if self.text.startswith("}", self.at):
                self.at += 1
                return out
            key = self.key(depth)
            if key is None:
                key, index = index, index + 1
            out[key] = self.value(depth)
            self.skip()
            if self.text[self.at : self.at + 1] in {",", ";"}:
                self.at += 1
            elif not self.text.startswith("}", self.at):
                self.fail("expected ',' or '}'")

    def key(self, depth: int) -> Any:
        """A ``[expr] =`` or ``name =`` key, or None for a positional value."""
        start = self.at
        if self.text.startswith("[", self.at) and not self.text.startswith("[[", self.at):
            self.at += 1
            key = self.value(depth)
            if key is None or isinstance(key, dict):
                self.fail("a nil or table key")  # Lua refuses nil; a table is no dict key
            self.skip()
            if not self.text.startswith("]", self.at):
                self.fail("expected ']'")
            self.at += 1
            self.expect_equals()
            return key
        m = _NAME.match(self.text, self.at)
        if m and m.group() not in {"true", "false", "nil"}:
            self.at = m.end()
            self.skip()
            if self.text.startswith("=", self.at):
                self.at += 1
                return m.group()
            self.at = start
            self.fail("a name that is not a key")
        return None

    def expect_equals(self) -> None:
        self.skip()
        if not self.text.startswith("=", self.at):
            self.fail("expected '='")
        self.at += 1

    def string(self, quote: str) -> str:
        self.at += 1
        out: list[str] = []
        text = self.text
        while self.at < len(text):
            ch = text[self.at]
            if ch == quote:
                self.at += 1
                return "".join(out)
            if ch == "\n":
                self.fail("a line break inside a string")
            if ch != "\\":
                out.append(ch)
                self.at += 1
                continue
            nxt = text[self.at + 1 : self.at + 2]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                self.at += 2
            elif nxt.isdigit():
                digits = re.match(r"\d{1,3}", text[self.at + 1 : self.at + 4])
                assert digits is not None
                if int(digits.group()) > 255:
                    self.fail("a decimal escape above 255")
                out.append(chr(int(digits.group())))
                self.at += 1 + len(digits.group())
            else:
                self.fail("an unknown escape")
        self.fail("an unterminated string")
        return ""
