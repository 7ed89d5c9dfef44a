"""The ONNX embedder against sentence-transformers (the reference), and its one-time export.

Slow: exports the packaged model once for the module (torch) and loads the reference model.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from folio.adapters.embeddings import OnnxEmbedder, SentenceTransformerEmbedder
from folio.adapters.embeddings.onnx import packaged_model_dir

pytestmark = pytest.mark.slow

SENTENCES = [
    "Call me Ishmael.",
    "Some years ago—never mind how long precisely—having little or no money in my purse, and "
    "nothing particular to interest me on shore, I thought I would sail about a little.",
    "What did the captain do next?",
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, "
    "must be in want of a wife.",
    "",
    "   ",
    "?",
    "The whale!",
    "Ünïcödé façade — naïve café, Zürich, São Paulo.",
    "東京は日本の首都です。",
    "chapter 42 THE WHITENESS OF THE WHALE",
    "I   have    irregular\twhitespace\nand newlines.",
    "e-mail: ahab@pequod.example, price $3.50, 100% sure, #hashtag",
    "To be, or not to be, that is the question.",
    "Frankenstein's creature reads Paradise Lost and learns of his own solitude.",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "1 2 3 4 5 6 7 8 9 10",
    "Who is Queequeg and where does he come from?",
    # Far past 256 tokens: both sides must truncate the same way.
    "The sea was calm and the sky was grey. " * 60,
    "whale " * 300,
]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


PREPARE_STEPS: list[str] = []


@pytest.fixture(scope="module")
def embedder(cache_dir: Path) -> OnnxEmbedder:
    embedder = OnnxEmbedder(packaged_model_dir(), cache_dir, batch_size=4)
    embedder.prepare(on_step=PREPARE_STEPS.append)
    return embedder


def test_the_one_time_preparation_reports_its_steps(embedder: OnnxEmbedder) -> None:
    assert PREPARE_STEPS[0] == "loading the packaged weights"
    assert "exporting to ONNX and checking it against torch" in PREPARE_STEPS
    steps: list[str] = []
    embedder.prepare(on_step=steps.append)
    assert steps == [], "a prepared model has nothing left to do"


@pytest.fixture(scope="module")
def reference() -> Iterator[np.ndarray]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(packaged_model_dir()), local_files_only=True, device="cpu")
    yield model.encode(SENTENCES, normalize_embeddings=True, convert_to_numpy=True)


def test_onnx_vectors_match_sentence_transformers(
    embedder: OnnxEmbedder, reference: np.ndarray
) -> None:
    vectors = embedder.embed(SENTENCES)

    cosines = (vectors * reference).sum(axis=1)
    assert vectors.shape == (len(SENTENCES), 384)
    assert cosines.min() > 0.999, dict(zip(SENTENCES, cosines.round(5).tolist(), strict=True))


def test_vectors_are_float32_and_unit_length(embedder: OnnxEmbedder) -> None:
    vectors = embedder.embed(SENTENCES)

    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_rows_come_back_in_input_order_across_batches_of_mixed_lengths(
    embedder: OnnxEmbedder,
) -> None:
    texts = list(reversed(SENTENCES))  # long first: sorting by length must be undone

    together = embedder.embed(texts)
    one_by_one = np.vstack([embedder.embed([text]) for text in texts])

    np.testing.assert_allclose(together, one_by_one, atol=1e-5)


def test_distinct_texts_get_distinct_vectors(embedder: OnnxEmbedder) -> None:
    vectors = embedder.embed(["Call me Ishmael.", "The whale!", "Call me Ishmael."])

    assert float(vectors[0] @ vectors[2]) > 0.9999
    assert float(vectors[0] @ vectors[1]) < 0.9


def test_empty_input_gives_an_empty_matrix(embedder: OnnxEmbedder) -> None:
    assert embedder.embed([]).shape == (0, 384)


_SECOND_PROCESS = """
import sys, pathlib
from folio.adapters.embeddings import make_embedder
e = make_embedder("all-MiniLM-L6-v2", cache_dir=pathlib.Path(sys.argv[1]))
v = e.embed(["Call me Ishmael."])
print("torch" in sys.modules, " ".join(repr(float(x)) for x in v[0]))
"""


def test_a_later_process_reuses_the_export_without_importing_torch(
    embedder: OnnxEmbedder, cache_dir: Path
) -> None:
    before = embedder.onnx_path.stat().st_mtime_ns

    out = _run(_SECOND_PROCESS, cache_dir)

    imported_torch, numbers = out.split(" ", 1)
    assert imported_torch == "False"
    assert embedder.onnx_path.stat().st_mtime_ns == before
    assert list(cache_dir.glob("*.onnx")) == [embedder.onnx_path]
    vector = np.array([float(x) for x in numbers.split()], dtype=np.float32)
    np.testing.assert_allclose(vector, embedder.embed(["Call me Ishmael."])[0], atol=1e-5)


_PREPARE = """
import sys, pathlib
from folio.adapters.embeddings.onnx import OnnxEmbedder, packaged_model_dir
OnnxEmbedder(packaged_model_dir(), pathlib.Path(sys.argv[1])).prepare()
print("torch" in sys.modules)
"""


def test_two_processes_exporting_at_once_produce_one_valid_file(
    tmp_path: Path, embedder: OnnxEmbedder
) -> None:
    runs = [_start(_PREPARE, tmp_path) for _ in range(2)]
    outputs = [_finish(run) for run in runs]

    assert sorted(outputs) == ["False", "True"]  # exactly one of them exported (and needed torch)
    files = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock"))
    assert files == [embedder.onnx_path.name]  # no temporary file left behind
    fresh = OnnxEmbedder(packaged_model_dir(), tmp_path).embed(SENTENCES[:3])
    np.testing.assert_allclose(fresh, embedder.embed(SENTENCES[:3]), atol=1e-5)


def test_sentence_transformer_embedder_runs_a_local_model_directory(
    embedder: OnnxEmbedder, reference: np.ndarray
) -> None:
    local = SentenceTransformerEmbedder(str(packaged_model_dir()))

    vectors = local.embed(SENTENCES[:4])

    assert local.dimensions == 384
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, reference[:4], atol=1e-5)
    assert local.embed([]).shape == (0, 384)


def _start(code: str, cache_dir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, str(cache_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(process: subprocess.Popen[str]) -> str:
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    return stdout.strip()


def _run(code: str, cache_dir: Path) -> str:
    return _finish(_start(code, cache_dir))


def test_the_int8_model_is_quantised_from_the_export_and_stays_close_to_float32(
    embedder: OnnxEmbedder, cache_dir: Path
) -> None:
    int8 = OnnxEmbedder(packaged_model_dir(), cache_dir, batch_size=4, int8=True)
    assert int8.name == "all-MiniLM-L6-v2-int8" != embedder.name
    assert not int8.is_prepared

    steps: list[str] = []
    path = int8.prepare(on_step=steps.append)
    assert steps == ["quantising the model to int8"], "the float32 export is reused"

    assert path != embedder.onnx_path and path.parent == embedder.onnx_path.parent
    assert path.stat().st_size < embedder.onnx_path.stat().st_size / 2, "weights are int8"
    texts = [s for s in SENTENCES if s.strip()]
    quantised, full = int8.embed(texts), embedder.embed(texts)
    cosines = (quantised * full).sum(axis=1)
    assert quantised.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(quantised, axis=1), 1.0, atol=1e-5)
    assert cosines.min() > 0.95 and float(np.median(cosines)) > 0.98, cosines.round(4).tolist()
    assert float(quantised[0] @ quantised[1]) < 0.9, "distinct texts stay distinct"
