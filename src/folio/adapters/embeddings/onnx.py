"""The default embedder: all-MiniLM-L6-v2 run on onnxruntime, from the ONNX file in this package.

The model ships ready to run (``minilm/model.onnx``, ``minilm/tokenizer.json``): it was exported
once by the maintainers (``scripts/export_onnx.py``, with torch) and is only read here, with
onnxruntime and the ``tokenizers`` library; nothing is exported or downloaded on a reader's machine.

Invariants:
- ``name`` and ``dimensions`` never load the model; the session is created on the first ``embed()``;
- ``embed()`` returns float32 rows, L2-normalised, in the order of the input texts;
- texts whose vectors ship with the model (``minilm/known_vectors.npz``: the bundled demo book's
  passages, written by ``scripts/known_vectors.py``) are looked up, not computed, by the float32
  model whose sha256 and window they were computed with; any other table is ignored;
- the int8 variant is quantised once from the shipped file into ``cache_dir``, named by that
  file's sha256 (so every checkout and virtualenv shares it); it is complete or absent: written
  under a file lock to a temporary name, checked against float32, then atomically renamed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from folio.domain.errors import ConfigError, EmbeddingError
from folio.domain.ports import Vectors

_log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
INT8_SUFFIX = "-int8"
DIMENSIONS = 384
# The cosine of a question and a sentence (this model) at or under which the sentence is taken as
# not answering it. benchmarks/bench_relevance_floor.py, 400 dev turns: 49.5% of the sentences
# holding the answer score above it, 2.2% of unrelated sentences (at 0.25: 61.0% and 7.0%).
RELEVANCE_FLOOR = 0.3
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
KNOWN_VECTORS_FILE = "known_vectors.npz"
# Vectors of the texts embedded last, kept by text (about 1.6 KB each, 6.5 MB in all): the turns of
# a conversation quote from the same passages and search with the same words again. Replaying 52
# CoQA turns embeds 937 questions and sentences, 239 of them distinct.
RECENT_VECTORS = 4096


def packaged_model_dir() -> Path:
    """The directory of the shipped ONNX model and its tokenizer. Raises ``ConfigError`` when the
    files are missing (a broken install)."""
    model_dir = Path(__file__).resolve().with_name("minilm")
    for name in (MODEL_FILE, TOKENIZER_FILE, "manifest.json"):
        if not (model_dir / name).is_file():
            raise ConfigError(
                f"The packaged embedding model is incomplete ({model_dir / name} is missing);"
                " reinstall folio or set FOLIO_EMBEDDING_MODEL=hashing."
            )
    return model_dir


class OnnxEmbedder:
    """Sentence embeddings from a BERT-style sentence-transformers model directory (mean pooling,
    normalised), run with onnxruntime. A text found in the table of known vectors, or among the
    ``recent_vectors`` texts embedded last, is not computed again: its vector is the one computed
    then, in another batch (equal to float rounding, about 1e-7)."""

    def __init__(
        self,
        model_dir: Path,
        cache_dir: Path,
        *,
        max_length: int = 256,
        batch_size: int = 32,
        threads: int | None = None,
        int8: bool = False,
        spinning: bool = False,
        known_vectors: Path | None = None,
        recent_vectors: int = RECENT_VECTORS,
    ) -> None:
        self._model_dir = Path(model_dir)
        self._int8 = int8
        self._cache_dir = Path(cache_dir)
        self._max_length = max_length
        self._batch_size = batch_size
        self._threads = threads
        self._spinning = spinning  # onnxruntime's busy-waiting threads (off: see _open_session)
        self._known_path = None if int8 else known_vectors
        self._known: dict[bytes, np.ndarray] | None = None
        self._recent: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._recent_size = recent_vectors
        self._recent_lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._counter: Any = None  # an untruncated tokenizer, for counting
        self._load_lock = threading.Lock()  # the HTTP server may embed from several threads

    @property
    def name(self) -> str:
        return MODEL_NAME + (INT8_SUFFIX if self._int8 else "")

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    @property
    def relevance_floor(self) -> float:
        return RELEVANCE_FLOOR

    @property
    def onnx_path(self) -> Path:
        """Where the graph this embedder runs lives: the shipped file, or its int8 copy in the
        model cache (named by the shipped file's hash, so a new model never reuses an old copy)."""
        shipped = self._model_dir / MODEL_FILE
        if not self._int8:
            return shipped
        return self._cache_dir / f"{MODEL_NAME}-{_shipped_sha256(self._model_dir)[:12]}.int8.onnx"

    @property
    def is_prepared(self) -> bool:
        """True when the first ``embed()`` has nothing to make first: always for the shipped
        float32 model; for int8, once its quantised copy exists (a CLI may announce the
        quantising, or call ``prepare()`` behind a spinner)."""
        return self.onnx_path.is_file()

    def prepare(self, on_step: Callable[[str], None] | None = None) -> Path:
        """Make the int8 copy now if it is configured and missing, so the first search is fast.
        Returns the path of the graph to run. ``on_step`` hears each step as it starts."""
        step = on_step or (lambda _: None)
        path = self.onnx_path
        if not path.is_file():
            step("quantising the model to int8")
            _export_locked(self._model_dir / MODEL_FILE, path, _quantize)
        return path

    @property
    def max_tokens(self) -> int:
        """The model's window: text beyond this many tokens is not embedded."""
        return self._max_length

    def count_tokens(self, text: str) -> int:
        """Word-piece tokens of ``text`` as the model sees it (special tokens included), not cut
        at the window, so the chunker can keep passages inside it."""
        if self._counter is None:
            self._counter = _load_tokenizer(self._model_dir / TOKENIZER_FILE, None)
        return len(self._counter.encode(text).ids)

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        known = self._known_vectors()
        keys = [text_key(text) for text in texts]
        todo: dict[bytes, list[int]] = {}  # a text given twice is embedded once
        with self._recent_lock:
            for i, key in enumerate(keys):
                vector = known.get(key) if known else None
                if vector is None and (vector := self._recent.get(key)) is not None:
                    self._recent.move_to_end(key)
                if vector is None:
                    todo.setdefault(key, []).append(i)
                else:
                    out[i] = vector
        if not todo:
            return out
        session, tokenizer = self._load()
        rows = [places[0] for places in todo.values()]
        encodings = tokenizer.encode_batch([texts[i] for i in rows])
        # Sorting by length keeps padding (wasted compute) small; rows go back to input order.
        order = sorted(range(len(rows)), key=lambda j: len(encodings[j].ids))
        for start in range(0, len(order), self._batch_size):
            batch = order[start : start + self._batch_size]
            out[[rows[j] for j in batch]] = self._embed_batch(
                session, [encodings[j].ids for j in batch]
            )
        with self._recent_lock:
            for key, places in todo.items():
                out[places[1:]] = out[places[0]]
                if self._recent_size:
                    self._recent[key] = out[places[0]].copy()
                    self._recent.move_to_end(key)  # another thread may have computed it too
            while len(self._recent) > self._recent_size:
                self._recent.popitem(last=False)
        return out

    def _known_vectors(self) -> dict[bytes, np.ndarray]:
        """The shipped table of known vectors (empty when there is none for this model)."""
        if self._known is None:
            with self._load_lock:
                if self._known is None:
                    self._known = (
                        read_known_vectors(self._known_path, self._model_dir, self._max_length)
                        if self._known_path is not None
                        else {}
                    )
        return self._known

    def _embed_batch(self, session: Any, ids: list[list[int]]) -> Vectors:
        feeds = model_feeds(ids)
        try:
            hidden = session.run(["last_hidden_state"], feeds)[0]
        except Exception as e:  # onnxruntime's own error types (e.g. allocation failures)
            raise EmbeddingError(f"Embedding failed: {e}") from e
        return mean_pool_normalised(hidden, feeds["attention_mask"])

    def _load(self) -> tuple[Any, Any]:
        with self._load_lock:
            if self._session is None:
                tokenizer_path = self._model_dir / TOKENIZER_FILE
                self._tokenizer = _load_tokenizer(tokenizer_path, self._max_length)
                path = self.prepare()
                self._session = _open_session(path, self._threads, spinning=self._spinning)
        return self._session, self._tokenizer


def text_key(text: str) -> bytes:
    """The key of a text in a table of known vectors."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def read_known_vectors(path: Path, model_dir: Path, max_tokens: int) -> dict[bytes, np.ndarray]:
    """The vectors in ``path`` by text key, when they were computed by the model in ``model_dir``
    with a window of ``max_tokens``; else (or when the file is missing or unreadable) none."""
    if not path.is_file():
        return {}
    try:
        with np.load(path, allow_pickle=False) as table:
            keys, vectors = table["keys"], table["vectors"]
            computed_by = (str(table["model_sha256"]), int(table["max_tokens"]))
    except (OSError, ValueError, KeyError) as e:
        _log.warning("known vectors %s not used: %s", path, e)
        return {}
    if computed_by != (_shipped_sha256(model_dir), max_tokens):
        _log.info("known vectors %s are another model's or window's: not used", path)
        return {}
    if keys.shape != (len(vectors), 16) or vectors.shape[1:] != (DIMENSIONS,):
        _log.warning("known vectors %s not used: shapes %s, %s", path, keys.shape, vectors.shape)
        return {}
    matrix = vectors.astype(np.float32)
    return {bytes(key): matrix[i] for i, key in enumerate(keys)}


def write_known_vectors(
    path: Path, texts: Sequence[str], vectors: Vectors, model_dir: Path, max_tokens: int
) -> None:
    """Write the table ``read_known_vectors`` reads: ``vectors[i]`` is ``texts[i]``'s vector."""
    keys = np.frombuffer(b"".join(text_key(t) for t in texts), dtype=np.uint8).reshape(-1, 16)
    np.savez_compressed(
        path,
        keys=keys,
        vectors=np.asarray(vectors, dtype=np.float32),
        model_sha256=np.str_(_shipped_sha256(model_dir)),
        max_tokens=np.int64(max_tokens),
    )


def model_feeds(ids: list[list[int]]) -> dict[str, np.ndarray]:
    """Right-pad token ids to the longest row; the mask marks real tokens."""
    width = max(len(row) for row in ids)
    input_ids = np.zeros((len(ids), width), dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=np.int64)
    for i, row in enumerate(ids):
        input_ids[i, : len(row)] = row
        mask[i, : len(row)] = 1
    return {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(mask)}


def mean_pool_normalised(hidden: np.ndarray, mask: np.ndarray) -> Vectors:
    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    pooled = summed / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    normalised: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
    return normalised


def _shipped_sha256(model_dir: Path) -> str:
    """The shipped model's sha256, as its manifest records it (hashing 90 MB at every start
    would cost a noticeable part of the start-up budget)."""
    try:
        manifest = json.loads((model_dir / "manifest.json").read_text(encoding="utf-8"))
        return str(manifest["files"][MODEL_FILE]["sha256"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"Cannot read the embedding model's manifest in {model_dir}: {e}") from e


def _load_tokenizer(path: Path, max_length: int | None) -> Any:
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as e:  # the tokenizers library raises plain Exception subclasses
        raise ConfigError(f"Cannot load the tokenizer {path}: {e}") from e
    # The packaged tokenizer.json pads and truncates to 128; we pad per batch ourselves.
    if max_length is None:
        tokenizer.no_truncation()
    else:
        tokenizer.enable_truncation(max_length=max_length)
    tokenizer.no_padding()
    return tokenizer


def _open_session(path: Path, threads: int | None, *, spinning: bool) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    if threads is not None:
        options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # By default threads that finish their share of a batch sleep instead of spinning for the next
    # one: on a machine busy with anything else (the HTTP server's requests, other imports)
    # spinning took 1.3x the time and 1.1x the CPU; idle, sleeping is 5-8% slower
    # (benchmarks/bench_embed.py --load 2).
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own Fail/InvalidProtobuf types
        raise ConfigError(
            f"Cannot load the embedding model {path} ({e}); reinstall folio, or delete the"
            " file if it is the int8 copy in the model cache."
        ) from e


def _export_locked(source: Path, target: Path, make: Callable[[Path, Path], None]) -> None:
    """Write ``target`` from ``source`` with ``make`` under a lock, so concurrent processes do it
    once (the loser finds the file), atomically (complete or absent)."""
    from filelock import FileLock

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(target) + ".lock"):
            if target.is_file():
                return
            tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")  # unique: we hold the lock
            try:
                make(source, tmp)
                os.replace(tmp, target)
            finally:
                tmp.unlink(missing_ok=True)
    except OSError as e:
        raise ConfigError(f"Cannot write the embedding model to {target.parent}: {e}") from e


def _quantize(float_model: Path, target: Path) -> None:
    """Dynamic int8 quantisation, per output channel, of the float32 graph's weights (activations
    are quantised at run time): about 3-4x faster on CPUs with int8 dot products, vectors at cosine
    ~0.99 to float32. Checked against the float32 graph before the file is kept. The quantiser
    needs the ``onnx`` package (the ``int8`` extra), which offline chat does not."""
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as e:
        raise ConfigError(
            f"The int8 embedding model needs the 'onnx' package ({e}): pip install"
            " 'folio-reader[int8]', or set FOLIO_EMBEDDING_MODEL=all-MiniLM-L6-v2."
        ) from e

    quiet = logging.getLogger()  # the quantiser logs advice on the root logger
    level = quiet.level
    try:
        quiet.setLevel(logging.ERROR)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quantize_dynamic(
                str(float_model), str(target), per_channel=True, weight_type=QuantType.QInt8
            )
    except Exception as e:  # onnxruntime's quantiser raises assorted types
        raise ConfigError(f"Cannot quantise {float_model} to int8: {e}") from e
    finally:
        quiet.setLevel(level)
    feeds = model_feeds([[101, 2023, 2003, 1037, 3231, 1012, 102], [101, 7592, 102]])
    mask = feeds["attention_mask"]
    sessions = [_open_session(p, None, spinning=False) for p in (float_model, target)]
    vectors = [mean_pool_normalised(s.run(["last_hidden_state"], feeds)[0], mask) for s in sessions]
    cosine = (vectors[0] * vectors[1]).sum(axis=1)
    if float(cosine.min()) < 0.95:
        raise ConfigError(f"The int8 model strays from float32 (cosine {cosine.min():.3f})")
