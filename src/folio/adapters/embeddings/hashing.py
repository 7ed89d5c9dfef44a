"""A deterministic, dependency-free embedder (feature hashing of words and word pairs).

Fast and good enough for tests, demos on tiny machines, and as a fallback; not a semantic model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from folio.domain.ports import Vectors

_WORD = re.compile(r"\w+")


class HashingEmbedder:
    def __init__(self, dimensions: int = 256) -> None:
        self._dimensions = dimensions

    @property
    def name(self) -> str:
        return f"hashing-{self._dimensions}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    @property
    def relevance_floor(self) -> float:
        """Hashed words and word pairs: a positive cosine means a shared word or pair."""
        return 0.0

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self._dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            words = [w.lower() for w in _WORD.findall(text)]
            for feature in words + [f"{a} {b}" for a, b in pairwise(words)]:
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self._dimensions] += 1.0 if value & (1 << 63) else -1.0
            norm = float(np.linalg.norm(out[row]))
            if norm:
                out[row] /= norm
        return out
