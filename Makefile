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

.PHONY: venv test test-unit test-notebooks bench clean help

help:
	@echo "make test   - create .venv (first time), run the unit tests and nbval"
	@echo "make bench  - time CERTIFY (N=100,000) against bare forward passes"

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON_BOOT) -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

venv: $(STAMP)

test: test-unit test-notebooks

test-unit: $(STAMP)
	$(PY) -m pytest tests

# nbval re-runs every executed notebook and compares the cells marked NBVAL_CHECK_OUTPUT
test-notebooks: $(STAMP)
	@shopt -s nullglob; nbs=(notebooks/executed/*.ipynb); \
	if (( $${#nbs[@]} )); then $(PY) -m pytest --nbval-lax -p no:cacheprovider "$${nbs[@]}"; \
	else echo "no executed notebooks yet: nbval has nothing to check"; fi

bench: $(STAMP)
	$(PY) benchmarks/bench_certify.py

clean:
	rm -rf $(VENV) .pytest_cache
