# pairank task runner. `make serve` and `make test` each set up everything they need on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install serve test lint docs format fuzz clean

# torch goes first, pinned to the CPU build, so the project's torch range installs nothing more.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

serve: $(STAMP)
	$(VENV)/bin/pairank serve --demo --host $(HOST) --port $(PORT)

# Two pytest-xdist workers, a test file per worker at a time (a file's module fixtures stay in one
# process): many tests wait on real servers, subprocesses and databases, so two share the 2 cores well.
# --durations: the slowest tests in every run's log, where the suite's time budget (30 min) is watched.
test: $(STAMP)
	$(VENV)/bin/pytest -q -n 2 --dist loadfile --durations=25

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy app indexes encoders pairank evaluation training migrations

# The documentation site into site/ (docs/, mkdocs.yml): --strict fails on a broken link, a missing nav
# page or a bad anchor; the API, configuration and CLI references are generated from the code.
# NO_MKDOCS_2_WARNING: Material's end-of-life notice (May 2027), recorded in docs/reference/layout.md.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# A longer contract fuzz than the test suite's: FUZZ_EXAMPLES cases per operation and mode.
fuzz: $(STAMP)
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-500} $(VENV)/bin/pytest -q tests/api/test_fuzz.py

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache site
