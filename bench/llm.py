"""The model work of an LLM agent's turn, on the offline 0.5B bundle, by scoring vs. generation.

    pokegym bench llm [--quick] [--model qwen-0.5b] [--dtype auto]

The prompt is a real battle's: a seeded Gen 9 OU battle is played (random legal
moves) until our side has 12 legal actions, and its prompt is rendered with team,
state, history of the last turns and game knowledge (~1,500 tokens). Measured:

(a) ``choice``: one choice among the 12 legal actions by scoring, cold (no cached
    prefix; the process has warmed up with one short call);
(b) one PokéChamp-style turn: one action proposal over the 12 actions, one opponent
    prediction, 12 leaf evaluations (score buckets 0-9), either
    - ``score_turn``: choice scoring with prefix reuse, the 12 leaves in one batch, or
    - ``gen_turn``: the baseline, one free JSON generation per call (14 calls, each
      computing its whole prompt: no cache).

Leaf texts stand in for the world model's outcome descriptions (same length and
shape); they affect only what is scored, not how. Times are medians over the
repetitions; the machine may be shared, so single runs are noisy.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from pokegym.actions import ActionCodec
from pokegym.backends.sim import SimBattleSession
from pokegym.formats import resolve_format
from pokegym.llm import ScoreRequest, make_model
from pokegym.llm.dtypes import cpu_capability
from pokegym.showdown.simulator import shared_simulator
from pokegym.teams import builtin_pool
from pokegym.text import VALUE_BUCKETS, BattlePrompter, legal_actions


def _battle_at_12_actions(seed: int = 7) -> tuple[Any, Any, Any]:
    sim = shared_simulator()
    sim.ensure_running()
    fmt = resolve_format("gen9ou", simulator=sim)
    pool = builtin_pool("gen9ou")
    rng = np.random.default_rng(seed)
    codec = ActionCodec(fmt.gimmick)
    prompter = BattlePrompter(history_turns=6, knowledge=True, codec=codec)
    for attempt in range(20):
        teams = [pool.sample(rng).text, pool.sample(rng).text]
        session = SimBattleSession(sim, fmt, teams=teams, seeds=(seed + attempt, 1, 2))
        prompter.attach(session.battles[0])
        best = None
        for _ in range(60):
            if session.finished:
                break
            battle = session.battles[0]
            if (
                session.needs_choice(0)
                and not battle.teampreview
                and battle.turn >= 8
                and len(codec.legal_actions(battle)) >= 12
            ):
                best = battle
                break
            choices = {}
            for side in (0, 1):
                if session.needs_choice(side):
                    view = session.battles[side]
                    legal = codec.legal_actions(view)
                    # Prefer moves (no tera) so that the battle keeps 12+ options.
                    moves = [a for a in legal if a < 4] or legal
                    choices[side] = codec.to_choice(int(rng.choice(moves)), view)
            session.choose(choices)
        if best is not None:
            return session, best, prompter
        session.close()
    raise RuntimeError("no battle state with 12 legal actions was reached")


def _leaf_texts(actions: list[Any], opponent: str) -> list[str]:
    leaves = []
    for k, action in enumerate(actions):
        ours = 100 - (17 * k) % 60
        theirs = (41 * k) % 100
        leaves.append(
            f"You choose {action.label}; the opponent chooses {opponent}. Expected result after "
            f"the turn: your active Pokémon at {ours}% HP, the opposing active Pokémon at "
            f"{theirs}% HP; no Pokémon fainted."
        )
    return leaves


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pokegym bench llm", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repetition instead of three")
    parser.add_argument("--model", default="qwen-0.5b")
    parser.add_argument(
        "--dtype",
        default="auto",
        choices=["auto", "bfloat16", "float32"],
        help="auto: bfloat16 where the CPU computes it natively, else float32",
    )
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch CPU threads (1 is faster on a busy machine)",
    )
    return parser


@dataclass(frozen=True)
class _TurnPrompts:
    """The prompts of one PokéChamp-style turn, rendered from a real battle."""

    battle_turn: int
    action_messages: list[dict[str, str]]
    labels: list[str]
    opponent_messages: list[dict[str, str]]
    opponent_labels: list[str]
    value_prompts: list[list[dict[str, str]]]


def _turn_prompts() -> _TurnPrompts:
    session, battle, prompter = _battle_at_12_actions()
    try:
        actions = legal_actions(battle, prompter.codec)[:12]
        action_messages, actions = prompter.action_prompt(battle, actions)
        # The opponent's candidate actions: what it can really do now (its own legal
        # actions), standing in for the candidates an opponent model would propose.
        opponent_view = session.battles[1]
        opponent_labels = [a.label for a in legal_actions(opponent_view, prompter.codec)]
        opponent_messages, opponent_labels = prompter.opponent_prompt(battle, opponent_labels)
        leaves = _leaf_texts(actions, opponent_labels[0])
        value_prompts = [prompter.value_prompt(battle, leaf)[0] for leaf in leaves]
    finally:
        session.close()
    return _TurnPrompts(
        battle_turn=battle.turn,
        action_messages=action_messages,
        labels=[a.label for a in actions],
        opponent_messages=opponent_messages,
        opponent_labels=opponent_labels,
        value_prompts=value_prompts,
    )


@dataclass
class _Repetition:
    """One repetition's seconds and costs."""

    choice_s: float
    score_s: float
    gen_s: float
    score_cost: Any
    gen_cost: Any
    summary: str


def _repeat_turn(model: Any, prompts: _TurnPrompts) -> _Repetition:
    """(a) one cold choice, (b) the turn by scoring, then by generation."""
    p = prompts
    model.clear_cache()
    t = time.perf_counter()
    scores = model.score(p.action_messages, p.labels)
    choice_s = time.perf_counter() - t

    model.clear_cache()
    t = time.perf_counter()
    proposal = model.score(p.action_messages, p.labels)
    prediction = model.score(p.opponent_messages, p.opponent_labels)
    values = model.score_batch([ScoreRequest(v, VALUE_BUCKETS) for v in p.value_prompts])
    score_s = time.perf_counter() - t
    score_cost = proposal.cost + prediction.cost
    for v in values:
        score_cost = score_cost + v.cost

    json_hint = '\nReply with only a JSON object {"choice": <label>}.'
    t = time.perf_counter()
    gen_cost = None
    answers = []
    for messages in [p.action_messages, p.opponent_messages, *p.value_prompts]:
        model.clear_cache()
        asked = [dict(m) for m in messages]
        asked[-1]["content"] += json_hint
        completion = model.complete(asked, max_tokens=24)
        answers.append(completion.text)
        gen_cost = completion.cost if gen_cost is None else gen_cost + completion.cost
    gen_s = time.perf_counter() - t
    expected = [round(v.expectation([float(b) for b in VALUE_BUCKETS]), 2) for v in values]
    summary = (
        f"scored choice {p.labels[scores.best()]!r}, "
        f"predicted {p.opponent_labels[prediction.best()]!r}, leaf values {expected[:4]}...; "
        f"generated answers e.g. {answers[0]!r}, {answers[2]!r}"
    )
    return _Repetition(choice_s, score_s, gen_s, score_cost, gen_cost, summary)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 3)

    import torch

    prompts = _turn_prompts()
    start = time.perf_counter()
    model = make_model(args.model, dtype=args.dtype, threads=args.threads)
    load_s = time.perf_counter() - start
    prompt_tokens = model.count_tokens(prompts.action_messages)
    print(
        f"model {model.name} ({model.dtype}: {getattr(model, 'dtype_reason', 'as asked')}; "
        f"{torch.get_num_threads()} threads; CPU capability {cpu_capability()}), loaded in "
        f"{load_s:.2f} s; battle turn {prompts.battle_turn}, prompt {prompt_tokens} tokens, "
        f"{len(prompts.labels)} legal actions, "
        f"{len(prompts.opponent_labels)} opponent options, {len(prompts.value_prompts)} leaves, "
        f"{repeats} repetition(s)"
    )
    first = time.perf_counter()
    model.score([{"role": "user", "content": "Warm up."}], ["yes", "no"])
    print(f"first call after load (warm-up, 4 tokens): {time.perf_counter() - first:.2f} s")

    runs = []
    for rep in range(repeats):
        run = _repeat_turn(model, prompts)
        runs.append(run)
        print(
            f"rep {rep + 1}: choice {run.choice_s:.2f} s, score turn {run.score_s:.2f} s, "
            f"gen turn {run.gen_s:.2f} s; {run.summary}"
        )
    score_cost, gen_cost = runs[-1].score_cost, runs[-1].gen_cost
    print(
        f"per turn by scoring: {score_cost.calls} calls, {score_cost.tokens_in} tokens computed, "
        f"{score_cost.cached_tokens} reused from the cache, {score_cost.tokens_out} generated"
    )
    print(
        f"per turn by generation: {gen_cost.calls} calls, {gen_cost.tokens_in} tokens computed, "
        f"{gen_cost.tokens_out} generated"
    )
    choice = statistics.median(r.choice_s for r in runs)
    score_turn = statistics.median(r.score_s for r in runs)
    gen_turn = statistics.median(r.gen_s for r in runs)
    print(
        f"choice_s={choice:.2f} score_turn_s={score_turn:.2f} gen_turn_s={gen_turn:.2f} "
        f"speedup={gen_turn / score_turn:.1f}x load_s={load_s:.2f} prompt_tokens={prompt_tokens}"
    )
    return 0
