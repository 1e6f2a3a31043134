"""Measure: run one process (or one Python call) and read what it cost.

The first stage of the flow. `clock` (time, faked in tests), `launcher` (the
`Executor` protocol with its serial batches, `ProcessExecutor`,
`FakeExecutor`), `resident` (the resident C launcher, launcher.c, that spawns
every run, and its protocol), `meters` (the perf events counted beside rusage,
or none), `detect` (which meters this machine can use), `exact` (the instruction
meter: the CPU's counter or Valgrind, runs held still), `pycount` (one Python
call counted under callgrind), `system` (what on
this machine skews timings, with advice), `pyfunc` (Python
functions as workloads), `host` (what machine this is) and `cbuild` (the
C helpers, compiled at first use). Nothing here stores, fits or prints.
"""
