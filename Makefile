# One task runner for developers and CI (.ci/run calls `make test`).
# Prerequisites: Python 3.10+ (with venv) and Java 17+. Everything else is installed into .venv.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PIP    := $(BIN)/python -m pip

.PHONY: help venv demo test lint typecheck unit bench docs clean

help:
	@echo "make demo   - set up .venv and run the main job on the embedded default"
	@echo "make test   - set up .venv and run the linters, the type checker and all tests"
	@echo "make bench  - run the benchmarks in bench/ (not tests)"
	@echo "make clean  - remove .venv and build/test artefacts"

$(STAMP): pyproject.toml .ci/constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python 3.10+ is required (found " + sys.version.split()[0] + ")")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -c .ci/constraints.txt -e ".[dev]"
	@touch $(STAMP)

venv: $(STAMP)

# The main job. It grows with the kit; the command stays `make demo`.
# Today: Kafka's FileStream quickstart on the embedded broker, run by `cdk standalone`.
demo: $(STAMP)
	$(BIN)/cdk --version
	$(BIN)/cdk plugins --type source --type sink
	$(BIN)/python -m harness.quickstart

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/python bench/json_converter.py
	$(BIN)/python bench/worker_throughput.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis reports
