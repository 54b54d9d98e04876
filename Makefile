# Two commands for a newcomer:  `make lab` (the course in JupyterLab) and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
TORCH  := torch==2.13.0

.PHONY: lab lab-check reset-lesson test setup setup-test browser bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Everything the course and the grader need (torch is not one of them).
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e ".[lab,grade,test]"
	touch $@

# The parity and differential tests compare with real PyTorch (CPU build, pinned).
$(VENV)/.torch: | $(BIN)/python
	$(BIN)/pip install --quiet $(TORCH)
	touch $@

setup: $(VENV)/.installed
setup-test: $(VENV)/.installed $(VENV)/.torch

# JupyterLab 4 on your copies of the lessons (my-notebooks/, made from notebooks/ on first use,
# outside version control): prints the URL and opens a browser where there is one.
# reset-lesson LESSON=08: your copy of lesson 8 back to the original. lab-check: the widget and
# nbgrader extensions the course uses are installed and enabled (scripts/lab.py says how to fix it if not).
AS_ROOT  := $(filter 0,$(shell id -u))
lab: setup lab-check
	$(BIN)/python scripts/lab.py

reset-lesson: setup
	$(BIN)/python scripts/lab.py --reset $(LESSON)

lab-check: setup
	@$(BIN)/python scripts/lab.py --check

# ruff (configured in pyproject.toml) first: a lint error fails fast, before the long tests.
test: setup-test
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

# The engine and grading benchmarks with their peers (PyTorch CPU, MyGrad, HIPS autograd);
# they print tables of medians and ratios measured in this run (the README shows one).
bench: setup-test
	$(BIN)/pip install --quiet mygrad autograd
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_grading.py

# The browser test's Chromium and a font with Chinese glyphs, from the Debian/Ubuntu packages
# (Playwright's own browser download is not possible everywhere). Installs only what is missing.
# Elsewhere: install Chromium or Chrome yourself, or point KIT_CHROMIUM at one.
SUDO := $(if $(AS_ROOT),,sudo)
browser:
	@if command -v chromium >/dev/null 2>&1 && fc-list :lang=zh 2>/dev/null | grep -q .; then \
	  echo "browser: $$(command -v chromium)"; \
	elif command -v apt-get >/dev/null 2>&1; then \
	  echo "browser: installing chromium and fonts-wqy-microhei with apt-get"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-microhei >/dev/null; \
	else \
	  echo "browser: no apt-get here; install Chromium or Chrome (or set KIT_CHROMIUM=/path/to/it)" >&2; exit 1; \
	fi

clean:
	rm -rf $(VENV) build *.egg-info
