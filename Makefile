# The two commands a new user runs: `make demo` and `make test`. Both build .venv by themselves.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-runtime
DEVSTAMP := $(VENV)/.installed-dev

.PHONY: demo test lint bench install dev clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(DEVSTAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@ $(STAMP)

install: $(STAMP)
dev: $(DEVSTAMP)

demo: $(STAMP)
	$(BIN)/folio demo

test: $(DEVSTAMP)
	$(BIN)/lint-imports
	$(BIN)/python -m pytest

lint: $(DEVSTAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

bench: $(DEVSTAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info
