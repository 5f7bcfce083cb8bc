# Set-up and the two everyday commands. Every target installs what it needs into .venv first,
# so `make build` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt

.PHONY: build test test-fast check lint bench browser sandbox clean dist docs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Runtime only: torch is pinned to the CPU wheel through constraints.txt.
$(VENV)/.runtime: pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -e .
	touch $@

$(VENV)/.test: pyproject.toml constraints.txt $(VENV)/.runtime
	$(PIP) -e '.[test]'
	touch $@

# The sandbox engine: Debian's bubblewrap, installed where it is missing and this user may (root with
# apt-get); elsewhere `quizgen build` stops and says how to install it.
sandbox:
	@command -v bwrap >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap libseccomp2; \
		else echo "note: bubblewrap (bwrap) is missing: install it (sudo apt-get install bubblewrap)"; fi; }

build: $(VENV)/.runtime sandbox
	$(BIN)/quizgen build

check: $(VENV)/.runtime sandbox
	$(BIN)/quizgen check

# The browser tests drive Debian's Chromium (Playwright's own browser download cannot work here);
# node runs the FSRS agreement test and npm brings axe-core into a test cache (never shipped).
# Only what is missing is installed: Debian's npm conflicts with a node that came from elsewhere.
browser:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v node >/dev/null 2>&1 || missing="$$missing nodejs"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; fi

# An AnkiConnect server backed by a real collection, for the push tests: anki-connect-server needs
# Python 3.12 (the machines have it beside 3.11, through pyenv), so it gets a virtual environment of its
# own. It imports httpx without declaring it.
PYTHON312 ?= $(shell for p in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3.12; do \
	"$$p" -c '' 2>/dev/null && { echo "$$p"; break; }; done)
ANKICONNECT := $(VENV)/ankiconnect/bin/anki-connect-server
$(ANKICONNECT):
	@test -n "$(PYTHON312)" || { echo "Python 3.12 is missing: the AnkiConnect push tests need it"; exit 1; }
	$(PYTHON312) -m venv $(VENV)/ankiconnect
	$(VENV)/ankiconnect/bin/python -m pip install --quiet --disable-pip-version-check \
		anki-connect-server==0.5.0 httpx

test: $(VENV)/.test browser sandbox $(ANKICONNECT)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest

# The documentation site (mkdocs-material, from the test extra) into build/site: every warning an error,
# so a link to a missing page or anchor fails it (tests/e2e/test_docs_site.py builds it in `make test` too).
docs: $(VENV)/.test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The edit loop: no browser, no Anki, nothing slow (make test runs everything).
test-fast: $(VENV)/.test sandbox
	$(BIN)/python -m pytest -q -m "not slow and not browser and not anki"

# 200 and 2000 cards, three runs each: about 6 minutes on 2 idle cores. BENCH_ARGS="--cards 200,2000,10000
# --repeat 1" adds 10,000 cards (about 8 more minutes). The page measure needs Chromium and playwright.
BENCH_ARGS ?=
bench: $(VENV)/.test
	$(BIN)/python bench/run.py $(BENCH_ARGS)
	$(BIN)/python bench/orders.py --corpus 40 --corpus-only
	$(BIN)/python bench/orders.py --shipped

# The sdist and the wheel, in dist/ (`pipx install dist/quizgen-*.whl`: see the README's install section).
$(VENV)/.dist: | $(BIN)/python
	$(PIP) build
	touch $@

dist: $(VENV)/.dist
	rm -rf dist
	$(BIN)/python -m build --outdir dist .

clean:
	rm -rf build dist $(VENV)
