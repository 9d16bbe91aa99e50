"""The FAISS experience memory: k-NN answers on data with a known answer, persistence
round trips (exact and inverted-file indexes), and damaged or mismatched files."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import numpy as np
import pytest

from memory.experience import MemoryFileError, StateMemory


def two_clusters(n: int = 400, dim: int = 8, seed: int = 0):
    """Winning positions near +3, losing ones near -3; the winners played "move:a"."""
    rng = np.random.default_rng(seed)
    wins = rng.normal(3.0, 0.5, size=(n, dim)).astype(np.float32)
    losses = rng.normal(-3.0, 0.5, size=(n, dim)).astype(np.float32)
    x = np.concatenate([wins, losses])
    outcomes = np.concatenate([np.ones(n), np.zeros(n)])
    actions = ["move:a"] * n + ["move:b"] * n
    return x, outcomes, actions


@pytest.mark.parametrize("threshold", [10_000, 100])  # exact index, then inverted file
def test_knn_value_and_action_priors_follow_the_neighbours(threshold):
    x, outcomes, actions = two_clusters()
    memory = StateMemory(8, "e", ivf_threshold=threshold)
    memory.add(x, outcomes, actions, battles=np.arange(len(x)))
    assert memory.kind == ("flat" if threshold > len(x) else "ivf")
    near_win, near_loss = np.full((1, 8), 3.0), np.full((1, 8), -3.0)
    win_hood, loss_hood = memory.query(np.concatenate([near_win, near_loss]), k=16)
    assert win_hood.value > 0.85 and loss_hood.value < 0.15
    assert set(win_hood.actions) == {"move:a"}
    a, b, unseen = memory.action_priors(win_hood, ["move:a", "move:b", "move:c"])
    assert a > 0.5 and b == 0.0 and unseen == 0.0


def test_empty_memory_answers_a_neutral_value():
    memory = StateMemory(4)
    (hood,) = memory.query(np.zeros((1, 4)))
    assert hood.value == 0.5 and hood.weight == 0.0


def test_wrong_width_is_refused():
    memory = StateMemory(4)
    with pytest.raises(ValueError, match="width"):
        memory.add(np.zeros((2, 5)), [1, 0], ["a", "b"])


@pytest.mark.parametrize("threshold", [10_000, 100])
def test_save_load_round_trip(tmp_path, threshold):
    x, outcomes, actions = two_clusters()
    memory = StateMemory(8, "ckpt-1", ivf_threshold=threshold)
    memory.add(x, outcomes, actions, battles=np.arange(len(x)))
    memory.save(tmp_path / "mem")
    loaded = StateMemory.load(tmp_path / "mem", embedding_id="ckpt-1")
    assert len(loaded) == len(memory) and loaded.kind == memory.kind
    assert loaded.vocabulary == memory.vocabulary
    np.testing.assert_array_equal(loaded.battles, memory.battles)
    q = np.random.default_rng(1).normal(size=(5, 8)).astype(np.float32)
    np.testing.assert_allclose(loaded.value(q), memory.value(q))
    np.testing.assert_allclose(loaded.vectors(), x, atol=1e-6)
    # Still usable: adding after loading works and saving again replaces the files.
    loaded.add(x[:3], [1, 1, 1], ["move:z"] * 3)
    loaded.save(tmp_path / "mem")
    assert len(StateMemory.load(tmp_path / "mem")) == len(x) + 3


def saved(tmp_path):
    x, outcomes, actions = two_clusters(50)
    memory = StateMemory(8, "ckpt-1")
    memory.add(x, outcomes, actions)
    return memory.save(tmp_path / "mem")


def snapshot(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def flip_a_byte(path):
    """The same size, another sha256."""
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_damaged_index_raises_a_clear_error_and_changes_nothing(tmp_path):
    folder = saved(tmp_path)
    index = next(folder.glob("index-*.faiss"))
    expected = json.loads((folder / "manifest.json").read_text())["sha256"][index.name]
    flip_a_byte(index)
    before = snapshot(folder)
    with pytest.raises(MemoryFileError) as caught:
        StateMemory.load(folder)
    # It names what differs (the digest), not the size that matches.
    got = hashlib.sha256(index.read_bytes()).hexdigest()
    assert str(caught.value) == (
        f"{index} does not match its manifest (sha256 {got}, expected {expected}): the file "
        "is damaged or from another save. Rebuild the memory; nothing was changed on disk."
    )
    assert snapshot(folder) == before


def test_truncated_entries_and_missing_files(tmp_path):
    folder = saved(tmp_path)
    entries = next(folder.glob("entries-*.npz"))
    size = entries.stat().st_size
    entries.write_bytes(entries.read_bytes()[:100])
    with pytest.raises(MemoryFileError,
                       match=rf"entries-.*npz does not match its manifest \(100 bytes, expected "
                             rf"{size}\): the file is damaged"):  # fmt: skip
        StateMemory.load(folder)
    entries.unlink()
    with pytest.raises(MemoryFileError, match="missing"):
        StateMemory.load(folder)
    with pytest.raises(MemoryFileError, match=r"No manifest\.json"):
        StateMemory.load(tmp_path / "nowhere")


def test_a_damaged_memory_is_one_line_and_status_2_at_the_command_line(tmp_path):
    from policies.value_net import checkpoint_id, default_checkpoint

    x, outcomes, actions = two_clusters(50)
    memory = StateMemory(8, checkpoint_id(default_checkpoint()))  # the shipped checkpoint's
    memory.add(x, outcomes, actions)
    folder = memory.save(tmp_path / "mem")
    index = next(folder.glob("index-*.faiss"))
    flip_a_byte(index)
    done = subprocess.run([sys.executable, "-m", "pokegym.cli", "compare", "--agents",
                           f"distilled:search=maximin,memory={folder},random", "--battles", "1",
                           "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"pokegym: error: {index} does not match its manifest (sha256 ")
    assert "Rebuild the memory" in line


def test_version_and_embedding_mismatch(tmp_path):
    folder = saved(tmp_path)
    with pytest.raises(MemoryFileError, match=r"a different checkpoint"):
        StateMemory.load(folder, embedding_id="ckpt-2")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["version"] = 99
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(MemoryFileError, match="version 99"):
        StateMemory.load(folder)
    (folder / "manifest.json").write_text("{not json")
    with pytest.raises(MemoryFileError, match="damaged"):
        StateMemory.load(folder)


def test_a_failed_save_leaves_the_previous_memory_readable(tmp_path):
    folder = saved(tmp_path)
    memory = StateMemory.load(folder)
    memory.outcomes = memory.outcomes[:-1]  # inconsistent: np.savez works, the load check fails
    memory.index = None  # faiss.write_index fails before anything is replaced
    with pytest.raises(Exception):  # noqa: B017 - any error from FAISS
        memory.save(folder)
    assert len(StateMemory.load(folder)) == 100
    assert not list(folder.glob(".*.tmp"))


BAD_MANIFESTS = {
    "list": lambda m: [],
    "string": lambda m: "memory",
    "no-bytes": lambda m: {k: v for k, v in m.items() if k != "bytes"},
    "entry-without-bytes": lambda m: {**m, "bytes": {}},
    "sha256-list": lambda m: {**m, "sha256": []},
    "files-list": lambda m: {**m, "files": ["index", "entries"]},
    "file-name-int": lambda m: {**m, "files": {**m["files"], "index": 7}},
    "dim-string": lambda m: {**m, "dim": "eight"},
    "no-count": lambda m: {k: v for k, v in m.items() if k != "count"},
    "vocabulary-string": lambda m: {**m, "vocabulary": "move:a"},
}


@pytest.mark.parametrize("change", list(BAD_MANIFESTS.values()), ids=list(BAD_MANIFESTS))
def test_a_manifest_of_the_wrong_shape_is_a_memory_file_error(tmp_path, change):
    folder = saved(tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps(change(manifest)))
    before = snapshot(folder)
    with pytest.raises(MemoryFileError, match=r"manifest\.json"):
        StateMemory.load(folder)
    assert snapshot(folder) == before


@pytest.mark.parametrize("where", ["absolute", "parent", "nested", "symlink"])
def test_a_manifest_never_reaches_outside_its_folder(tmp_path, monkeypatch, where):
    """A data file named by the manifest must be a file of the folder itself: an absolute
    path, ``..``, a sub-folder or a link that leaves the folder is refused before the file
    is opened or hashed."""
    import memory.experience as experience

    folder = saved(tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    outside = tmp_path / "outside.faiss"
    outside.write_bytes(next(folder.glob("index-*.faiss")).read_bytes())
    name = {
        "absolute": str(outside),
        "parent": "../outside.faiss",
        "nested": "sub/../../outside.faiss",
        "symlink": "index-link.faiss",
    }[where]
    if where == "symlink":
        (folder / name).symlink_to(outside)
    old = manifest["files"]["index"]
    manifest["files"]["index"] = name
    manifest["sha256"][name] = manifest["sha256"].pop(old)
    manifest["bytes"][name] = manifest["bytes"].pop(old)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    touched: list[str] = []
    real_digest = experience._digest

    def recording_digest(path: str) -> tuple[str, int]:
        touched.append(path)
        return real_digest(path)

    monkeypatch.setattr(experience, "_digest", recording_digest)
    with pytest.raises(MemoryFileError, match="leaves the memory folder"):
        StateMemory.load(folder)
    assert not any("outside" in path or "link" in path for path in touched), touched
