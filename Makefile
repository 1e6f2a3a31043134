# `make demo` and `make test` are the two commands in the README: each sets up first.
PY := .venv/bin/python

.PHONY: setup demo test test-fast bench lint
setup:
	@scripts/setup

demo: setup
	$(PY) -m quadscope demo

test: setup
	$(PY) -m pytest -q

# Every unit test, on fakes: no real process, server, cluster or browser (tests/conftest.py guards it).
test-fast: setup
	$(PY) -m pytest -q -m "not slow"

bench: setup
	$(PY) bench/run_all.py

lint: setup
	$(PY) -m ruff check src tests bench
	$(PY) -m mypy
