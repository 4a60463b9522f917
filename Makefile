# The README's two commands: `make run` and `make test`. Each one makes the virtual
# environment, installs what it needs, then acts. Nothing else lives here.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test

run: $(VENV)/.stamp-run graphviz
	$(BIN)/tcpn --version
	$(BIN)/tcpn demo

test: $(VENV)/.stamp-test graphviz
	$(BIN)/ruff check tcpn tests benchmarks
	$(BIN)/mypy tcpn
	$(BIN)/pytest -m "not slow" -n 2
	$(BIN)/pytest -m slow --slow-sample 3 -n 2 -q

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip setuptools wheel

$(VENV)/.stamp-run: setup.cfg pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.stamp-test: setup.cfg pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e ".[test,ns3]"
	touch $@ $(VENV)/.stamp-run

# Graphviz's `dot` renders nets and state spaces; SML/NJ's `sml` type-checks exported CPN
# Tools files (tests/test_exchange_sml.py, skipped without it). apt-get installs both when
# we are root.
.PHONY: graphviz
graphviz:
	@{ command -v dot && command -v sml; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz smlnj >/dev/null) \
	      || { echo "tcpn: installing Graphviz and SML/NJ failed; run: sudo apt-get install graphviz smlnj" >&2; exit 1; }; \
	  else \
	    command -v sml >/dev/null 2>&1 || echo "tcpn: SML/NJ's 'sml' is missing (its tests are skipped); run: sudo apt-get install smlnj" >&2; \
	    command -v dot >/dev/null 2>&1 || { echo "tcpn: Graphviz's 'dot' is missing; run: sudo apt-get install graphviz" >&2; exit 1; }; \
	  fi; }
