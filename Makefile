# The two commands a new user needs: `make run` and `make test`. Both set up everything themselves.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test lint setup services browser demo bench

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

setup: $(STAMP)

## make run: the web application on embedded defaults (SQLite, a filesystem broker, one worker)
run: setup
	$(PY) -m webapp.run

## make demo: the engine's command line on a bundled trace
demo: setup
	$(PY) -m engine simulate tests/data/demo.swf --policy easy --out /tmp/schedlab-demo.csv --summary /dev/stdout

## make test: installs what the tests need (Python packages, Chromium, Redis/PostgreSQL running), lints and runs them all
test: setup services browser lint
	$(PY) -m pytest

## make lint: ruff over the project, mypy over engine/ (configuration in pyproject.toml)
lint: setup
	$(PY) -m ruff check .
	$(PY) -m mypy

services:
	@bash scripts/ensure-services.sh

browser:
	@bash scripts/ensure-chromium.sh

## make bench: simulation speed per trace and policy, then the whole command stage by stage against issue 14's targets
bench: setup
	$(PY) benchmarks/engine_speed.py
	$(PY) benchmarks/command_stages.py --policies easy conservative
