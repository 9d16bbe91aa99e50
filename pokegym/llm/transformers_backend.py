"""The local backend: a causal language model run with PyTorch and transformers.

Speed comes from not computing the same prompt twice:

- **prefix cache**: the keys and values of recent prompts are kept (a few, least
  recently used first out). A new prompt reuses the longest token prefix it shares
  with one of them and computes only the rest, so the calls of one turn that all
  start with the same battle description pay for it once;
- **batched scoring**: the options of a ``score`` call are run as one packed row on top
  of the cached prompt (a block-diagonal causal mask keeps each option to the prompt and
  its own tokens); the requests of a ``score_batch`` call whose prompts end differently
  run as one padded batch on top of their shared prefix. Options are tokenized on their
  own, so a prompt meant for scoring should end at a natural token boundary (a newline,
  or the chat template's answer header).

**Deadlines**: inside :func:`pokegym.llm.call_deadline` a call stops once the deadline
passes, and raises :class:`~pokegym.llm.DeadlineExceededError`: the prompt is computed in
chunks of ``prefill_chunk`` tokens with the deadline checked between them (the chunks
already computed stay in the prefix cache, so the next call on that prompt resumes from
them), generation checks before each token, scoring before each batch.

The dtype is chosen for the machine by default (``dtype="auto"``, see
:mod:`pokegym.llm.dtypes`): bfloat16 on CPUs with AMX or AVX512-BF16, where it is about
twice as fast as float32 for the same answers up to rounding; float32 on CPUs that would
only emulate bfloat16 (many times slower there). The model runs on a CUDA GPU when
torch sees one (``device="auto"``, see :mod:`pokegym.devices`); the scores and
answers are the same as on the CPU up to rounding.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pokegym.devices import torch_device
from pokegym.llm.base import (
    BackendNotAvailableError,
    Completion,
    Cost,
    DeadlineExceededError,
    LLMError,
    Prompt,
    ScoreRequest,
    Scores,
    check_options,
    seconds_left,
)
from pokegym.llm.dtypes import choose_dtype, free_cores
from pokegym.llm.schema import finite_json_choices


def _import_torch() -> Any:
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError as error:
        raise BackendNotAvailableError(
            f"The transformers backend needs torch and transformers ({error}); install them "
            "with: pip install torch==2.13.0 'pokegym[llm]'"
        ) from None
    return torch


#: The fewest prompt tokens one forward pass computes when a deadline shrinks the chunks.
MIN_CHUNK = 16


@dataclass
class _Prefix:
    ids: tuple[int, ...]
    kv: list[tuple[Any, Any]]  # per layer (keys, values), batch 1
    last_logits: Any  # (vocab,) float32


def _common_length(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class TransformersModel:
    """A local causal LM (a folder with a transformers checkpoint, or a hub id).

    Args:
        model: a folder (``config.json``, weights, tokenizer) or a hub id (needs network
            on first use). Use :func:`pokegym.llm.make_model` for the offline bundles.
        dtype: ``"auto"`` (default: chosen for the machine, :func:`~pokegym.llm.dtypes.
            choose_dtype`), ``"bfloat16"``, ``"float32"`` or ``"float16"``.
        name: the name reported in results (default: the folder's name).
        max_prefixes: how many prompt prefixes keep their key/value cache.
        max_batch: most rows run in one forward pass when scoring (memory bound).
        threads: torch CPU threads for every call; default (None): at each call, as many
            as there are free cores (:func:`~pokegym.llm.dtypes.free_cores`), up to
            torch's own count, since threads that outnumber the free cores stall.
        cores_free: how many cores are free now (default:
            :func:`~pokegym.llm.dtypes.free_cores`; injectable).
        device: ``"auto"`` (default: the first CUDA GPU if torch sees one, else the
            CPU), ``"cpu"``, ``"cuda"`` or ``"cuda:<index>"``.
        prefill_chunk: prompt tokens computed per forward pass (the deadline is checked
            between chunks).
        clock: the ``time.monotonic``-like clock deadlines are read with (injectable).
    """

    backend = "transformers"

    def __init__(
        self,
        model: str | Path,
        *,
        dtype: str = "auto",
        name: str | None = None,
        max_prefixes: int = 4,
        max_batch: int = 32,
        threads: int | None = None,
        cores_free: Callable[[], int] | None = None,
        device: str = "auto",
        prefill_chunk: int = 512,
        clock: Callable[[], float] = time.monotonic,
    ):
        torch = _import_torch()
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device = torch_device(device)
        choice = choose_dtype(dtype, self.device)
        dtype = choice.dtype
        if threads:
            torch.set_num_threads(threads)
        self.threads = threads
        self.max_threads = torch.get_num_threads()

        self._cores_free = cores_free or free_cores
        start = time.perf_counter()
        source = str(model)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(source)
            self.model = AutoModelForCausalLM.from_pretrained(source, dtype=getattr(torch, dtype))
        except OSError as error:
            raise LLMError(
                f"Could not load a transformers model from {source!r}: {error}. Give a folder "
                "with config.json, weights and tokenizer files, a hub id on a machine online, "
                "or an offline bundle name such as 'qwen-0.5b'."
            ) from None
        self.model.to(self.device)
        self.model.eval()
        self.load_seconds = time.perf_counter() - start
        self.name = name or Path(source).name or source
        self.dtype = dtype
        self.dtype_reason = choice.reason
        self.max_prefixes = max_prefixes
        self.max_batch = max_batch
        if prefill_chunk < 1:
            raise ValueError("prefill_chunk is a number of tokens (1 or more)")
        self.prefill_chunk = int(prefill_chunk)
        self._prefill_rate: float | None = None  # prompt tokens per second, measured
        self.clock = clock
        self._torch = torch
        self._prefixes: list[_Prefix] = []
        self._eos = self._eos_ids()
        # transformers 5.24 renamed the forward's `past_key_values` to `cache`.
        params = inspect.signature(self.model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        self._pad = self.tokenizer.pad_token_id
        if self._pad is None:
            self._pad = next(iter(self._eos), 0)

    # ------------------------------------------------------------------ prompts
    def _eos_ids(self) -> set[int]:
        ids: set[int] = set()
        for source in (self.model.generation_config, self.tokenizer):
            value = getattr(source, "eos_token_id", None)
            if isinstance(value, int):
                ids.add(value)
            elif value:
                ids.update(int(v) for v in value)
        return ids

    def render(self, prompt: Prompt) -> str:
        """The prompt as the model sees it (chat template applied to messages)."""
        if isinstance(prompt, str):
            return prompt
        messages = [dict(m) for m in prompt]
        if not messages:
            raise ValueError("a prompt needs at least one message")
        continuing = messages[-1]["role"] == "assistant"
        if getattr(self.tokenizer, "chat_template", None):
            text = self.tokenizer.apply_chat_template(
                messages,
                tokenize=False,
                add_generation_prompt=not continuing,
                continue_final_message=continuing,
            )
            return str(text)
        lines = [f"{m['role']}: {m['content']}" for m in messages]
        if not continuing:
            lines.append("assistant:")
        return "\n".join(lines) + ("" if continuing else " ")

    def tokenize(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def count_tokens(self, prompt: Prompt) -> int:
        return len(self.tokenize(self.render(prompt)))

    def clear_cache(self) -> None:
        """Forget every cached prefix (the next call computes its prompt in full)."""
        self._prefixes.clear()

    # ------------------------------------------------------------- forward passes
    def _cache(self, kv: list[tuple[Any, Any]]) -> Any:
        from transformers import DynamicCache

        return DynamicCache(ddp_cache_data=kv, config=self.model.config)

    @staticmethod
    def _out_cache(out: Any) -> Any:
        cache = out.get("cache")
        return out.get("past_key_values") if cache is None else cache

    def _kv_of(self, out: Any) -> list[tuple[Any, Any]]:
        return [(layer.keys, layer.values) for layer in self._out_cache(out).layers]

    def _pick_threads(self) -> None:
        """Fixed ``threads``, or the free cores now (see the class docstring)."""
        if self.threads or self.device.type != "cpu":
            return
        wanted = max(1, min(self.max_threads, self._cores_free()))
        if wanted != self._torch.get_num_threads():
            self._torch.set_num_threads(wanted)

    def _check_deadline(self, what: str) -> None:
        left = seconds_left(self.clock)
        if left is not None and left <= 0:
            raise DeadlineExceededError(
                f"{self.name}: {what} ran {-left:.2f} s past the call's deadline and was stopped"
            )

    def _chunk_tokens(self) -> int:
        """Prompt tokens for the next forward pass: ``prefill_chunk``, fewer when the
        deadline is near (what the measured rate computes in half the time left), so a
        chunk does not run far past it; at least ``MIN_CHUNK``."""
        left = seconds_left(self.clock)
        if left is None or self._prefill_rate is None:
            return self.prefill_chunk
        fits = int(0.5 * left * self._prefill_rate)
        return max(MIN_CHUNK, min(self.prefill_chunk, fits))

    def _measured_prefill(self, tokens: int, seconds: float) -> None:
        if tokens < MIN_CHUNK or seconds <= 0:
            return
        rate = tokens / seconds
        old = self._prefill_rate
        self._prefill_rate = rate if old is None else 0.5 * old + 0.5 * rate

    def _remember(self, entry: _Prefix) -> None:
        self._prefixes.append(entry)
        if len(self._prefixes) > self.max_prefixes:
            self._prefixes.pop(0)

    def _prefill(self, ids: list[int]) -> tuple[_Prefix, int, int]:
        """Keys/values and last logits of ``ids``; returns (entry, computed, reused).

        The new tokens run in chunks of ``prefill_chunk``; past the deadline, what was
        computed is kept in the prefix cache and :class:`DeadlineExceededError` raised."""
        torch = self._torch
        key = tuple(ids)
        best, reuse = None, 0
        for entry in self._prefixes:
            if entry.ids == key:
                self._prefixes.remove(entry)
                self._prefixes.append(entry)
                return entry, 0, len(ids)
            common = min(_common_length(entry.ids, key), len(ids) - 1)
            if common > reuse:
                best, reuse = entry, common
        if best is not None and reuse > 0:
            cache = self._cache([(k[:, :, :reuse], v[:, :, :reuse]) for k, v in best.kv])
        else:
            from transformers import DynamicCache

            cache = DynamicCache(config=self.model.config)
        done, out = reuse, None
        while done < len(ids):
            try:
                self._check_deadline(f"the prompt ({done} of {len(ids)} tokens computed)")
            except DeadlineExceededError:
                if out is not None:  # keep the chunks computed: the next call resumes there
                    self._remember(_Prefix(key[:done], self._kv_of(out), out.logits[0, -1].float()))
                raise
            chunk = ids[done : done + self._chunk_tokens()]
            rest = torch.tensor([chunk], dtype=torch.long, device=self.device)
            began = self.clock()
            out = self.model(input_ids=rest, logits_to_keep=1, use_cache=True,
                             **{self._cache_kw: cache})  # fmt: skip
            self._measured_prefill(len(chunk), self.clock() - began)
            cache = self._out_cache(out)
            done += len(chunk)
        assert out is not None  # reuse < len(ids): at least one chunk ran
        entry = _Prefix(key, self._kv_of(out), out.logits[0, -1].float())
        self._remember(entry)
        return entry, len(ids) - reuse, reuse

    def _forward_rows(
        self,
        kv: list[tuple[Any, Any]],
        past_mask: Any,
        rows: list[list[int]],
        positions: list[int],
    ) -> tuple[Any, list[tuple[Any, Any]], Any]:
        """Run right-padded ``rows`` on top of a batched cache; row i starts at positions[i].

        ``kv`` has the batch size of ``rows``; ``past_mask`` (rows x cached length) marks
        the cached positions each row may attend to. Returns (logits, new kv, new mask).
        """
        torch = self._torch
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self._pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        pos = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
            mask[i, : len(row)] = 1
            pos[i] = positions[i] + torch.arange(width)
        ids, mask, pos = ids.to(self.device), mask.to(self.device), pos.to(self.device)
        full_mask = torch.cat([past_mask, mask], dim=1)
        out = self.model(
            input_ids=ids,
            attention_mask=full_mask,
            position_ids=pos,
            use_cache=True,
            **{self._cache_kw: self._cache(kv)},
        )
        return out.logits.float(), self._kv_of(out), full_mask

    def _score_packed(
        self,
        entry: _Prefix,
        length: int,
        option_ids: list[list[list[int]]],
        jobs: list[tuple[int, int]],
        logprobs: list[list[float]],
    ) -> int:
        """Add the log-probabilities of the later tokens of the options ``jobs`` names, all
        continuing the cached prompt ``entry`` (``length`` tokens), to ``logprobs``.

        The options' tokens are packed into one row, each attending to the prompt and to its
        own earlier tokens only (a block-diagonal causal mask), so the prompt's keys and
        values are read once instead of copied once per option: on a 3,452-token prompt this
        is 5.8 times faster on a CPU than a padded batch of one row per option
        (bench/llm_scoring.py).
        Returns the tokens computed."""
        torch = self._torch
        self._check_deadline("scoring")
        spans = [len(option_ids[i][j]) - 1 for i, j in jobs]
        width = sum(spans)
        packed = [t for i, j in jobs for t in option_ids[i][j][:-1]]
        positions = [length + k for span in spans for k in range(span)]
        mask = torch.zeros((1, 1, width, length + width), dtype=torch.bool)
        mask[..., :length] = True
        start = 0
        for span in spans:
            block = torch.ones((span, span), dtype=torch.bool).tril()
            mask[0, 0, start : start + span, length + start : length + start + span] = block
            start += span
        out = self.model(
            input_ids=torch.tensor([packed], dtype=torch.long, device=self.device),
            attention_mask=mask.to(self.device),
            position_ids=torch.tensor([positions], dtype=torch.long, device=self.device),
            use_cache=True,
            **{self._cache_kw: self._cache(entry.kv)},
        )
        logp = torch.log_softmax(out.logits[0].float(), -1)
        start = 0
        for (i, j), span in zip(jobs, spans, strict=True):
            targets = torch.tensor(option_ids[i][j][1:], dtype=torch.long, device=self.device)
            picked = logp[start : start + span].gather(1, targets[:, None])
            logprobs[i][j] += float(picked.sum())
            start += span
        return width

    # -------------------------------------------------------------------- score
    def score(self, prefix: Prompt, options: Sequence[str]) -> Scores:
        return self.score_batch([ScoreRequest(prefix, options)])[0]

    def score_batch(self, requests: Sequence[ScoreRequest]) -> list[Scores]:
        """Score all requests in batched passes over their longest shared token prefix."""
        torch = self._torch
        if not requests:
            return []
        start = time.perf_counter()
        self._pick_threads()
        prompts = [self.tokenize(self.render(r.prefix)) for r in requests]
        option_ids = [[self.tokenize(o) for o in check_options(r.options)] for r in requests]
        for opts, request in zip(option_ids, requests, strict=True):
            for ids, text in zip(opts, request.options, strict=True):
                if not ids:
                    raise ValueError(f"option {text!r} has no tokens")
        if any(not p for p in prompts):
            raise ValueError("score() needs a non-empty prefix")
        common = len(prompts[0])
        for p in prompts[1:]:
            common = min(common, _common_length(prompts[0], p))
        common = max(common, 1)
        computed = 0
        with torch.inference_mode():
            entry, done, reused = self._prefill(prompts[0][:common])
            computed += done
            n = len(requests)
            rests = [p[common:] for p in prompts]
            first_logp = []
            if any(rests):
                self._check_deadline("scoring")
                # Stage A: each request's own remainder, as one padded batch.
                kv = [(k.expand(n, -1, -1, -1), v.expand(n, -1, -1, -1)) for k, v in entry.kv]
                past = torch.ones((n, common), dtype=torch.long, device=self.device)
                rows = [r or [self._pad] for r in rests]
                logits, kv_a, mask_a = self._forward_rows(kv, past, rows, [common] * n)
                # A request without a remainder took a dummy pad token: drop it from the mask.
                for i, r in enumerate(rests):
                    if not r:
                        mask_a[i, common:] = 0
                        first_logp.append(torch.log_softmax(entry.last_logits, -1))
                    else:
                        first_logp.append(torch.log_softmax(logits[i, len(r) - 1], -1))
                        computed += len(r)
            else:
                kv_a = entry.kv
                mask_a = torch.ones((1, common), dtype=torch.long, device=self.device)
                first_logp = [torch.log_softmax(entry.last_logits, -1)] * n
            logprobs = [
                [float(first_logp[i][ids[0]]) for ids in opts] for i, opts in enumerate(option_ids)
            ]
            # Stage B: the later tokens of multi-token options, in chunks of max_batch rows.
            jobs = [
                (i, j)
                for i, opts in enumerate(option_ids)
                for j, ids in enumerate(opts)
                if len(ids) > 1
            ]
            shared = not any(rests)
            if shared and jobs:  # one packed row over the one cached prompt
                computed += self._score_packed(entry, common, option_ids, jobs, logprobs)
                jobs = []
            for c in range(0, len(jobs), self.max_batch):
                chunk = jobs[c : c + self.max_batch]
                self._check_deadline(f"scoring (batch {c // self.max_batch + 1})")
                index = torch.tensor(
                    [0 if shared else i for i, _ in chunk], dtype=torch.long, device=self.device
                )
                kv = [(k[index], v[index]) for k, v in kv_a]
                past = mask_a[index]
                rows = [option_ids[i][j][:-1] for i, j in chunk]
                positions = [common + len(rests[i]) for i, _ in chunk]
                logits, _, _ = self._forward_rows(kv, past, rows, positions)
                logp = torch.log_softmax(logits, -1)
                for row, (i, j) in enumerate(chunk):
                    ids = option_ids[i][j]
                    targets = torch.tensor(ids[1:], dtype=torch.long, device=self.device)
                    picked = logp[row, : len(ids) - 1].gather(1, targets[:, None])
                    logprobs[i][j] += float(picked.sum())
                    computed += len(ids) - 1
        seconds = time.perf_counter() - start
        cost = Cost(tokens_in=computed, cached_tokens=reused, calls=1, seconds=seconds)
        results = []
        for k, (request, opts) in enumerate(zip(requests, option_ids, strict=True)):
            results.append(
                Scores(
                    options=list(request.options),
                    logprobs=logprobs[k],
                    n_tokens=[len(ids) for ids in opts],
                    # The whole batch's cost is reported on the first result only, so
                    # that adding up the results' costs counts it once.
                    cost=cost if k == 0 else Cost(),
                )
            )
        return results

    # ----------------------------------------------------------------- complete
    def complete(
        self,
        messages: Prompt,
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
    ) -> Completion:
        """Generate an answer; with a finite ``json_schema`` only its instances can come out.

        A schema whose every value is an ``enum``/``const``/boolean has finitely many
        instances: decoding is then restricted token by token to the tokens of those
        JSON texts (``json.dumps`` layout), so the answer always parses and validates.
        Other schemas are generated freely; the caller validates (see
        :func:`pokegym.llm.decide.parse_json_answer`).
        """
        torch = self._torch
        if max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        start = time.perf_counter()
        self._pick_threads()
        ids = self.tokenize(self.render(messages))
        if not ids:
            raise ValueError("complete() needs a non-empty prompt")
        generator = None
        if seed is not None:
            generator = torch.Generator(device=self.device).manual_seed(seed)
        trie = None
        if json_schema is not None:
            choices = finite_json_choices(json_schema)
            if choices is not None:
                trie = _Trie([self.tokenize(json.dumps(c)) for c in choices])
        out_ids: list[int] = []
        finish = "length"
        with torch.inference_mode():
            entry, computed, reused = self._prefill(ids)
            logits = entry.last_logits
            cache = self._cache(entry.kv)
            position = len(ids)
            node = trie.root if trie is not None else None
            for _ in range(max_tokens):
                if node is not None:
                    allowed = list(node.children)
                    if node.terminal:
                        allowed += sorted(self._eos)
                    masked = torch.full_like(logits, float("-inf"))
                    masked[allowed] = logits[allowed]
                    logits = masked
                token = self._pick(logits, temperature, generator)
                if token in self._eos:
                    finish = "stop"
                    break
                out_ids.append(token)
                if node is not None:
                    node = node.children[token]
                    if not node.children:
                        finish = "stop"
                        break
                self._check_deadline(f"generation ({len(out_ids)} tokens out)")
                out = self.model(
                    input_ids=torch.tensor([[token]], dtype=torch.long, device=self.device),
                    position_ids=torch.tensor([[position]], dtype=torch.long, device=self.device),
                    use_cache=True,
                    **{self._cache_kw: cache},
                )
                cache = self._out_cache(out)
                logits = out.logits[0, -1].float()
                position += 1
        text = self.tokenizer.decode(out_ids, skip_special_tokens=True)
        cost = Cost(
            tokens_in=computed,
            tokens_out=len(out_ids),
            cached_tokens=reused,
            calls=1,
            seconds=time.perf_counter() - start,
        )
        return Completion(text=text, cost=cost, finish_reason=finish)

    def _pick(self, logits: Any, temperature: float, generator: Any) -> int:
        torch = self._torch
        if temperature <= 0:
            return int(torch.argmax(logits))
        probs = torch.softmax(logits / temperature, -1)
        return int(torch.multinomial(probs, 1, generator=generator))


class _Node:
    __slots__ = ("children", "terminal")

    def __init__(self) -> None:
        self.children: dict[int, _Node] = {}
        self.terminal = False


class _Trie:
    """Token sequences of the allowed answers, for constrained decoding."""

    def __init__(self, sequences: list[list[int]]):
        self.root = _Node()
        for seq in sequences:
            node = self.root
            for token in seq:
                node = node.children.setdefault(token, _Node())
            node.terminal = True
