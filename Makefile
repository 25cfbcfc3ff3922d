# One task runner for developers and CI (.ci/run calls `make test`).
# Prerequisites: Python 3.10+ (with venv) and Java 17+. Everything else is installed into .venv.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PIP    := $(BIN)/python -m pip

.PHONY: help venv demo quickstart test lint typecheck unit bench docs clean

help:
	@echo "make demo   - set up .venv and run the main job on the embedded default:"
	@echo "              certify the SQLite reference connectors (report in $(REPORT))"
	@echo "make quickstart - Kafka's FileStream quickstart with cdk standalone"
	@echo "make test   - set up .venv and run the linters, the type checker and all tests"
	@echo "              (on PYTEST_WORKERS=$(PYTEST_WORKERS) parallel workers; 0 runs them in one process)"
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
# Today: `cdk certify` runs every certification suite against the SQLite reference connectors
# on the embedded broker and writes the bundle (the report's path is printed at the end).
REPORT ?= reports/certification

demo: $(STAMP)
	$(BIN)/cdk --version
	$(BIN)/cdk certify reference_connectors/sqlite --report-dir $(REPORT)

# Kafka's FileStream quickstart on the embedded broker, run by `cdk standalone`.
quickstart: $(STAMP)
	$(BIN)/python -m harness.quickstart

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# The tests run on PYTEST_WORKERS pytest-xdist workers (each with its own embedded broker); they
# mostly wait on Kafka (group joins, restarts), not on the CPU, so there are more workers than
# cores. Tests that need something only one may use at a time (the Docker engine, Chromium)
# share the xdist_group "exclusive" and run one after another on one worker (tests/README.md).
# PYTEST_WORKERS=0 runs them all in this process, one by one; PYTEST_ARGS adds pytest options.
PYTEST_WORKERS ?= 4
PYTEST_ARGS ?=

unit: $(STAMP)
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/python bench/json_converter.py
	$(BIN)/python bench/worker_throughput.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis reports
