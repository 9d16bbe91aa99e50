"""Language models for agents: one Protocol, three backends, an offline model bundle.

Build a model by name and hand it to an agent::

    from pokegym.llm import make_model, choose

    model = make_model("qwen-0.5b")                      # offline bundle (transformers)
    model = make_model("transformers", model="/path/to/checkpoint")
    model = make_model("openai", model="qwen2.5", base_url="http://127.0.0.1:8000/v1")
    model = make_model("scripted", completions=['{"choice": "move Thunderbolt"}'])

    scores = model.score(messages, ["move Thunderbolt", "switch Garchomp"])
    decision = choose(model, messages, options, reasoning=False)

Nothing heavy is imported until a model is built.
"""

from __future__ import annotations

from typing import Any

from pokegym.llm.base import (
    AnswerFormatError,
    BackendNotAvailableError,
    BundleChecksumError,
    Completion,
    ConvertedModelError,
    Cost,
    DeadlineExceededError,
    EndpointError,
    LanguageModel,
    LLMError,
    Message,
    ModelBundleError,
    Prompt,
    ScoreRequest,
    Scores,
    call_deadline,
)
from pokegym.llm.bundle import BUNDLES, ensure_checkpoint
from pokegym.llm.decide import Decision, choice_schema, choose, parse_json_answer
from pokegym.llm.openai_backend import OpenAIModel
from pokegym.llm.scripted import ScriptedModel
from pokegym.llm.transformers_backend import TransformersModel

__all__ = [
    "BACKENDS",
    "AnswerFormatError",
    "BackendNotAvailableError",
    "BundleChecksumError",
    "Completion",
    "ConvertedModelError",
    "Cost",
    "DeadlineExceededError",
    "Decision",
    "EndpointError",
    "LLMError",
    "LanguageModel",
    "Message",
    "ModelBundleError",
    "Prompt",
    "ScoreRequest",
    "Scores",
    "call_deadline",
    "choice_schema",
    "choose",
    "make_model",
    "parse_json_answer",
]

BACKENDS = ("transformers", "openai", "scripted")


def make_model(name: str, **options: Any) -> LanguageModel:
    """A model by backend or bundle name.

    ``name`` is a bundle (``"qwen-0.5b"``, ``"qwen-1.5b"``: verified, converted on
    first use, then loaded with transformers), a backend (``"transformers"`` with
    ``model=`` a folder or hub id; ``"openai"`` with ``model=`` and ``base_url=``;
    ``"scripted"`` with ``completions=``/``scores=``), or ``"transformers:<folder>"``.
    ``options`` go to the backend's constructor.
    """
    if name in BUNDLES:
        options.setdefault("name", name)
        return TransformersModel(ensure_checkpoint(name), **options)
    backend, _, target = name.partition(":")
    if backend == "transformers":
        if target:
            options["model"] = target
        return TransformersModel(**options)
    if backend == "openai":
        if target:
            options["model"] = target
        return OpenAIModel(**options)
    if backend == "scripted":
        return ScriptedModel(**options)
    raise ValueError(
        f"Unknown model {name!r}: use a bundle ({', '.join(BUNDLES)}) or a backend "
        f"({', '.join(BACKENDS)})."
    )
