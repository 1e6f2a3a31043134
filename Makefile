# `make demo` and `make test` are the two commands in the README: each sets up first.
PY := .venv/bin/python

.PHONY: setup demo test bench lint
setup:
	@scripts/setup

demo: setup
	$(PY) -m quadscope demo

test: setup
	$(PY) -m pytest -q

bench: setup
	$(PY) bench/run_all.py

lint: setup
	$(PY) -m ruff check src tests bench
	$(PY) -m mypy
