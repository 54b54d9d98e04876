# Two commands for a newcomer:  `make lab` (the course in JupyterLab) and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
TORCH  := torch==2.13.0

.PHONY: lab lab-check reset-lesson test test-quick setup setup-test fonts browser bench clean hub hub-env hub-clean hub-root hub-tools

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Everything the course and the grader need (torch is not one of them).
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e ".[lab,grade,cluster,test]"
	touch $@

# The parity and differential tests compare with real PyTorch (CPU build, pinned).
$(VENV)/.torch: | $(BIN)/python
	$(BIN)/pip install --quiet $(TORCH)
	touch $@

setup: $(VENV)/.installed
setup-test: $(VENV)/.installed $(VENV)/.torch

# A learner's JupyterLab from the checkout: the `lab` extra alone into .venv (the kit editable),
# then `autograd-kit lab my-notebooks` (learner/: your copy of the course, made on first use and
# outside version control: the lessons in en/ and zh/, the exercises blank in en/exercises/ and
# zh/exercises/; prints the URL and opens a browser where there is one).
# reset-lesson LESSON=en/08: your copy of lesson 8 in English as the course has it (yours kept as
# 08_....mine.ipynb); LESSON=zh/ps1 does the same for an exercise. lab-check: the widget extension
# the course uses is installed and enabled.
AS_ROOT  := $(filter 0,$(shell id -u))
$(VENV)/.lab: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e ".[lab]"
	touch $@

lab: $(VENV)/.lab fonts
	$(BIN)/autograd-kit lab my-notebooks

reset-lesson: $(VENV)/.lab
	$(BIN)/autograd-kit reset $(LESSON) --workspace my-notebooks

lab-check: $(VENV)/.lab
	@$(BIN)/autograd-kit lab --check

# ruff (configured in pyproject.toml) first: a lint error fails fast, before the long tests.
# The tests marked `alone` first, by themselves (the hub's load test, whose figures must be the
# hub's, and the grader's fault tests, which look for processes left anywhere); then the others in two workers (pytest-xdist), each module
# whole in one of them, the modules that make system accounts or serve a hub one after another in
# one worker, first (tests/conftest.py's scheduler, by what each folder's conftest.py says of its modules).
# TEST_WORKERS=0 runs them in one process.
TEST_WORKERS ?= 2
test: setup-test fonts $(if $(AS_ROOT),hub-env)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -m alone
	$(BIN)/python -m pytest -m "not alone" -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder

# The inner loop (under five minutes on two cores): the engine against PyTorch and the grader's
# rules, no class graded, no lab, no hub. The groups are the folders of tests/, as the code is:
# `pytest -m engine` (tests/engine/), `-m course`, `-m grader`, `-m hub`; `make test` is the whole suite, as CI runs it.
test-quick: setup-test
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -m quick -q

# The engine and grading benchmarks with their peers (PyTorch CPU, MyGrad, HIPS autograd);
# they print tables of medians and ratios measured in this run (the README shows one).
bench: setup-test
	$(BIN)/pip install --quiet mygrad autograd
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_grading.py

# A font with Chinese glyphs for the Chinese lessons' figures (and the browser's pages): Debian's
# fonts-wqy-microhei (WenQuanYi Micro Hei, Apache-2.0 or GPL-3 with the font exception, 5 MB)
# where there is apt-get and no such font yet. macOS and Windows come with one (PingFang,
# Microsoft YaHei); elsewhere the lessons say once which font to install. graph_explorer/fonts.py
# finds it even when matplotlib cached its font list before it was installed.
SUDO := $(if $(AS_ROOT),,sudo)
FONTS_SUDO := $(if $(AS_ROOT),,sudo -n)  # never a password prompt in the middle of make lab
fonts:
	@if fc-list :lang=zh 2>/dev/null | grep -q .; then :; \
	elif command -v apt-get >/dev/null 2>&1; then \
	  echo "fonts: installing fonts-wqy-microhei (Chinese glyphs for the figures) with apt-get"; \
	  { $(FONTS_SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-wqy-microhei >/dev/null 2>&1 || \
	    { $(FONTS_SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	      $(FONTS_SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-wqy-microhei >/dev/null; }; } || \
	  echo "fonts: could not install fonts-wqy-microhei (Chinese figures will show empty boxes): sudo apt-get install fonts-wqy-microhei" >&2; \
	elif [ "$$(uname)" = Linux ]; then \
	  echo "fonts: no font with Chinese glyphs and no apt-get: install one (WenQuanYi Micro Hei or Noto Sans CJK SC) for the Chinese figures" >&2; \
	fi

# The browser test's Chromium from the Debian/Ubuntu packages (Playwright's own browser download
# is not possible everywhere), and the font above. Installs only what is missing.
# Elsewhere: install Chromium or Chrome yourself, or point KIT_CHROMIUM at one.
browser: fonts
	@if command -v chromium >/dev/null 2>&1; then \
	  echo "browser: $$(command -v chromium)"; \
	elif command -v apt-get >/dev/null 2>&1; then \
	  echo "browser: installing chromium with apt-get"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
	  echo "browser: no apt-get here; install Chromium or Chrome (or set KIT_CHROMIUM=/path/to/it)" >&2; exit 1; \
	fi

# A class on JupyterHub (deploy/hub/, docs/deploy.md): the hub on 127.0.0.1:8000, an instructor,
# three students and ps1/ps2 released; prints the logins. Needs root (it creates system accounts);
# `make hub-clean` removes them (each gradebook kept aside). The servers run as those accounts and
# must read nothing of this checkout, which holds the course: their environment is a copy of the
# kit (not editable; the hub's recipe, deploy/hub/kithub/, among it, run as `python -m kithub`) built
# from a Python every account can run (the system's, not one under /root), outside the checkout, one
# per checkout, with the proxy (configurable-http-proxy) in its bin/; `.venv-hub` points to it.
HUB_PYTHON ?= $(firstword $(wildcard /usr/bin/python3) $(PYTHON))
HUB_ENV    ?= /opt/autograd-kit-hub/env-$(shell printf '%s' '$(CURDIR)' | cksum | cut -d' ' -f1)
HUB_STATE  ?= /srv/autograd-kit-hub
PROXY_DIR  := $(HUB_ENV)/share/kithub-proxy
# every file the package is built from (code, lessons, exercises): a change to any of them is copied
KIT_CODE   := pyproject.toml $(shell find autograd_core grader graph_explorer learner build_backend course_files/*.py \
                exercises notebooks deploy/hub/kithub -type f -not -path '*/__pycache__/*' -not -path '*/.ipynb_checkpoints/*' 2>/dev/null)
HUB_GOAL   := $(or $(filter hub%,$(MAKECMDGOALS)),hub)

hub-root:
	@test "$$(id -u)" = 0 || { echo "$(HUB_GOAL): a class on the hub has a system account per person, and its \
	environment is installed outside this checkout: run it as root (sudo make $(HUB_GOAL))" >&2; exit 1; }

$(HUB_ENV)/.installed: pyproject.toml | hub-root
	@test -x "$(HUB_PYTHON)" || { echo "hub: $(HUB_PYTHON) not found; set HUB_PYTHON to a Python 3.10+ that every account can run" >&2; exit 1; }
	@$(HUB_PYTHON) -c "import ensurepip, venv" 2>/dev/null || { command -v apt-get >/dev/null && \
	  echo "hub: installing python3-venv with apt-get" && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; }
	$(HUB_PYTHON) -m venv $(HUB_ENV)
	chmod 755 $(dir $(HUB_ENV)) $(HUB_ENV)
	$(HUB_ENV)/bin/python -m pip install --quiet --upgrade pip
	$(HUB_ENV)/bin/pip install --quiet ".[hub]"
	touch $@

# The kit's code is copied into the hub's environment, so it is copied again when it changes.
$(HUB_ENV)/.kit: $(HUB_ENV)/.installed $(KIT_CODE)
	$(HUB_ENV)/bin/pip install --quiet --no-deps --force-reinstall .
	chmod 700 $(HUB_ENV)/lib/python*/site-packages/course_files/exercises  # solutions: root's (kithub's set-up checks again)
	rm -rf build
	@if [ -d .venv-hub ] && [ ! -L .venv-hub ]; then rm -rf .venv-hub; fi
	ln -sfn $(HUB_ENV) .venv-hub
	touch $@

# the proxy from npm (deploy/hub/package.json, its lock), installed into the hub's environment
$(PROXY_DIR)/.installed: deploy/hub/package.json deploy/hub/package-lock.json | $(HUB_ENV)/.installed
	mkdir -p $(PROXY_DIR)
	cp deploy/hub/package.json deploy/hub/package-lock.json $(PROXY_DIR)/
	npm ci --prefix $(PROXY_DIR) --no-audit --no-fund --loglevel=error
	ln -sfn $(PROXY_DIR)/node_modules/.bin/configurable-http-proxy $(HUB_ENV)/bin/configurable-http-proxy
	touch $@

# systemd-analyze checks the production guide's systemd units (tests/hub/test_deploy_guide.py): Debian's
# systemd package, installed only where the command is missing (and apt-get is there).
hub-tools:
	@command -v systemd-analyze >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1 || { \
	  echo "hub-env: installing systemd (systemd-analyze, for the guide's units) with apt-get"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd >/dev/null 2>&1 || \
	  { $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd >/dev/null; }; }

hub-env: hub-root $(HUB_ENV)/.kit $(PROXY_DIR)/.installed fonts hub-tools

hub: hub-root hub-env
	$(HUB_ENV)/bin/python -m kithub demo --state $(HUB_STATE)

hub-clean: hub-root
	$(HUB_ENV)/bin/python -m kithub teardown --state $(HUB_STATE)

clean:
	rm -rf $(VENV) .venv-hub build *.egg-info deploy/hub/node_modules
	if [ "$$(id -u)" = 0 ]; then rm -rf $(HUB_ENV); fi
