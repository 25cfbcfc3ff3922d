# One task runner for developers and CI (.ci/run calls `make test`).
# Prerequisites: Python 3.10+ (with venv) and Java 17+. Everything else is installed into .venv.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PIP    := $(BIN)/python -m pip

.PHONY: help venv demo reference quickstart dist test test-spark test-durations lint typecheck unit bench docs clean

help:
	@echo "make demo   - set up .venv and run the main job on the embedded default: cdk new a"
	@echo "              demo project, install it, test it and certify it (report in $(REPORT))"
	@echo "make reference - certify the SQL reference connectors on SQL_DIALECTS=\"$(SQL_DIALECTS)\" and the"
	@echo "              SQLite ones, and the RabbitMQ ones (reports/certification-*)"
	@echo "make quickstart - Kafka's FileStream quickstart with cdk standalone"
	@echo "make test   - set up .venv and run the linters, the type checker, the docs build and all tests"
	@echo "              (on PYTEST_WORKERS=$(PYTEST_WORKERS) parallel workers, then the Spark ones on"
	@echo "              SPARK_WORKERS=$(SPARK_WORKERS); PYTEST_WORKERS=0 runs the first ones in one process)"
	@echo "make test-spark - only the tests that start Spark (JVMs, standalone clusters), on SPARK_WORKERS=$(SPARK_WORKERS)"
	@echo "              (those that need Docker run with the others, in make unit)"
	@echo "make test-durations - both test phases, writing what each xdist unit took to tests/durations.json (slowest run first)"
	@echo "make docs   - build the Sphinx site into $(DOCS_OUT) (warnings are errors)"
	@echo "make dist   - build the kit's sdist and wheel into $(DIST)/ (to install it elsewhere)"
	@echo "make bench  - run the benchmarks in bench/ (not tests) and write their page, bench/report.html"
	@echo "make clean  - remove .venv and build/test artefacts"

$(STAMP): pyproject.toml .ci/constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python 3.10+ is required (found " + sys.version.split()[0] + ")")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	@# lenient: modules added to the kit are importable at once (pyproject.toml makes strict,
	@# type-checker-friendly installs the default for connector projects)
	$(PIP) install --quiet -c .ci/constraints.txt -e ".[dev]" --config-settings editable_mode=lenient
	@touch $(STAMP)

venv: $(STAMP)

# The main job, the partner's path on the embedded default: `cdk new` a demo project into a
# scratch directory, install it into a virtualenv of its own (with the kit from this checkout),
# and certify it with `cdk certify`; the report's path is printed at the end.
DEMO   ?= build/demo
REPORT ?= $(DEMO)/certification-report

demo: $(STAMP)
	$(BIN)/cdk --version
	rm -rf $(DEMO)
	$(BIN)/cdk new demo-connector --no-input --output-dir $(DEMO)
	$(BIN)/uv venv --quiet --seed --python $(BIN)/python $(DEMO)/.venv
	$(BIN)/uv pip install --quiet --python $(DEMO)/.venv/bin/python -c .ci/constraints.txt ".[certify]"
	$(BIN)/uv pip install --quiet --python $(DEMO)/.venv/bin/python -c .ci/constraints.txt -e "$(DEMO)/demo-connector[dev]"
	cd $(DEMO)/demo-connector && ../.venv/bin/pytest -q -p no:cacheprovider --junitxml=../tests-junit.xml
	$(DEMO)/.venv/bin/cdk certify $(DEMO)/demo-connector --report-dir $(REPORT) --tests-junit $(DEMO)/tests-junit.xml

# The reference connectors, certified as the kit's CI certifies them: the SQL ones on each
# dialect (PostgreSQL and MariaDB from CDK_TEST_POSTGRES_URL / CDK_TEST_MARIADB_URL, by default
# the local servers), and the RabbitMQ ones (CDK_TEST_RABBITMQ_URL, by default the local server).
# The SqliteSource/SqliteSink aliases are the SQL connectors with other defaults.
SQL_DIALECTS ?= sqlite postgresql mariadb

reference: $(STAMP)
	set -e; for dialect in $(SQL_DIALECTS); do \
	  CDK_SQL_DIALECT=$$dialect $(BIN)/cdk certify reference_connectors/sql \
	    --report-dir reports/certification-sql-$$dialect; \
	done
	$(BIN)/cdk certify reference_connectors/rabbitmq --report-dir reports/certification-rabbitmq

# Kafka's FileStream quickstart on the embedded broker, run by `cdk standalone`.
quickstart: $(STAMP)
	$(BIN)/python -m harness.quickstart

# make test's phases run through bench/_timed.py, which prints a timing line for each and adds
# it to $(TEST_TIMES) with the run's id (set once per make test), for bench/report.py.
TEST_TIMES ?= reports/make-test-times.json
TIMED = $(BIN)/python bench/_timed.py --out $(TEST_TIMES) --phase $@ --
test: export CDK_TEST_RUN := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)

lint: $(STAMP)
	$(TIMED) sh -c '$(BIN)/ruff check . && $(BIN)/ruff format --check .'

typecheck: $(STAMP)
	$(TIMED) $(BIN)/mypy

# The tests run on PYTEST_WORKERS pytest-xdist workers (each with its own embedded broker); they
# mostly wait on Kafka (group joins, restarts), not on the CPU, so there are more workers than
# cores. Tests that need something only one may use at a time (the Docker engine, Chromium)
# share the xdist_group "exclusive" and run one after another on one worker (tests/README.md).
# The tests that start Spark (marked spark by tests/conftest.py: local sessions, standalone
# clusters, Spark pipelines, cdk certify --runtime distributed|spark) run after the others on
# SPARK_WORKERS workers: their JVMs are CPU-bound and starve each other on more. (Both sessions
# at once, 6 + 2 workers, took 787 s instead of 1004 s on a clean clone, but with the load
# average above 20 two tests missed their deadlines: tests/README.md.) The tests that need the
# Docker engine run in the unit session's exclusive group, Spark or not: one engine, one session.
# PYTEST_WORKERS=0 runs the unit tests in this process, one by one; PYTEST_ARGS adds pytest
# options.
# Bytecode is cached for the tests even where the shell sets PYTHONDONTWRITEBYTECODE (as some
# CI images do): otherwise every xdist worker rewrites and compiles each test module again, and
# every subprocess (the CLI, certification children, Spark's Python workers) compiles the kit
# from source (measured: collection 70% assertion rewriting; importing the kit 0.8 s CPU
# instead of 0.35 s).
unexport PYTHONDONTWRITEBYTECODE

PYTEST_WORKERS ?= 6
SPARK_WORKERS  ?= 2
PYTEST_ARGS ?=

unit: $(STAMP)
	$(TIMED) $(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadgroup --no-loadscope-reorder -m "not spark or docker" $(PYTEST_ARGS)

test-spark: $(STAMP)
	$(TIMED) $(BIN)/pytest -n $(SPARK_WORKERS) --dist loadgroup --no-loadscope-reorder -m "spark and not docker" $(PYTEST_ARGS)

# Both phases schedule their slowest units first (tests/conftest.py, from tests/durations.json):
# a long unit that starts last ends its phase alone. This runs them and writes what each took.
test-durations: $(STAMP)
	$(MAKE) unit test-spark PYTEST_ARGS="--store-durations $(PYTEST_ARGS)"

# The Sphinx site (user guide, generated config references, checklist, API reference).
# Warnings are errors; --keep-going reports all of them before failing. -E re-reads every page,
# so a warning is never hidden by an earlier build (the generated pages depend on the code).
DOCS_OUT ?= docs/_build/html

docs: $(STAMP)
	$(TIMED) $(BIN)/sphinx-build -E -W --keep-going -q -b html docs $(DOCS_OUT)

# The kit's distributions, to install it into a partner's project without a release:
# `pip install "dist/connect_cdk-<version>-py3-none-any.whl[certify]"`. The wheel is built from
# the sdist (`uv build`), so a file missing from the sdist is missing from the wheel too.
DIST ?= dist

dist: $(STAMP)
	rm -rf $(DIST)
	$(BIN)/uv build --quiet --out-dir $(DIST)
	@ls $(DIST)/*.whl $(DIST)/*.tar.gz

test: lint typecheck docs unit test-spark

# Each benchmark writes its figures to bench/results/<bench>.json; bench/report.py then builds
# the benchmark page, bench/report.html, from them (bench/README.md). A bench that fails does
# not stop the others (-): its figures show as not run (each make bench starts from no results).
bench: $(STAMP)
	rm -rf bench/results
	-$(BIN)/python bench/accelerators.py
	-$(BIN)/python bench/json_converter.py
	-$(BIN)/python bench/worker_throughput.py --runs 3
	-$(BIN)/python bench/filestream_vs_raw.py
	-$(BIN)/python bench/sql_source_vs_raw.py
	-$(BIN)/python bench/sql_sink_vs_raw.py --records 100000 --runs 3
	-$(BIN)/python bench/distributed_vs_standalone.py --records 300000 --runs 3
	-$(BIN)/python bench/spark_datasource.py --records 300000 --runs 3
	-$(BIN)/python bench/eos_vs_at_least_once.py --records 200000 --runs 3
	-$(BIN)/python bench/certify_time.py --runs 3
	$(BIN)/python bench/report.py

clean:
	rm -rf $(VENV) build dist docs/_build *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis reports
