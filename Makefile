# The README's two commands: `make run` and `make test`. Each one makes the virtual
# environment, installs what it needs, then acts. Nothing else lives here.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test

run: $(VENV)/.stamp-run system-packages
	$(BIN)/tcpn --version
	$(BIN)/tcpn build study all
	$(BIN)/tcpn report study all

test: $(VENV)/.stamp-test system-packages
	$(BIN)/ruff check tcpn tests benchmarks
	$(BIN)/mypy tcpn
	$(BIN)/pytest -m "not slow" -n 2 --durations=15
	$(BIN)/pytest -m slow --slow-sample 3 -n 2 -q

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip setuptools wheel

$(VENV)/.stamp-run: setup.cfg pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e ".[ns3,native]"
	touch $@

$(VENV)/.stamp-test: setup.cfg pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e ".[test,ns3,native]"
	touch $@ $(VENV)/.stamp-run

# Graphviz's `dot` renders nets and state spaces; SML/NJ's `sml` type-checks exported CPN
# Tools files (tests/test_exchange_sml.py, skipped without it); Chromium prints reports to
# PDF and reads them in the tests, poppler-utils' `pdftoppm` renders the PDF's pages; gcc
# and Python's headers build the native engine (without them it runs in Python).
# apt-get installs them all when we are root.
.PHONY: system-packages
system-packages:
	@{ command -v dot && command -v sml && command -v chromium && command -v pdftoppm && command -v gcc; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz smlnj chromium poppler-utils gcc python3-dev >/dev/null) \
	      || { echo "tcpn: installing Graphviz, SML/NJ, Chromium, poppler-utils and gcc failed; run: sudo apt-get install graphviz smlnj chromium poppler-utils gcc python3-dev" >&2; exit 1; }; \
	  else \
	    command -v sml >/dev/null 2>&1 || echo "tcpn: SML/NJ's 'sml' is missing (its tests are skipped); run: sudo apt-get install smlnj" >&2; \
	    command -v chromium >/dev/null 2>&1 || echo "tcpn: Chromium is missing (reports get no PDF, the browser tests are skipped); run: sudo apt-get install chromium" >&2; \
	    command -v pdftoppm >/dev/null 2>&1 || echo "tcpn: poppler-utils' 'pdftoppm' is missing (the PDF page tests are skipped); run: sudo apt-get install poppler-utils" >&2; \
	    command -v gcc >/dev/null 2>&1 || echo "tcpn: gcc is missing (the native engine runs in Python); run: sudo apt-get install gcc python3-dev" >&2; \
	    command -v dot >/dev/null 2>&1 || { echo "tcpn: Graphviz's 'dot' is missing; run: sudo apt-get install graphviz" >&2; exit 1; }; \
	  fi; }
