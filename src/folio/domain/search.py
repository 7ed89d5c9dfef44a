"""Search results as the index returns them, before the app adds page labels and snippets."""

from __future__ import annotations

from dataclasses import dataclass

from folio.domain.books import Chunk


@dataclass(frozen=True, slots=True)
class RankedChunk:
    chunk: Chunk  # already cut at the reading position
    score: float  # fused score, higher is better
    lexical_rank: int | None = None  # 1-based rank in the lexical list, None when absent there
    vector_rank: int | None = None
    similarity: float | None = None  # cosine similarity of the query and chunk vectors, when computed
