# ancer_lite: build, test and benchmark. `make test` on a fresh machine creates .venv, installs the
# pinned requirements and the package, and runs the test suite (plus nbval over executed notebooks).
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DELETE_ON_ERROR:

PYTHON_BOOT ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# one place for thread counts, so timings and floating-point results repeat
export OMP_NUM_THREADS ?= 2
export MKL_NUM_THREADS ?= 2
export PYTHONHASHSEED := 0
# AVX2 code paths in every numerical library, so results are the same number for number on any x86-64
# machine with AVX2, AVX-512 or not (`ancer_lite.core.reproducibility.ISA_PINS` explains; keep the two equal)
export ATEN_CPU_CAPABILITY ?= avx2
export ONEDNN_MAX_CPU_ISA ?= AVX2
export MKL_ENABLE_INSTRUCTIONS ?= AVX2
export NPY_DISABLE_CPU_FEATURES ?= X86_V4 AVX512_ICL AVX512_SPR
export OPENBLAS_CORETYPE ?= Haswell
# matplotlib's font cache beside the environment it describes: the user-wide cache records font files inside
# whichever environment built it, and once that one is deleted mathtext loses its italic font and figures change
export MPLCONFIGDIR ?= $(abspath $(VENV))/matplotlib

# ---- notebooks: jupytext source -> papermill execution -> stripped executed copy -------------------
PROFILE ?= quick
NOTEBOOK_SRC := $(sort $(wildcard notebooks/[0-9][0-9]_*.py))
NOTEBOOK_NAMES := $(notdir $(NOTEBOOK_SRC:.py=))
ifeq ($(PROFILE),quick)
EXEC_DIR := notebooks/executed
FIG_DIR := figures
else
EXEC_DIR := notebooks/executed-$(PROFILE)
FIG_DIR := figures/$(PROFILE)
endif
EXECUTED := $(NOTEBOOK_NAMES:%=$(EXEC_DIR)/%.ipynb)
# the data folder (datasets, checkpoints, cache, results): data/, or ANCER_DATA_DIR / DATA_DIR (e.g. a scratch disk),
# which the notebooks and ancer-certify then read through ANCER_DATA_DIR (`ancer_lite.models.data.DATA_DIR`)
DATA_DIR ?= $(or $(ANCER_DATA_DIR),data)
ifneq ($(DATA_DIR),data)
export ANCER_DATA_DIR := $(abspath $(DATA_DIR))
endif
# options of the checkpoints a paper profile trains when they are missing, e.g. TRAIN_FLAGS="--device cuda --precision bf16"
TRAIN_FLAGS ?=
DATA_CHECK := $(if $(filter quick,$(PROFILE)),,check-data)
PACKAGE_SRC := $(wildcard ancer_lite/*.py ancer_lite/*/*.py) $(wildcard data/paper/*.csv)

.PHONY: all venv test test-unit test-notebooks site test-site bench data check-data clean help $(NOTEBOOK_NAMES)

help:
	@echo "make test                 - create .venv (first time), lint (ruff), run the unit tests, the site check and nbval"
	@echo "make site                 - build the companion website into build/site/ (open build/site/index.html)"
	@echo "make test-site            - build the site and open every page in headless chromium (apt-get install chromium)"
	@echo "make all [PROFILE=paper]  - execute every notebook into $(EXEC_DIR)/ and index figures/ (paper profiles:"
	@echo "                            missing checkpoints trained first, TRAIN_FLAGS=\"--device cuda --precision bf16\")"
	@echo "make NN_name              - execute one notebook (e.g. make $(firstword $(NOTEBOOK_NAMES)))"
	@echo "make bench                - CERTIFY (N=100,000) against bare forward passes; the quick models' throughput"
	@echo "make data                 - download CIFAR-10 into data/cifar10 (needs a network; paper profile)"

# `execute` prints one progress line per cell on stderr and records each notebook's wall time in
# build/timings.tsv; `all` closes with a table of those times (notebooks finished before MAKE_START
# were up to date and not re-run).
MAKE_START := $(shell date +%s)
all: $(EXECUTED) $(FIG_DIR)/README.md
	@$(PY) -m ancer_lite.tooling.pipeline summary --profile $(PROFILE) --since $(MAKE_START) $(NOTEBOOK_NAMES)

$(NOTEBOOK_NAMES): %: $(EXEC_DIR)/%.ipynb

# A failing cell stops make with papermill's cell and error, and so do unclean outputs (an absolute
# path, a progress-bar frame, a saved figure not shown: notebook_checks.notebook_problems). Intermediates live
# under build/ and are removed on failure or SIGTERM; figures are published and the executed copy
# written only on success.
$(EXEC_DIR)/%.ipynb: notebooks/%.py $(PACKAGE_SRC) $(STAMP) | $(DATA_CHECK)
	@$(PY) -m ancer_lite.tooling.pipeline execute $< --output $@ --figures $(FIG_DIR) --profile $(PROFILE)

# Notebooks 04, 05 and 07 read notebook 03's models and results, and 06 reads the softplus model that 05
# trains: under `make -j` these order-only prerequisites keep them from running beside the notebook whose
# folders they read (they add no re-runs: each notebook still re-runs when its source or the package changes)
$(EXEC_DIR)/04_runtime.ipynb $(EXEC_DIR)/05_superset_statistics.ipynb $(EXEC_DIR)/07_ucan.ipynb: | $(EXEC_DIR)/03_image_certification.ipynb
$(EXEC_DIR)/06_rancer.ipynb: | $(EXEC_DIR)/05_superset_statistics.ipynb

# the paper profiles need data and checkpoints: the checkpoints their setups' recipes can train are trained (after a
# cost estimate; `ancer-certify checkpoints`), then every path still missing is listed before any notebook runs
check-data: $(STAMP)
	$(PY) -m ancer_lite checkpoints --profile $(PROFILE) --data-dir $(DATA_DIR) $(TRAIN_FLAGS)
	$(PY) -m ancer_lite.runs.setups check $(PROFILE) --data-dir $(DATA_DIR)

$(FIG_DIR)/README.md: $(EXECUTED)
	@ANCER_FIGURES_DIR=$(CURDIR)/$(FIG_DIR) $(PY) -m ancer_lite.tooling.pipeline index

# The install writes about 6 GB (torch's build with its CUDA libraries): with less than INSTALL_GB free, stop before
# pip runs out of space half-way. --no-compile: Python compiles a module when it is first imported (about 1 s for
# everything the notebooks import) instead of pip compiling every module of every package (about 25 s).
INSTALL_GB ?= 8
$(STAMP): requirements.txt pyproject.toml
	@$(PYTHON_BOOT) -c 'import shutil, sys; free = shutil.disk_usage(".").free / 2**30; need = $(INSTALL_GB); \
	  free >= need or sys.exit(f"make venv: the install writes about 6 GB into $(VENV) and needs INSTALL_GB = {need} GB " \
	  f"free on this disk; {free:.1f} GB are free (each clone of the project holds its own $(VENV))")'
	$(PYTHON_BOOT) -m venv $(VENV)
	$(PY) -m pip install --quiet --no-compile -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

venv: $(STAMP)

test: test-unit test-site test-notebooks

# lint first (ruff, configured in pyproject.toml: pyflakes' rules and pycodestyle's error classes), then the tests
test-unit: $(STAMP)
	$(PY) -m ruff check ancer_lite tests benchmarks notebooks
	$(PY) -m pytest tests

# nbval re-runs every executed notebook and compares the cells tagged nbval-check-output (figures it
# draws go to build/, so a test run never rewrites the committed ones). A cell may take longer than a
# unit test (notebook 03 certifies ~8,000 inputs in one cell, ~12 min from empty caches): 40 min a cell.
test-notebooks: $(STAMP)
	@shopt -s nullglob; nbs=(notebooks/executed/*.ipynb); \
	if (( $${#nbs[@]} )); then ANCER_FIGURES_DIR=$(CURDIR)/build/nbval-figures \
	  $(PY) -m pytest --nbval-lax -p no:cacheprovider --timeout 2400 "$${nbs[@]}"; \
	else echo "no executed notebooks yet: nbval has nothing to check"; fi

# The companion website (Sphinx + myst-nb) from the executed notebooks as committed (never re-executed),
# README.md and figures/index.tsv; MathJax is bundled, so the site reads offline from file://.
site: $(STAMP)
	$(PY) -m ancer_lite.tooling.site build

# Every built page in headless chromium: broken images, failed or outside requests, unrendered math,
# JS/console errors. Without chromium it prints "NOT RUN" and passes, except under CI (.ci/run installs it).
test-site: site
	$(PY) -m ancer_lite.tooling.site check

bench: $(STAMP)
	$(PY) benchmarks/bench_certify.py

# CIFAR-10 in torchvision's layout; ImageNet must be placed by hand as an ImageFolder in data/imagenet/val
data: $(STAMP)
	$(PY) -c "from ancer_lite.models.data import download_cifar10; print(download_cifar10())"

clean:
	rm -rf $(VENV) .pytest_cache build data/cache data/results
