"""Battle-experience memory: state embeddings -> what happened next, with k-NN queries.

Each entry is one decision of a past battle: the embedding of the state the player
was in, the action it took (a label such as ``move:earthquake`` or
``switch:garchomp``, the same in every state) and how the battle ended for it
(1 win, 0 loss, ½ tie). A query with a new state's embedding finds its ``k`` nearest
entries (FAISS, L2) and returns

* a **value estimate**: the outcomes of the neighbours, weighted by
  ``1 / (distance + eps)``, shrunk towards ½ by ``prior_strength`` pseudo-counts, so
  that a sparse neighbourhood says little;
* **action priors**: for every action label the neighbours took, how often (weight)
  and how well it ended (mean outcome), from which :meth:`StateMemory.action_priors`
  scores a list of candidate labels.

Index kinds: exact search (``IndexFlatL2``) while the memory is small, and an inverted
file (``IndexIVFFlat``, ``nlist`` ~ 4·√n cells, at most 1024; ``nprobe`` cells visited per
query) for
large memories, built by :meth:`StateMemory.build` or automatically when
:meth:`StateMemory.add` passes ``ivf_threshold`` entries.

**Files** (a folder): ``index-<hash>.faiss`` (FAISS's own format), ``entries-<hash>.npz``
(outcomes, action ids, battle ids; NumPy arrays, loaded with ``allow_pickle=False``) and
``manifest.json`` (format version, dimension, count, embedding id, action vocabulary,
the names, sizes and SHA-256 of the two data files). New data files are written under
new names and the manifest is replaced by one rename, so a reader sees the old memory
or the new one, never a mix. A file
whose hash, size or version does not match raises :class:`MemoryFileError`, which names
the file; nothing is deleted or overwritten by a failed load.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pokegym.errors import PokegymError

MEMORY_FORMAT = "pokegym-experience-memory"
MEMORY_VERSION = 1
FILES = ("index", "entries")


class MemoryFileError(PokegymError):
    """A memory folder is missing, corrupt, or was written for something else."""


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "The experience memory needs FAISS: pip install 'pokegym[distill]' (faiss-cpu)."
        ) from exc
    return faiss


@dataclass
class Neighbourhood:
    """What the ``k`` nearest past decisions say about one query state."""

    value: float
    """Outcome estimate in [0, 1] (weighted, shrunk towards ½)."""
    weight: float
    """Total neighbour weight behind it (0 when the memory is empty)."""
    actions: dict[str, tuple[float, float]] = field(default_factory=dict)
    """label -> (share of the neighbour weight, mean outcome when taken)."""
    distances: list[float] = field(default_factory=list)


class StateMemory:
    """A FAISS index over state embeddings with per-entry outcomes and actions.

    Args:
        dim: embedding width.
        embedding_id: names the embedding function (e.g. a checkpoint's hash); a memory
            is only ever queried with embeddings of the same function.
        nprobe: inverted-file cells visited per query (speed/recall trade-off).
        ivf_threshold: entries above which :meth:`add` rebuilds as an inverted file.
    """

    def __init__(
        self,
        dim: int,
        embedding_id: str = "",
        *,
        nprobe: int = 16,
        ivf_threshold: int = 50_000,
    ):
        if dim < 1:
            raise ValueError("dim must be positive")
        self.dim = int(dim)
        self.embedding_id = embedding_id
        self.nprobe = int(nprobe)
        self.ivf_threshold = int(ivf_threshold)
        self.index = _faiss().IndexFlatL2(self.dim)
        self.outcomes = np.zeros(0, dtype=np.float32)
        self.actions = np.zeros(0, dtype=np.int32)
        self.battles = np.zeros(0, dtype=np.int64)
        self.vocabulary: list[str] = []
        self._label_ids: dict[str, int] = {}
        self._vectors: list[np.ndarray] = []  # kept for rebuilds while flat

    def __len__(self) -> int:
        return int(self.index.ntotal)

    @property
    def kind(self) -> str:
        return "ivf" if "IVF" in type(self.index).__name__ else "flat"

    # ------------------------------------------------------------------ writing
    def _ids_of(self, labels: Sequence[str]) -> np.ndarray:
        ids = np.empty(len(labels), dtype=np.int32)
        for i, label in enumerate(labels):
            index = self._label_ids.get(label)
            if index is None:
                index = self._label_ids[label] = len(self.vocabulary)
                self.vocabulary.append(label)
            ids[i] = index
        return ids

    def _check(self, embeddings: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(np.atleast_2d(embeddings), dtype=np.float32)
        if x.shape[1] != self.dim:
            raise ValueError(f"embeddings have width {x.shape[1]}; this memory holds {self.dim}")
        return x

    def add(
        self,
        embeddings: np.ndarray,
        outcomes: Sequence[float],
        actions: Sequence[str],
        battles: Sequence[int] | None = None,
    ) -> None:
        """Add past decisions (one row of ``embeddings`` each)."""
        x = self._check(embeddings)
        n = x.shape[0]
        if len(outcomes) != n or len(actions) != n:
            raise ValueError("embeddings, outcomes and actions must have the same length")
        self.outcomes = np.concatenate([self.outcomes, np.asarray(outcomes, dtype=np.float32)])
        self.actions = np.concatenate([self.actions, self._ids_of(actions)])
        battle_ids = np.asarray(battles if battles is not None else [-1] * n, dtype=np.int64)
        self.battles = np.concatenate([self.battles, battle_ids])
        if self.kind == "flat":
            self._vectors.append(x)
            self.index.add(x)
            if len(self) > self.ivf_threshold:
                self.build()
        else:
            self.index.add(x)

    def build(self, nlist: int | None = None, seed: int = 0) -> None:
        """Rebuild the index as an inverted file (for large memories)."""
        faiss = _faiss()
        x = self.vectors()
        n = x.shape[0]
        if n == 0:
            return
        nlist = nlist or max(1, min(n // 39, int(4 * math.sqrt(n)), 1024))
        quantizer = faiss.IndexFlatL2(self.dim)
        index = faiss.IndexIVFFlat(quantizer, self.dim, nlist, faiss.METRIC_L2)
        rng = np.random.default_rng(seed)
        sample = min(n, max(39 * nlist, 100_000))
        train = x if sample >= n else x[rng.choice(n, sample, replace=False)]
        index.cp.seed = seed
        index.cp.niter = 10
        index.train(train)
        index.add(x)
        index.nprobe = min(self.nprobe, nlist)
        self.index = index
        self._vectors = []

    def vectors(self) -> np.ndarray:
        """Every stored embedding (reconstructed from the index when needed)."""
        if self.kind == "flat":
            if self._vectors:
                return np.concatenate(self._vectors)
            if len(self):
                return self.index.reconstruct_n(0, len(self))  # type: ignore[no-any-return]
            return np.zeros((0, self.dim), dtype=np.float32)
        self.index.make_direct_map()
        return self.index.reconstruct_n(0, len(self))  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ queries
    def search(self, embeddings: np.ndarray, k: int = 32) -> tuple[np.ndarray, np.ndarray]:
        """(squared distances, entry ids) of the ``k`` nearest entries per row (-1: none)."""
        x = self._check(embeddings)
        # One thread: OpenMP's worker pool costs more than it saves on single queries,
        # and far more when other processes hold the cores.
        _faiss().omp_set_num_threads(1)
        if len(self) == 0:
            return (np.full((x.shape[0], k), np.inf, dtype=np.float32),
                    np.full((x.shape[0], k), -1, dtype=np.int64))  # fmt: skip
        return self.index.search(x, min(k, len(self)))  # type: ignore[no-any-return]

    def query(
        self, embeddings: np.ndarray, k: int = 32, prior_strength: float = 2.0, eps: float = 1e-3
    ) -> list[Neighbourhood]:
        """A :class:`Neighbourhood` per row of ``embeddings``."""
        distances, ids = self.search(embeddings, k)
        result = []
        for row_d, row_i in zip(distances, ids, strict=True):
            valid = row_i >= 0
            if not valid.any():
                result.append(Neighbourhood(0.5, 0.0))
                continue
            idx = row_i[valid]
            d = np.sqrt(np.maximum(row_d[valid], 0.0))
            scale = float(np.median(d)) + eps
            w = 1.0 / (d / scale + 1.0)
            outcomes = self.outcomes[idx]
            total = float(w.sum())
            value = (float(w @ outcomes) + 0.5 * prior_strength) / (total + prior_strength)
            actions: dict[str, tuple[float, float]] = {}
            labels = self.actions[idx]
            for label in np.unique(labels):
                mask = labels == label
                weight = float(w[mask].sum())
                mean = float(w[mask] @ outcomes[mask]) / weight
                actions[self.vocabulary[int(label)]] = (weight / total, mean)
            result.append(Neighbourhood(value, total, actions, d.tolist()))
        return result

    def value(self, embeddings: np.ndarray, k: int = 32) -> np.ndarray:
        """Only the value estimates (see :meth:`query`)."""
        return np.asarray([n.value for n in self.query(embeddings, k)], dtype=np.float32)

    @staticmethod
    def action_priors(
        neighbourhood: Neighbourhood, labels: Sequence[str], prior_strength: float = 1.0
    ) -> list[float]:
        """A score per candidate label: how often neighbours took it times how well it
        ended (mean outcome shrunk towards ½). Unseen labels score 0."""
        scores = []
        for label in labels:
            share, mean = neighbourhood.actions.get(label, (0.0, 0.5))
            count = share * neighbourhood.weight
            shrunk = (mean * count + 0.5 * prior_strength) / (count + prior_strength)
            scores.append(share * shrunk)
        return scores

    # --------------------------------------------------------------- persistence
    def save(self, folder: str | Path) -> Path:
        """Write the memory into ``folder``.

        The data files get new names (``index-<hash>.faiss``, ``entries-<hash>.npz``);
        the manifest that names them replaces the old one in a single rename, and only
        then are the old data files removed. A save that fails or is killed part-way
        leaves the previous memory readable.
        """
        faiss = _faiss()
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        names: dict[str, str] = {}
        hashes: dict[str, str] = {}
        sizes: dict[str, int] = {}
        temporary: list[str] = []
        try:
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".index-", suffix=".tmp")
            os.close(fd)
            temporary.append(tmp)
            faiss.write_index(self.index, tmp)
            fd, tmp_entries = tempfile.mkstemp(dir=folder, prefix=".entries-", suffix=".tmp")
            temporary.append(tmp_entries)
            with os.fdopen(fd, "wb") as handle:
                np.savez(handle, outcomes=self.outcomes, actions=self.actions,
                         battles=self.battles)  # fmt: skip
            for kind, path, suffix in (("index", tmp, "faiss"), ("entries", tmp_entries, "npz")):
                digest, size = _digest(path)
                name = f"{kind}-{digest[:16]}.{suffix}"
                _fsync(path)
                os.replace(path, folder / name)
                names[kind], hashes[name], sizes[name] = name, digest, size
            manifest = {
                "format": MEMORY_FORMAT, "version": MEMORY_VERSION, "dim": self.dim,
                "count": len(self), "kind": self.kind, "embedding_id": self.embedding_id,
                "nprobe": self.nprobe, "ivf_threshold": self.ivf_threshold, "files": names,
                "vocabulary": self.vocabulary, "sha256": hashes, "bytes": sizes,
            }  # fmt: skip
            fd, tmp_manifest = tempfile.mkstemp(dir=folder, prefix=".manifest-", suffix=".tmp")
            temporary.append(tmp_manifest)
            with os.fdopen(fd, "w") as handle:
                json.dump(manifest, handle, indent=1)
            _fsync(tmp_manifest)
            os.replace(tmp_manifest, folder / "manifest.json")
        finally:
            for path in temporary:
                if os.path.exists(path):
                    os.unlink(path)
        for old in list(folder.glob("index-*.faiss")) + list(folder.glob("entries-*.npz")):
            if old.name not in names.values():
                old.unlink()
        return folder

    @classmethod
    def load(cls, folder: str | Path, embedding_id: str | None = None) -> StateMemory:
        """Read a memory folder written by :meth:`save`.

        Args:
            embedding_id: when given, the memory must have been built with it.

        Raises:
            MemoryFileError: a file is missing, damaged (hash or size mismatch), of another
                format version, or built for another embedding. The message names the file
                and what to do; the folder is left as it is.
        """
        folder = Path(folder)
        manifest_path = folder / "manifest.json"
        if not manifest_path.is_file():
            raise MemoryFileError(
                f"No manifest.json in {folder}: not an experience memory. Build one with "
                "`pokegym memorize --checkpoint CKPT --data COLLECTION --out DIR` (or "
                "`pokegym distill --memory DIR`) and give the folder's path."
            )
        try:
            manifest = json.loads(manifest_path.read_text())
        except (OSError, ValueError) as exc:
            raise MemoryFileError(
                f"{manifest_path} is damaged ({exc}); rebuild the memory from the collection."
            ) from exc
        if not isinstance(manifest, dict):
            raise MemoryFileError(
                f"{manifest_path} holds a JSON {type(manifest).__name__}, not a memory's "
                "manifest (an object); rebuild the memory from the collection."
            )
        if manifest.get("format") != MEMORY_FORMAT or manifest.get("version") != MEMORY_VERSION:
            raise MemoryFileError(
                f"{manifest_path} is format {manifest.get('format')!r} version "
                f"{manifest.get('version')!r}; this code reads {MEMORY_FORMAT!r} version "
                f"{MEMORY_VERSION}. Rebuild the memory."
            )
        if embedding_id is not None and manifest.get("embedding_id") != embedding_id:
            raise MemoryFileError(
                f"The memory in {folder} was built with embedding {manifest.get('embedding_id')!r}"
                f", not {embedding_id!r} (a different checkpoint). Rebuild it for this checkpoint "
                "with `pokegym memorize --checkpoint CKPT`."
            )
        _check_manifest(manifest, manifest_path)
        files = manifest["files"]
        for kind in FILES:
            name = files[kind]
            path = _data_file(folder, name, manifest_path)
            if not path.is_file():
                raise MemoryFileError(f"{path} is missing; the memory in {folder} is incomplete.")
            digest, size = _digest(str(path))
            expected_size, expected_digest = manifest["bytes"][name], manifest["sha256"][name]
            if size == expected_size and digest == expected_digest:
                continue
            differs = (f"{size} bytes, expected {expected_size}" if size != expected_size
                       else f"sha256 {digest}, expected {expected_digest}")  # fmt: skip
            raise MemoryFileError(
                f"{path} does not match its manifest ({differs}): the file is damaged or "
                "from another save. Rebuild the memory; nothing was changed on disk."
            )
        faiss = _faiss()
        memory = cls(int(manifest["dim"]), manifest.get("embedding_id", ""),
                     nprobe=int(manifest.get("nprobe", 16)),
                     ivf_threshold=int(manifest.get("ivf_threshold", 50_000)))  # fmt: skip
        try:
            memory.index = faiss.read_index(str(folder / files["index"]))
            with np.load(folder / files["entries"], allow_pickle=False) as data:
                memory.outcomes = data["outcomes"].astype(np.float32)
                memory.actions = data["actions"].astype(np.int32)
                memory.battles = data["battles"].astype(np.int64)
        except (RuntimeError, ValueError, KeyError, OSError) as exc:
            raise MemoryFileError(f"The memory in {folder} could not be read ({exc}).") from exc
        if memory.index.d != memory.dim or memory.index.ntotal != manifest["count"]:
            raise MemoryFileError(
                f"{folder / files['index']} holds {memory.index.ntotal} vectors of width "
                f"{memory.index.d}; the manifest says {manifest['count']} of width {memory.dim}."
            )
        if not (len(memory.outcomes) == len(memory.actions) == memory.index.ntotal):
            raise MemoryFileError(f"{folder / files['entries']} does not match the index length.")
        if hasattr(memory.index, "nprobe"):
            memory.index.nprobe = min(memory.nprobe, memory.index.nlist)
        memory.vocabulary = list(manifest.get("vocabulary", []))
        memory._label_ids = {label: i for i, label in enumerate(memory.vocabulary)}
        return memory


def _check_manifest(manifest: dict[str, Any], path: Path) -> None:
    """Every entry :meth:`StateMemory.load` reads has the type :meth:`StateMemory.save` writes."""

    def refuse(what: str) -> MemoryFileError:
        return MemoryFileError(
            f"{path} is damaged: {what}. Rebuild the memory (`pokegym memorize`); nothing was "
            "changed on disk."
        )

    def is_count(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0

    files = manifest.get("files")
    if not isinstance(files, dict) or set(files) != set(FILES):
        raise refuse(f'"files" must name the {" and ".join(FILES)} files, got {files!r}')
    for kind, name in files.items():
        if not isinstance(name, str) or not name:
            raise refuse(f'"files.{kind}" is {name!r}, not a file name')
    for key in ("sha256", "bytes"):
        table = manifest.get(key)
        if not isinstance(table, dict):
            raise refuse(f'"{key}" is {table!r}, not an object with an entry per data file')
        for name in files.values():
            value = table.get(name)
            good = is_count(value) if key == "bytes" else isinstance(value, str)
            if not good:
                raise refuse(f'"{key}" has no valid entry for {name!r} (got {value!r})')
    for key in ("dim", "count"):
        if not is_count(manifest.get(key)) or (key == "dim" and manifest[key] < 1):
            raise refuse(f'"{key}" is {manifest.get(key)!r}, not a non-negative integer')
    for key in ("nprobe", "ivf_threshold"):
        if key in manifest and not is_count(manifest[key]):
            raise refuse(f'"{key}" is {manifest[key]!r}, not a non-negative integer')
    vocabulary = manifest.get("vocabulary", [])
    if not isinstance(vocabulary, list) or not all(isinstance(v, str) for v in vocabulary):
        raise refuse('"vocabulary" is not a list of action labels')
    if not isinstance(manifest.get("embedding_id", ""), str):
        raise refuse('"embedding_id" is not a string')


def _data_file(folder: Path, name: str, manifest_path: Path) -> Path:
    """``folder / name`` when that is a file of the folder itself.

    Checked before anything is opened: a name must be a plain file name (no absolute
    path, no separator, no ``..``), and a link must not lead out of the folder.
    """
    plain = name not in (".", "..") and "/" not in name and "\\" not in name and "\0" not in name
    path = folder / name
    inside = False
    if plain:
        try:
            inside = path.resolve().parent == folder.resolve()
        except (OSError, RuntimeError):  # a link loop
            inside = False
    if not inside:
        raise MemoryFileError(
            f"{manifest_path} names the data file {name!r}, which leaves the memory folder "
            f"{folder}; a memory only reads files of its own folder. Refusing to open it: "
            "rebuild the memory, and do not load folders from untrusted sources."
        )
    return path


def _digest(path: str) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
            size += len(block)
    return h.hexdigest(), size


def _fsync(path: str) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


__all__ = ["MemoryFileError", "Neighbourhood", "StateMemory"]
