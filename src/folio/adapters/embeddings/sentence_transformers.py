"""Embeddings from any sentence-transformers model the user configured (torch; slower to start).

For models other than the packaged default: a local model directory, or a model already in the local
Hugging Face cache. Nothing is ever downloaded. sentence-transformers and torch are not part of the
runtime install (the ``sentence-transformers`` extra brings them); without them such a model is a
``ConfigError`` that says what to install.

Invariants: the constructor only checks (cheaply, without torch) that the model exists locally and
raises ``ConfigError`` otherwise; torch and the model are loaded on first use; ``embed()`` returns
float32 L2-normalised rows in input order.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from folio.domain.errors import ConfigError, EmbeddingError
from folio.domain.ports import Vectors


def resolve_local_model(model_name_or_path: str) -> str:
    """The path or cached hub id to load ``model_name_or_path`` from, without any network access.

    Accepts a model directory, a hub id in the local Hugging Face cache (``org/name``), or a bare
    name that sentence-transformers would expand to ``sentence-transformers/<name>``.
    Raises ``ConfigError`` when none of these exists on this machine.
    """
    if not model_name_or_path.strip():
        raise ConfigError("No embedding model configured (the name is empty).")
    path = Path(model_name_or_path).expanduser()
    if path.is_dir():
        if (path / "modules.json").is_file() or (path / "config.json").is_file():
            return str(path.resolve())
        raise ConfigError(
            f"Embedding model directory {path} has no modules.json or config.json; "
            "it is not a sentence-transformers model."
        )
    for repo_id in _hub_candidates(model_name_or_path):
        if _in_local_hf_cache(repo_id):
            return repo_id
    raise ConfigError(
        f"Embedding model {model_name_or_path!r} was not found offline: it is neither a model "
        "directory nor in the local Hugging Face cache. Use 'all-MiniLM-L6-v2' (packaged), "
        "'hashing', or the path of a sentence-transformers model directory."
    )


def _hub_candidates(name: str) -> list[str]:
    if name.count("/") == 1 and not name.startswith(("/", ".", "~")):
        return [name]
    if "/" not in name and name:
        return [f"sentence-transformers/{name}", name]
    return []


def _in_local_hf_cache(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # no Hugging Face libraries installed: no cache to look in
        return False

    for filename in ("modules.json", "config.json"):
        try:
            found = try_to_load_from_cache(repo_id, filename)
        except ValueError:  # not a valid repo id
            return False
        if isinstance(found, str):
            return True
    return False


class SentenceTransformerEmbedder:
    """A sentence-transformers model run with torch, loaded lazily on first use."""

    def __init__(self, model_name_or_path: str, *, batch_size: int = 32) -> None:
        self._source = resolve_local_model(model_name_or_path)
        if importlib.util.find_spec("sentence_transformers") is None:
            raise ConfigError(
                f"Embedding model {model_name_or_path!r} runs on sentence-transformers and torch,"
                " which are not installed: pip install 'folio-reader[sentence-transformers]', or"
                " use the packaged 'all-MiniLM-L6-v2'."
            )
        self._batch_size = batch_size
        self._model: Any = None

    @property
    def name(self) -> str:
        return self._source

    @property
    def dimensions(self) -> int:
        """Loads the model (the dimension is a property of its last module)."""
        dimensions = self._load().get_embedding_dimension()
        if dimensions is None:
            raise ConfigError(f"Embedding model {self._source!r} does not declare its dimension.")
        return int(dimensions)

    @property
    def relevance_floor(self) -> float:
        """Another model's scale is unknown: any positive cosine may answer."""
        return 0.0

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        model = self._load()
        try:
            vectors = model.encode(
                list(texts),
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except (RuntimeError, ValueError) as e:  # torch errors are RuntimeErrors
            raise EmbeddingError(f"Embedding with {self._source!r} failed: {e}") from e
        return np.asarray(vectors, dtype=np.float32)

    def _load(self) -> Any:
        if self._model is None:
            # Read by huggingface_hub at import: no download even if something asks for one.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            try:
                self._model = SentenceTransformer(self._source, local_files_only=True, device="cpu")
            except (OSError, ValueError) as e:
                raise ConfigError(f"Cannot load embedding model {self._source!r}: {e}") from e
        return self._model
