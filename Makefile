# Quick start targets: each creates the virtualenv it needs.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

.PHONY: demo test install

$(BIN)/diagdisk: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,html,fast]'
	touch $@

install: $(BIN)/diagdisk

demo: install
	$(BIN)/diagdisk analyze samples/demo-sosreport
	$(BIN)/diagdisk analyze samples/demo-sosreport --format html -o report.html

test: install
	$(BIN)/python -m pytest -q
