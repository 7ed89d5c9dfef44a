# The two commands a new user runs: `make demo` and `make test`. Both build .venv by themselves:
# `make demo` with the runtime only (offline chat in the terminal), `make test` and `make check` with
# the dev extras. `make check` is the edit-test loop: lint, unit and contract tests.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-runtime
DEVSTAMP := $(VENV)/.installed-dev

# Test processes (pytest-xdist): some tests wait on subprocesses and servers, so one more than the
# cores of this 2-core machine keeps them busy; each process also collects every test and starts a
# fork server, so more cost more (one local run each: -n 2 3:48, -n 3 3:24, -n 4 3:40).
# --dist worksteal: a process that runs out of tests takes half of another's queue, so no process
# finishes half a minute after the rest (4:34 -> 4:15 with -n 4).
JOBS ?= 3

# folio is installed editable: its modules are compiled from src/ the first time they run. A shell
# that sets PYTHONDONTWRITEBYTECODE (some containers do) would make every folio process (a test
# suite starts hundreds) compile them all again; Python's default, caching the bytecode, is kept.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test check lint bench install dev clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# --no-compile: pip would compile every module of every package it installs (torch's thousands
# included) to bytecode, a third of the dev install's time; Python compiles and caches the modules
# a program imports the first time it imports them.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q --no-compile -e .
	touch $@

$(DEVSTAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q --no-compile -e '.[dev]'
	touch $@ $(STAMP)

install: $(STAMP)
dev: $(DEVSTAMP)

demo: $(STAMP)
	$(BIN)/folio demo

# The layer contracts (lint-imports) are checked by a test of the suite (tests/unit/test_layers.py).
test: $(DEVSTAMP)
	$(BIN)/python -m pytest -n $(JOBS) --dist worksteal --durations=25

check: lint
	$(BIN)/python -m pytest -n $(JOBS) --dist worksteal tests/unit tests/contract

lint: $(DEVSTAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

bench: $(DEVSTAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info
