# apiforge — the two Quickstart commands are `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo wheels test check golden bench corpus client-corpus chaos crash serve redis-server postgresql wrk clean

$(STAMP): pyproject.toml hatch_build.py generator/spec/_ryml_data.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Debian's redis-server: the test suite starts its own instance on a free port.
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
	  echo "installing redis-server from Debian's packages"; \
	  (apt-get update -qq && apt-get install -y -qq redis-server >/dev/null) || \
	  (sudo apt-get update -qq && sudo apt-get install -y -qq redis-server >/dev/null); }

# Debian's PostgreSQL server binaries (initdb, pg_ctl): the test suite starts its own cluster
# on a free port in a temporary folder (as root, it runs it as the `postgres` user).
postgresql:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || { \
	  echo "installing postgresql from Debian's packages"; \
	  (apt-get update -qq && apt-get install -y -qq postgresql >/dev/null) || \
	  (sudo apt-get update -qq && sudo apt-get install -y -qq postgresql >/dev/null); }

# Debian's wrk, for bench/transaction_bench.py
wrk:
	@command -v wrk >/dev/null 2>&1 || { \
	  echo "installing wrk from Debian's packages"; \
	  (apt-get update -qq && apt-get install -y -qq wrk >/dev/null) || \
	  (sudo apt-get update -qq && sudo apt-get install -y -qq wrk >/dev/null); }

# generates specs/acme.yaml's server and client into .demo/, serves it on 127.0.0.1 for a
# scripted client session, then stops it; `make serve` keeps the demo server running
demo: $(STAMP)
	$(BIN)/python -m generator.demo

serve: $(STAMP)
	$(BIN)/python -m generator.demo serve

# bytecode compiled up front: the suite starts apiforge in hundreds of subprocesses, and where
# PYTHONDONTWRITEBYTECODE is set each would compile the generator from source again (a lint of
# acme: 0.69 s without, 0.20 s with, paired runs)
test: check redis-server postgresql
	$(BIN)/python -m compileall -q generator tests
	$(BIN)/pytest -q

# the project's own code, and the runtimes copied into generated packages, at the same bar
check: $(STAMP)
	$(BIN)/ruff check generator tests templates bench
	$(BIN)/ruff format --check generator tests templates bench
	$(BIN)/mypy
	$(BIN)/mypy --strict templates/client/runtime
	MYPYPATH=templates/server $(BIN)/mypy --strict --explicit-package-bases templates/server/runtime

golden: $(STAMP)
	$(BIN)/python -m tests.golden_update

# side by side with the tools users would pick instead (peers install into bench/.peers)
bench: $(STAMP)
	$(BIN)/python bench/inspect_bench.py
	$(BIN)/python bench/lint_bench.py
	$(BIN)/python bench/fix_bench.py
	$(BIN)/python bench/run.py
	$(BIN)/python bench/server_bench.py
	$(BIN)/python bench/ratelimit_redis_bench.py

# the real-world corpus sweep (`apiforge generate` on every spec, long) → docs/corpus.md;
# re-run what was not ok: make corpus CORPUS_ARGS="--specs-from bench/results/corpus.failed.txt"
corpus: $(STAMP)
	$(BIN)/python bench/corpus_sweep.py $(CORPUS_ARGS)

# the generated client on the corpus: pagination styles, mypy --strict on 24 clients, streams
# → docs/client.md (the mypy part takes ~15 minutes)
client-corpus: $(STAMP)
	$(BIN)/python bench/client_corpus.py

# the full-size chaos run (make test runs a bounded one) → figures for docs/reliability.md
chaos: $(STAMP) redis-server
	CHAOS_PAYMENTS=1000 CHAOS_THREADS=8 CHAOS_STORM_CLIENTS=8 CHAOS_STORM_INCREMENTS=50 CHAOS_RATE_WINDOWS=20 $(BIN)/pytest -q tests/chaos

# the full-size crash run: workers SIGKILLed at seeded points (make test runs a bounded one)
crash: $(STAMP) postgresql
	CRASH_KEYS=60 CRASH_THREADS=4 $(BIN)/pytest -q tests/crash

# the compiled wheel (this Python's tag) and the pure-Python one (py3-none-any)
wheels: $(STAMP)
	$(BIN)/python -m pip wheel --quiet --no-deps -w dist .
	APIFORGE_PURE_WHEEL=1 $(BIN)/python -m pip wheel --quiet --no-deps -w dist .
	ls dist/apiforge-*.whl

clean:
	rm -rf $(VENV) build dist .demo
