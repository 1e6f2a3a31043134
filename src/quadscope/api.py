"""The Python API: sweep a function from Python code and get the analysis back.

Contract: `sweep_function(func, sizes=...)` runs `func(setup(n))` through the
same runner, store and analysis as `quadscope run -- python:MODULE:FUNC {n}`
(each call forked and timed alone by `measure.pyfunc.FunctionExecutor`) and
returns the `Analysis`. It writes to the results database it is given (or the
default one) and prints nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from quadscope.analyse.analysis import Analysis
from quadscope.measure.pyfunc import PREFIX, FunctionExecutor


def sweep_function(func: Callable[[Any], Any], *, sizes: Sequence[int], setup:
                   Callable[[int], Any] | None = None, repeat: int = 3, warmup: int = 1,
                   timeout_s: float | None = None, name: str = "", db: Path | None = None,
                   predict_n: int | None = None, seed: int = 0) -> Analysis:
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
    executor = FunctionExecutor({label: func}, setup=setup)
    spec = SweepSpec(command=(label, "{n}"), name=name or label, sizes=tuple(sizes),
                     repeat=repeat, warmup=warmup, timeout_s=timeout_s, predict_n=predict_n,
                     seed=seed)
    with Store(db or default_db_path()) as store:
        host = host_info()
        sweep = run_sweep(spec, executor=executor, clock=SystemClock(), store=store, host=host,
                          provenance=collect_provenance("function+rusage", host=host))
        return analyse(sweep, store.runs(sweep.id))
