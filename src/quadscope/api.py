"""The Python API: sweep a function from Python code and get the analysis back.

Contract: `sweep_function(func, sizes=...)` runs `func(setup(n))` through the
same runner, store and analysis as `quadscope run -- python:MODULE:FUNC {n}`
(calls timed in calibrated in-process batches by `measure.pyfunc.FunctionExecutor`,
or one forked call per run with `fork=True`) and returns the `Analysis`.
`meter="instructions"` also counts each call's instructions under Valgrind
(`measure.pycount`): `func` and `setup` must then be importable module-level
functions. It writes to the results database it is given (or the
default one) and prints nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from quadscope.analyse.analysis import Analysis
from quadscope.measure.launcher import Executor
from quadscope.measure.pyfunc import PREFIX, FunctionExecutor


def sweep_function(func: Callable[[Any], Any], *, sizes: Sequence[int], setup:
                   Callable[[int], Any] | None = None, repeat: int = 3, warmup: int = 1,
                   timeout_s: float | None = None, name: str = "", db: Path | None = None,
                   predict_n: int | None = None, seed: int = 0, fork: bool = False,
                   meter: str = "time") -> Analysis:
    """Sweep `func(setup(n))` over `sizes`, store every call, and return the Analysis.

    >>> analysis = sweep_function(sorted, sizes=[1000, 2000, 4000, 8000],
    ...                           setup=lambda n: list(range(n, 0, -1)))
    >>> analysis.fits["A"]["wall_s"].cls
    """
    from quadscope.analyse.analysis import analyse
    from quadscope.measure.clock import SystemClock
    from quadscope.measure.host import host_info
    from quadscope.measure.provenance import collect_provenance
    from quadscope.run.runner import run_sweep
    from quadscope.run.spec import SweepSpec
    from quadscope.store import Store, default_db_path

    label = f"{PREFIX}{getattr(func, '__module__', '?')}:{getattr(func, '__qualname__', func)}"
    executor: Executor = FunctionExecutor({label: func}, setup=setup, fork=fork)
    counters = "rusage"
    if meter == "instructions":
        from quadscope.measure.exact import Callgrind, InstructionMeter, find_valgrind
        from quadscope.measure.launcher import ProcessExecutor
        from quadscope.measure.pycount import count_command, importable_ref

        command = count_command(importable_ref(func),
                                importable_ref(setup) if setup is not None else "")
        executor = InstructionMeter(executor, ProcessExecutor(), Callgrind(find_valgrind()),
                                    command=command)
        counters = "valgrind"
    spec = SweepSpec(command=(label, "{n}"), name=name or label, sizes=tuple(sizes),
                     repeat=repeat, warmup=warmup, timeout_s=timeout_s, predict_n=predict_n,
                     seed=seed, meter=meter)
    with Store(db or default_db_path()) as store:
        host = host_info()
        sweep = run_sweep(spec, executor=executor, clock=SystemClock(), store=store,
                          counters=counters, host=host, provenance=collect_provenance(host=host))
        return analyse(sweep, store.runs(sweep.id))
