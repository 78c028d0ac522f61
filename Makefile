VENV := .venv
PY := $(VENV)/bin/python
PYTHON ?= python3

.PHONY: run migrate test check lint typecheck fmt bench documents fuzz

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

run: $(VENV)/.installed
	$(PY) -m service run

migrate: $(VENV)/.installed
	$(PY) -m service migrate

test: $(VENV)/.installed
	$(PY) -m pytest -q

lint: $(VENV)/.installed
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck: $(VENV)/.installed
	$(PY) -m mypy

check: lint typecheck test

fmt: $(VENV)/.installed
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

bench: $(VENV)/.installed
	$(PY) -m service.bench

documents: $(VENV)/.installed
	$(PY) -m service documents

# schemathesis at volume: 10,000 generated requests per generation mode.
fuzz: $(VENV)/.installed
	SCHEMATHESIS_EXAMPLES=10000 $(PY) -m pytest -q tests/contract/test_schemathesis.py
