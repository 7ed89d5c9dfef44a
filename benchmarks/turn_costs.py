"""What a conversation's requests cost under each vendor's prompt caching, computed from the
requests a fake model recorded (``ScriptedChatProvider.calls``): tokens are estimated as
characters / 4, prefixes compared message by message.

- Anthropic (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching, "Pricing"):
  only prefixes ending at a ``cache_control`` breakpoint are cached (5-minute cache, at least 1024
  tokens for Sonnet); a cache write costs 1.25x the base input price, a cache read 0.1x. folio marks
  two breakpoints (after tools + system, and at the reader's latest question); ``breakpoints=False``
  models a request without any (folio before prompt caching).
- OpenAI (https://platform.openai.com/docs/guides/prompt-caching; https://openai.com/api/pricing/):
  automatic for prompts of 1024 tokens or more, in 128-token steps of the longest prefix seen
  before; no write premium; cached input of gpt-4o-mini (folio's default OpenAI model) costs half
  the base price ($0.075 vs $0.15 per million).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from folio.adapters.llm.scripted import RecordedCall
from folio.domain.llm import PromptRole

ANTHROPIC_WRITE, ANTHROPIC_READ = 1.25, 0.10
OPENAI_READ = 0.50
MIN_CACHED = 1024


@dataclass
class Cost:
    raw: int = 0  # every input token sent
    read: int = 0  # served from the cache
    write: int = 0  # written to the cache (Anthropic only)

    @property
    def uncached(self) -> int:
        return self.raw - self.read - self.write

    def effective(self, *, write_price: float, read_price: float) -> float:
        """Input tokens weighted by their price relative to an uncached input token."""
        return self.uncached + write_price * self.write + read_price * self.read

    def __iadd__(self, other: Cost) -> Cost:
        self.raw, self.read, self.write = (
            self.raw + other.raw,
            self.read + other.read,
            self.write + other.write,
        )
        return self


def _prefixes(call: RecordedCall) -> list[tuple[str, int, bool]]:
    """(hash of the request up to and including message i, its tokens, is a folio breakpoint)."""
    digest = hashlib.sha256(
        repr(sorted((t.name, t.description) for t in call.tools or ())).encode()
    )
    chars = sum(len(t.description) + len(str(t.parameters)) for t in call.tools or ())
    out = []
    last = max((i for i, m in enumerate(call.messages) if m.role is PromptRole.USER), default=-1)
    for i, m in enumerate(call.messages):
        digest.update(repr(m).encode())
        chars += len(m.content) + 8
        chars += sum(len(str(dict(c.arguments))) + len(c.tool_name) for c in m.tool_invocations)
        out.append((digest.hexdigest(), (chars + 3) // 4, m.role is PromptRole.SYSTEM or i == last))
    return out


def anthropic_costs(calls: Sequence[RecordedCall], *, breakpoints: bool) -> list[Cost]:
    cache: set[str] = set()
    costs = []
    for call in calls:
        prefixes = _prefixes(call)
        raw = prefixes[-1][1]
        if not breakpoints:
            costs.append(Cost(raw))
            continue
        read = max((tokens for h, tokens, _ in prefixes if h in cache), default=0)
        marks = [(h, tokens) for h, tokens, mark in prefixes if mark and tokens >= MIN_CACHED]
        cache.update(h for h, _ in marks)
        write = max(0, marks[-1][1] - read) if marks else 0
        costs.append(Cost(raw, read, write))
    return costs


def openai_costs(calls: Sequence[RecordedCall]) -> list[Cost]:
    seen: set[str] = set()
    costs = []
    for call in calls:
        prefixes = _prefixes(call)
        raw = prefixes[-1][1]
        hit = max((tokens for h, tokens, _ in prefixes if h in seen), default=0)
        read = hit // 128 * 128 if hit >= MIN_CACHED else 0
        seen.update(h for h, _, _ in prefixes)
        costs.append(Cost(raw, read))
    return costs
