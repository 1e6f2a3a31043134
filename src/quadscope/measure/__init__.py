"""Measure: run one process (or one Python call) and read what it cost.

The first stage of the flow. `clock` (time, faked in tests), `launcher` (the
`Executor` protocol with its serial batches, `ProcessExecutor`,
`FakeExecutor`), `resident` (the resident C launcher, launcher.c, that spawns
every run, and its protocol), `counters` (the perf events counted beside
rusage, or none), `detect` (which of them this machine can count), `exact` (the
instruction meter's executors: the CPU's counter or Valgrind, runs held still),
`pycount` (one Python call counted under Callgrind), `system` (what on this
machine skews timings, with advice), `pyfunc` (Python functions as workloads),
`provenance` (the git commit, branch and machine a sweep records), `host`
(what machine this is) and `cbuild` (the C helpers, compiled at first use).
Which meter a sweep uses, and so which executor, is the meter registry's
(`quadscope.meters`). Nothing here stores, fits or prints.
"""
