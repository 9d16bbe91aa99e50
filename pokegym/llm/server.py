"""A real OpenAI-compatible server on this machine: llama.cpp through llama-cpp-python.

``pokegym llm server build`` prepares two things once, in ``$POKEGYM_HOME/llama-server/``:

- a **wheel** of ``llama-cpp-python`` (pinned version; PyPI ships only its source, so
  llama.cpp is compiled here with CMake), installed with its ``[server]`` extra into the
  running environment. The wheel sits in ``wheels/<key>/``, where the key covers the
  version, the source's sha256 and the CMake flags; a wheel already there is installed
  again without compiling. The flags pin the instruction set to AVX2 + FMA + F16C (no
  ``-march=native``), so the cached wheel runs on any x86-64 CPU from about 2015 on,
  e.g. Intel CPUs with AMX and AMD EPYCs with AVX2 only;
- a **GGUF file** of an offline bundle (``qwen-0.5b``): its converted transformers
  checkpoint written by llama.cpp's own ``convert_hf_to_gguf.py`` (from the same source
  archive) as float16, in ``gguf/<bundle>-<bundle sha256 prefix>-<type>-<key>.gguf``.

:class:`LlamaServer` starts ``python -m llama_cpp.server`` on 127.0.0.1 on a free port,
waits until it answers, and stops it (its whole process group) on exit.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pokegym.files import file_sha256
from pokegym.llm.base import LLMError
from pokegym.llm.bundle import ensure_checkpoint, get_bundle
from pokegym.showdown.install import cache_home, file_lock

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
SDIST_NAME = f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"

# Portable x86-64 CPU build: no -march=native; AVX2/FMA/F16C/BMI2 on (every x86-64 CPU
# of the last ten years: Intel Haswell+, AMD Zen+), AVX-512 and AMX off so the wheel runs
# on an AMD EPYC with AVX2 only as well as on an Intel CPU with AMX. No multimodal
# library (llava/mtmd), no HTTPS client, no ccache: less to compile.
CMAKE_ARGS: tuple[str, ...] = (
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_BMI2=ON",
    "-DGGML_AVX512=OFF",
    "-DGGML_AMX_TILE=OFF",
    "-DGGML_AMX_INT8=OFF",
    "-DGGML_AMX_BF16=OFF",
    "-DGGML_CCACHE=OFF",
    "-DLLAVA_BUILD=OFF",
    "-DLLAMA_OPENSSL=OFF",
)
GGUF_TYPE = "f16"
BUILD_VERSION = 1  # bump when the build recipe changes


class LlamaServerError(LLMError):
    """The llama.cpp server could not be built, converted, started or stopped."""


Log = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def server_home() -> Path:
    """``$POKEGYM_HOME/llama-server``."""
    return cache_home() / "llama-server"


def build_key() -> str:
    """Digest of everything the compiled wheel depends on."""
    recipe = {
        "version": LLAMA_CPP_PYTHON_VERSION,
        "sdist": SDIST_SHA256,
        "cmake": list(CMAKE_ARGS),
        "machine": platform.machine(),
        "build": BUILD_VERSION,
    }
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:12]


def _run(cmd: Sequence[str], *, log: Log, what: str, env: dict[str, str] | None = None) -> None:
    """Run ``cmd`` at the lowest CPU priority; its output goes to a log file, whose tail
    is in the error when it fails."""
    logs = server_home() / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    log_path = logs / f"{what.replace(' ', '-')}.log"
    nice = ["nice", "-n", "19"] if shutil.which("nice") else []
    log(f"{what}: {' '.join(cmd)} (output in {log_path})")
    with open(log_path, "w") as out:
        done = subprocess.run([*nice, *cmd], stdout=out, stderr=subprocess.STDOUT, env=env)
    if done.returncode != 0:
        tail = log_path.read_text(errors="replace")[-3000:]
        raise LlamaServerError(f"{what} failed (exit {done.returncode}); {log_path} ends:\n{tail}")


# ------------------------------------------------------------------ the source archive
def fetch_sdist(*, log: Log = _quiet) -> Path:
    """The pinned source archive in the cache, downloaded from PyPI with pip on first use
    (or copied from ``$POKEGYM_LLAMA_CPP_SDIST``), checked against its sha256."""
    folder = server_home() / "sdist"
    path = folder / SDIST_NAME
    if path.is_file() and file_sha256(path) == SDIST_SHA256:
        return path
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        local = os.environ.get("POKEGYM_LLAMA_CPP_SDIST")
        if local:
            shutil.copy(local, Path(tmp) / SDIST_NAME)
        else:
            _run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                 "--dest", tmp, f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}"],
                log=log, what="download llama-cpp-python",
            )  # fmt: skip
        got = Path(tmp) / SDIST_NAME
        if not got.is_file():
            raise LlamaServerError(f"pip did not download {SDIST_NAME} (see the log above)")
        digest = file_sha256(got)
        if digest != SDIST_SHA256:
            raise LlamaServerError(
                f"{SDIST_NAME} has sha256 {digest}, expected {SDIST_SHA256}; not used."
            )
        os.replace(got, path)
    return path


# ---------------------------------------------------------------------------- the wheel
def wheel_dir() -> Path:
    return server_home() / "wheels" / build_key()


def cached_wheel() -> Path | None:
    wheels = sorted(wheel_dir().glob("llama_cpp_python-*.whl"))
    return wheels[0] if wheels else None


def build_wheel(*, log: Log = _quiet) -> Path:
    """Compile the wheel once (``nice -n 19``, ``CMAKE_BUILD_PARALLEL_LEVEL`` 2 unless
    set); later calls return the cached one."""
    with file_lock(server_home() / ".build.lock"):
        wheel = cached_wheel()
        if wheel is not None:
            return wheel
        sdist = fetch_sdist(log=log)
        env = dict(os.environ)
        env["CMAKE_ARGS"] = " ".join(CMAKE_ARGS)
        env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        start = time.perf_counter()
        parent = wheel_dir().parent
        parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=parent) as tmp:
            _run(
                # --no-cache-dir: pip's wheel cache would ignore CMAKE_ARGS.
                [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir",
                 "--wheel-dir", tmp, str(sdist)],
                log=log, what="build llama-cpp-python", env=env,
            )  # fmt: skip
            built = sorted(Path(tmp).glob("llama_cpp_python-*.whl"))
            if not built:
                raise LlamaServerError("pip wheel finished without a llama_cpp_python wheel")
            staged = Path(tmp) / "out"
            staged.mkdir()
            shutil.move(str(built[0]), staged / built[0].name)
            (staged / "build.json").write_text(
                json.dumps(
                    {
                        "cmake_args": list(CMAKE_ARGS),
                        "seconds": round(time.perf_counter() - start),
                        "parallel": env["CMAKE_BUILD_PARALLEL_LEVEL"],
                    },
                    indent=1,
                )
            )
            os.replace(staged, wheel_dir())
        log(f"built {wheel_dir()} in {time.perf_counter() - start:.0f} s")
        wheel = cached_wheel()
        assert wheel is not None
        return wheel


def installed_wheel() -> str | None:
    """The file URL the installed llama-cpp-python came from (None: not installed)."""
    try:
        dist = importlib.metadata.distribution("llama_cpp_python")
    except importlib.metadata.PackageNotFoundError:
        return None
    text = dist.read_text("direct_url.json")
    if not text:
        return f"version {dist.version} (not from a file)"
    return str(json.loads(text).get("url", ""))


def install_wheel(wheel: Path, *, log: Log = _quiet) -> None:
    """Install ``wheel`` with its server extra, unless this very file is installed."""
    url = installed_wheel()
    if url and url.endswith(f"/{build_key()}/{wheel.name}"):
        return
    _run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--force-reinstall", "--no-deps",
         str(wheel)],
        log=log, what="install llama-cpp-python",
    )  # fmt: skip
    # Its own dependencies and the server's (fastapi, uvicorn, ...), as usual from PyPI.
    _run(
        [sys.executable, "-m", "pip", "install", "--quiet", f"{wheel}[server]"],
        log=log, what="install llama-cpp-python server extra",
    )  # fmt: skip
    importlib.invalidate_caches()


# ----------------------------------------------------------------------------- the GGUF
def converter_dir(*, log: Log = _quiet) -> Path:
    """llama.cpp's ``convert_hf_to_gguf.py`` with its ``conversion`` and ``gguf-py``
    packages, unpacked once from the source archive."""
    folder = server_home() / "converter" / SDIST_SHA256[:12]
    if (folder / "convert_hf_to_gguf.py").is_file():
        return folder
    sdist = fetch_sdist(log=log)
    root = f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}/vendor/llama.cpp/"
    wanted = (root + "convert_hf_to_gguf.py", root + "conversion/", root + "gguf-py/")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as tmp, tarfile.open(sdist) as archive:
        staged = Path(tmp) / "converter"
        for member in archive.getmembers():
            if member.name.startswith(wanted) and (member.isfile() or member.isdir()):
                member.name = member.name[len(root) :]
                archive.extract(member, staged, filter="data")
        if not folder.exists():
            os.replace(staged, folder)
    return folder


def gguf_path(bundle_name: str = "qwen-0.5b", gguf_type: str = GGUF_TYPE) -> Path:
    bundle = get_bundle(bundle_name)
    key = hashlib.sha256(f"{SDIST_SHA256}:{gguf_type}:{BUILD_VERSION}".encode()).hexdigest()
    name = f"{bundle.name}-{bundle.sha256[:12]}-{gguf_type}-{key[:8]}.gguf"
    return server_home() / "gguf" / name


def convert_bundle(
    bundle_name: str = "qwen-0.5b", gguf_type: str = GGUF_TYPE, *, log: Log = _quiet
) -> Path:
    """The bundle's checkpoint as a GGUF file, converted once (``nice -n 19``)."""
    out = gguf_path(bundle_name, gguf_type)
    marker = out.with_suffix(".json")
    if out.is_file() and marker.is_file():
        if json.loads(marker.read_text()).get("size") == out.stat().st_size:
            return out
    try:
        import sentencepiece  # noqa: F401  (the converter imports it for every Qwen2)
    except ImportError:
        raise LlamaServerError(
            "Converting to GGUF needs sentencepiece: pip install 'pokegym[llm-server]'"
        ) from None
    checkpoint = ensure_checkpoint(bundle_name)
    script = converter_dir(log=log) / "convert_hf_to_gguf.py"
    out.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(out.with_suffix(".lock")):
        if out.is_file() and marker.is_file():
            return out
        start = time.perf_counter()
        partial = out.with_suffix(".partial")
        _run(
            [sys.executable, str(script), "--outtype", gguf_type, "--outfile", str(partial),
             str(checkpoint)],
            log=log, what=f"convert {bundle_name} to gguf",
        )  # fmt: skip
        os.replace(partial, out)
        marker.write_text(
            json.dumps(
                {
                    "bundle": bundle_name,
                    "type": gguf_type,
                    "size": out.stat().st_size,
                    "sha256": file_sha256(out),
                    "seconds": round(time.perf_counter() - start, 1),
                },
                indent=1,
            )
        )
        log(f"converted {bundle_name} to {out} in {time.perf_counter() - start:.0f} s")
    return out


@dataclass(frozen=True)
class ServerBuild:
    wheel: Path
    gguf: Path


def build(bundle_name: str = "qwen-0.5b", *, log: Log = _quiet) -> ServerBuild:
    """Everything the server needs, built or converted once, and the wheel installed."""
    wheel = build_wheel(log=log)
    install_wheel(wheel, log=log)
    return ServerBuild(wheel=wheel, gguf=convert_bundle(bundle_name, log=log))


# ---------------------------------------------------------------------------- the server
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LlamaServer:
    """``python -m llama_cpp.server`` on 127.0.0.1, as a context manager.

    Args:
        model_path: a GGUF file.
        alias: the model name clients send (``model=`` of the openai backend).
        port: default: a free port.
        n_ctx: context length in tokens (battle prompts are ~1,500 tokens).
        threads: CPU threads (default: the server's choice, half the cores).
        start_timeout: seconds to wait for the first answer.
        log_path: where the server's output goes (default: a temporary file).
    """

    def __init__(
        self,
        model_path: Path | str,
        *,
        alias: str = "qwen-0.5b",
        port: int | None = None,
        n_ctx: int = 4096,
        threads: int | None = None,
        start_timeout: float = 300.0,
        log_path: Path | str | None = None,
        extra_args: Sequence[str] = (),
    ):
        self.model_path = Path(model_path)
        self.alias = alias
        self.port = port or free_port()
        self.n_ctx = n_ctx
        self.threads = threads
        self.start_timeout = start_timeout
        self.log_path = Path(log_path) if log_path else None
        self.extra_args = list(extra_args)
        self.process: subprocess.Popen[bytes] | None = None
        self.start_seconds = 0.0
        self._log_handle: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model_path),
               "--model_alias", self.alias, "--host", "127.0.0.1", "--port", str(self.port),
               "--n_ctx", str(self.n_ctx)]  # fmt: skip
        if self.threads:
            cmd += ["--n_threads", str(self.threads), "--n_threads_batch", str(self.threads)]
        return cmd + self.extra_args

    def log_tail(self, n: int = 2000) -> str:
        if self.log_path is None or not self.log_path.is_file():
            return ""
        return self.log_path.read_text(errors="replace")[-n:]

    def start(self) -> LlamaServer:
        if self.process is not None:
            return self
        if not self.model_path.is_file():
            raise LlamaServerError(
                f"No GGUF file at {self.model_path}: run `pokegym llm server build`"
            )
        if self.log_path is None:
            handle, name = tempfile.mkstemp(prefix="llama-server-", suffix=".log")
            os.close(handle)
            self.log_path = Path(name)
        out = open(self.log_path, "wb")  # closed in stop()
        self._log_handle = out
        start = time.perf_counter()
        self.process = subprocess.Popen(
            self.command(), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        try:
            self._wait_ready(start)
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.perf_counter() - start
        return self

    def _wait_ready(self, start: float) -> None:
        assert self.process is not None
        url = f"{self.base_url}/models"
        while True:
            code = self.process.poll()
            if code is not None:
                raise LlamaServerError(
                    f"The llama.cpp server exited ({code}) before answering; its output "
                    f"({self.log_path}) ends:\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            if time.perf_counter() - start > self.start_timeout:
                raise LlamaServerError(
                    f"The llama.cpp server did not answer {url} within {self.start_timeout:.0f} s;"
                    f" its output ends:\n{self.log_tail()}"
                )
            time.sleep(0.25)

    def stop(self, timeout: float = 15.0) -> None:
        """Stop the server's process group: SIGTERM, then SIGKILL after ``timeout``."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout)
        elif process is not None:
            process.wait()
        if self._log_handle is not None:
            self._log_handle.close()
            self._log_handle = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
