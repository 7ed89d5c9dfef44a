"""Embedders (implementations of the ``Embedder`` port) and the factory that picks one by name.

Importing this package is cheap: onnxruntime, tokenizers (and torch, for a sentence-transformers
model) are imported only when a model is first used, so commands that never embed do not pay for
them.
"""

from __future__ import annotations

import re
from pathlib import Path

from folio.adapters.embeddings.hashing import HashingEmbedder
from folio.adapters.embeddings.onnx import (
    INT8_SUFFIX,
    KNOWN_VECTORS_FILE,
    MODEL_NAME,
    OnnxEmbedder,
    packaged_model_dir,
)
from folio.adapters.embeddings.sentence_transformers import SentenceTransformerEmbedder
from folio.domain.errors import ConfigError
from folio.domain.ports import Embedder

DEFAULT_MODEL = MODEL_NAME
_HASHING = re.compile(r"hashing-[1-9][0-9]*")
MAX_HASHING_DIMENSIONS = 4096
_PACKAGED_NAMES = frozenset({MODEL_NAME, f"sentence-transformers/{MODEL_NAME}"})
_PACKAGED_INT8 = frozenset(name + INT8_SUFFIX for name in _PACKAGED_NAMES)

__all__ = [
    "DEFAULT_MODEL",
    "HashingEmbedder",
    "OnnxEmbedder",
    "SentenceTransformerEmbedder",
    "make_embedder",
]


def make_embedder(name: str, *, cache_dir: Path) -> Embedder:
    """The embedder configured by ``name``.

    - ``"all-MiniLM-L6-v2"`` (default; also ``"sentence-transformers/all-MiniLM-L6-v2"``): the
      ONNX model shipped in this package, on onnxruntime; the bundled demo book's passages have
      their vectors shipped beside it, so the demo's first import computes none.
    - ``"all-MiniLM-L6-v2-int8"``: the same model with its weights dynamically quantised to int8
      (per channel) once into ``cache_dir`` (needs the ``int8`` extra): faster on a CPU, vectors
      at cosine ~0.99.
    - ``"hashing"`` (or ``"hashing-<dimensions>"``, its ``name``): the dependency-free hashing
      embedder (tests, tiny machines).
    - anything else: a sentence-transformers model directory or a model in the local Hugging Face
      cache, run with torch (the ``sentence-transformers`` extra).

    Raises ``ConfigError`` when the model cannot be found on this machine (nothing is downloaded).
    """
    key = name.strip()
    if key in _PACKAGED_NAMES:
        model_dir = packaged_model_dir()
        return OnnxEmbedder(model_dir, cache_dir, known_vectors=model_dir / KNOWN_VECTORS_FILE)
    if key in _PACKAGED_INT8:
        return OnnxEmbedder(packaged_model_dir(), cache_dir, int8=True)
    if key == "hashing":
        return HashingEmbedder()
    if _HASHING.fullmatch(key):
        dimensions = int(key.removeprefix("hashing-"))
        if dimensions > MAX_HASHING_DIMENSIONS:
            raise ConfigError(
                f"Embedding model {key!r}: at most {MAX_HASHING_DIMENSIONS} dimensions"
                f" (got {dimensions})"
            )
        return HashingEmbedder(dimensions)
    return SentenceTransformerEmbedder(key)
