"""Measure: run one process (or one Python call) and read what it cost.

The first stage of the flow. `clock` (time, faked in tests), `launcher` (the
`Executor` protocol with its serial batches, the C launcher that spawns each
run, `FakeExecutor`), `meters` (counters read beside rusage: perf, or none),
`detect` (which meters this machine can use), `exact` (the instruction
meter: perf `instructions:u` or Valgrind, runs held still), `pyfunc` (Python
functions as workloads), `pycount` (one Python call counted under
callgrind), `host` (what machine this is) and `cbuild` (the C helpers,
compiled at first use). Nothing here stores, fits or prints.
"""
