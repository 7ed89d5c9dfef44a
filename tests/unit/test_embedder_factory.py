"""The embedder factory picks the right embedder by name, cheaply, and never downloads anything."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from folio.adapters.embeddings import (
    HashingEmbedder,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    make_embedder,
)
from folio.domain.errors import ConfigError


@pytest.mark.parametrize("name", ["all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"])
def test_the_packaged_model_names_give_the_onnx_embedder(name: str, tmp_path: Path) -> None:
    embedder = make_embedder(name, cache_dir=tmp_path)

    assert isinstance(embedder, OnnxEmbedder)
    assert embedder.name == "all-MiniLM-L6-v2"
    assert embedder.dimensions == 384


@pytest.mark.parametrize(
    "name", ["all-MiniLM-L6-v2-int8", "sentence-transformers/all-MiniLM-L6-v2-int8"]
)
def test_the_int8_names_give_the_quantised_onnx_embedder(name: str, tmp_path: Path) -> None:
    embedder = make_embedder(name, cache_dir=tmp_path)

    assert isinstance(embedder, OnnxEmbedder)
    assert embedder.name == "all-MiniLM-L6-v2-int8"
    assert embedder.onnx_path.name.endswith(".int8.onnx")
    assert embedder.dimensions == 384


def test_building_the_default_embedder_loads_no_model(tmp_path: Path) -> None:
    embedder = make_embedder("all-MiniLM-L6-v2", cache_dir=tmp_path / "models")
    _ = (embedder.name, embedder.dimensions)

    vectors = embedder.embed([])

    assert vectors.shape == (0, 384)
    assert not (tmp_path / "models").exists()  # nothing exported, so nothing was loaded


def test_importing_the_package_and_making_the_default_embedder_imports_no_runtime(
    tmp_path: Path,
) -> None:
    code = (
        "import sys, pathlib\n"
        "from folio.adapters.embeddings import make_embedder\n"
        f"e = make_embedder('all-MiniLM-L6-v2', cache_dir=pathlib.Path({str(tmp_path)!r}))\n"
        "e.name, e.dimensions\n"
        "heavy = ('torch', 'onnxruntime', 'transformers', 'sentence_transformers', 'tokenizers')\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )

    assert result.stdout.strip() == "[]"


def test_hashing_names_give_the_hashing_embedder(tmp_path: Path) -> None:
    default = make_embedder("hashing", cache_dir=tmp_path)
    sized = make_embedder("hashing-64", cache_dir=tmp_path)

    assert isinstance(default, HashingEmbedder)
    assert isinstance(sized, HashingEmbedder)
    assert sized.dimensions == 64
    assert make_embedder(default.name, cache_dir=tmp_path).name == default.name


def test_a_missing_model_path_is_a_config_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"

    with pytest.raises(ConfigError, match="no-such-model") as caught:
        make_embedder(str(missing), cache_dir=tmp_path)

    assert caught.value.code == "CONFIG"


def test_an_unknown_hub_name_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_hf_cache(tmp_path / "hf", monkeypatch)

    with pytest.raises(ConfigError, match="not found offline"):
        make_embedder("some-org/some-model", cache_dir=tmp_path)


def test_an_empty_name_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        make_embedder("  ", cache_dir=tmp_path)


def test_a_directory_that_is_not_a_model_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()

    with pytest.raises(ConfigError, match="not a sentence-transformers model"):
        make_embedder(str(tmp_path / "notes"), cache_dir=tmp_path)


def test_a_local_model_directory_gives_a_lazy_sentence_transformer_embedder(
    tmp_path: Path,
) -> None:
    model_dir = tmp_path / "my-model"
    model_dir.mkdir()
    (model_dir / "modules.json").write_text("[]")

    embedder = make_embedder(str(model_dir), cache_dir=tmp_path)

    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert embedder.name == str(model_dir.resolve())


def test_a_bare_name_in_the_local_hf_cache_resolves_to_the_sentence_transformers_org(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "hf"
    snapshot = cache / "models--sentence-transformers--paraphrase-tiny" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "modules.json").write_text(json.dumps([]))
    (cache / "models--sentence-transformers--paraphrase-tiny" / "refs").mkdir()
    (cache / "models--sentence-transformers--paraphrase-tiny" / "refs" / "main").write_text(
        "abc123"
    )
    _use_hf_cache(cache, monkeypatch)

    embedder = make_embedder("paraphrase-tiny", cache_dir=tmp_path)

    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert embedder.name == "sentence-transformers/paraphrase-tiny"


def _use_hf_cache(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point huggingface_hub at ``cache`` (it reads the location once, at import)."""
    from huggingface_hub import constants

    cache.mkdir(parents=True, exist_ok=True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))


def test_an_unwritable_model_cache_is_a_config_error_before_any_quantising(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    embedder = make_embedder("all-MiniLM-L6-v2-int8", cache_dir=blocker / "models")
    assert isinstance(embedder, OnnxEmbedder)
    assert not embedder.is_prepared

    with pytest.raises(ConfigError, match="Cannot write the embedding model"):
        embedder.embed(["hello"])


def test_the_default_model_is_shipped_ready_and_never_touches_the_model_cache(
    tmp_path: Path,
) -> None:
    embedder = make_embedder("all-MiniLM-L6-v2", cache_dir=tmp_path / "models")
    assert isinstance(embedder, OnnxEmbedder)

    assert embedder.is_prepared
    assert embedder.onnx_path.is_file() and embedder.onnx_path.parent.name == "minilm"
    assert not (tmp_path / "models").exists()


def test_the_int8_model_without_the_onnx_package_names_the_extra_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime.quantization", None)  # as if not installed
    embedder = make_embedder("all-MiniLM-L6-v2-int8", cache_dir=tmp_path)

    with pytest.raises(ConfigError, match=r"folio-reader\[int8\]"):
        embedder.embed(["hello"])

    assert [p for p in tmp_path.iterdir() if p.suffix == ".onnx"] == []


def test_another_model_without_sentence_transformers_names_the_extra_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_dir = tmp_path / "my-model"
    model_dir.mkdir()
    (model_dir / "modules.json").write_text("[]")
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as if not installed

    with pytest.raises(ConfigError, match=r"folio-reader\[sentence-transformers\]"):
        make_embedder(str(model_dir), cache_dir=tmp_path)


def test_absurd_hashing_dimensions_are_a_config_error_naming_the_bound(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="at most 4096 dimensions"):
        make_embedder("hashing-99999999999999999999", cache_dir=tmp_path)
