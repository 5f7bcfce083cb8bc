# Set-up and the two everyday commands. Every target installs what it needs into .venv first,
# so `make build` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt

.PHONY: build test check lint bench browser clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Runtime only: torch is pinned to the CPU wheel through constraints.txt.
$(VENV)/.runtime: pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -e .
	touch $@

$(VENV)/.test: pyproject.toml constraints.txt $(VENV)/.runtime
	$(PIP) -e '.[test]'
	touch $@

build: $(VENV)/.runtime
	$(BIN)/quizgen build

check: $(VENV)/.runtime
	$(BIN)/quizgen check

# The browser tests drive Debian's Chromium (Playwright's own browser download cannot work here);
# node runs the FSRS agreement test and npm brings axe-core into a test cache (never shipped).
browser:
	@command -v chromium >/dev/null 2>&1 && command -v node >/dev/null 2>&1 \
		&& command -v npm >/dev/null 2>&1 || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium nodejs npm; }

test: $(VENV)/.test browser
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest

bench: $(VENV)/.runtime
	$(BIN)/python bench/run.py

clean:
	rm -rf build $(VENV)
