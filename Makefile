# Two commands for a newcomer:  `make lab` (the course in JupyterLab) and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
TORCH  := torch==2.13.0

.PHONY: lab test setup setup-test clean

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

lab: setup
	$(BIN)/jupyter lab notebooks/

test: setup-test
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) build *.egg-info
