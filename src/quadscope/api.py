"""The Python API: sweep a function from Python code and get the analysis back.

Contract: `sweep_sizes(func, sizes={"n": [...], "m": [...]})` sweeps a function over
several sizes (keywords) and returns the `MultiReport` (analyse/multi_sweep).
`sweep_function(func, sizes=...)` runs `func(setup(n))` through the
same runner, store and analysis as `quadscope run -- python:MODULE:FUNC {n}`
(calls timed in calibrated in-process batches by `measure.pyfunc.FunctionExecutor`,
or one forked call per run with `fork=True`) and returns the `Analysis`.
`meter="instructions"` also counts each call's instructions under Valgrind
(`measure.pycount`): a child Python imports `func` and `setup` by name where
they are module-level functions, and gets them by value (pickled with
cloudpickle) where they are not: lambdas, closures, nested functions,
`__main__`'s. One that cannot be pickled (its closure holds a lock or an open
file) is a ProgramError saying so in one sentence; under `meter="auto"` (the
default) the sweep then stays timed and its counters note says why. It writes
to the results database it is given (or the default one) and prints nothing.

`assert_scales(target, at_most="n log n", ...)` is the test-suite form: it
sweeps a function, or a command given as an argv list holding `{n}`, within a
small time budget (an adaptive sweep, or the fixed `sizes` given), writes an
HTML report outside the user's tree (`report=`, else `report_path(name)`: one
file per target in a fixed temporary folder, replaced by the next run, so no
folders pile up; the pytest fixture puts it in the test's `tmp_path`), and
judges the headline fit (the work where `meter` counts it exactly and settles
its class, else the time; or `metric`'s) with the one gate rule every gate
shares (`analyse.gate.judge_metric`). It returns a `ScalingResult` when the growth is
within `at_most` (any spelling quadscope prints, `classes.Registry.parse`; an
unknown one is a ValueError raised before the sweep), raises `ScalingError` (an
AssertionError) when it surely exceeds it, and when the data cannot tell acts as
`undecided` says: raise `ScalingUndecided` ("fail", the default), return
("pass"), or raise `ScalingSkipped` ("skip", a `unittest.SkipTest` that pytest
reports as skipped). A target that failed at too many runs to fit anything (a
function raising at every call) raises `ScalingTargetFailed` with the last line it
wrote to stderr, never an undecided skip. Every message holds the gate's sentence, the verdict, the
exponent with its 95% interval, the sizes measured and the report's path (an
undecided one also what counting did: "counting: cannot count `f`: its closure
holds `lock`, which is a _thread.lock, …; time alone decides"). Its
database is `db=`, else `$QUADSCOPE_DB` when set, else a temporary one deleted
afterwards: nothing is written into the working directory. Both go through the
session `quadscope run` uses (`run.session`): the meter registry picks the
executor (hardware counters for a command where perf works; Valgrind only for
`meter="instructions"` where the CPU cannot count), and the sweep records the
same host facts and skew checks.
"""

from __future__ import annotations

import os
import re
import shlex
import tempfile
import unittest
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from quadscope.analyse.analysis import Analysis
from quadscope.errors import UsageError
from quadscope.measure.pyfunc import PREFIX
from quadscope.meters import REGISTRY as METERS
from quadscope.meters import Measuring
from quadscope.run.counting import Counting
from quadscope.run.sizes import given_sizes
from quadscope.run.spec import SweepSpec
from quadscope.scratch import scratch_dir

if TYPE_CHECKING:
    from quadscope.analyse.multi_sweep import MultiReport

DEFAULT_BUDGET_S = 10.0  # an adaptive sweep's budget in a test suite: long enough for 4+ sizes


def sweep_function(func: Callable[[Any], Any], *, sizes: Sequence[int], setup:
                   Callable[[int], Any] | None = None, repeat: int = 3, warmup: int = 1,
                   timeout_s: float | None = None, name: str = "", db: Path | str | None = None,
                   predict_n: int | None = None, seed: int = 0, fork: bool = False,
                   meter: str = METERS.default.name) -> Analysis:
    """Sweep `func(setup(n))` over `sizes`, store every call, and return the Analysis.

    >>> analysis = sweep_function(sorted, sizes=[1000, 2000, 4000, 8000],
    ...                           setup=lambda n: list(range(n, 0, -1)))
    >>> analysis.fits["A"]["wall_s"].cls
    """
    from quadscope.store import as_location

    label = function_label(func)
    spec = SweepSpec(command=(label, "{n}"), name=name or _default_name(label),
                     sizes=given_sizes(sizes, "sweep_function's sizes="),
                     repeat=repeat, warmup=warmup, timeout_s=timeout_s, predict_n=predict_n,
                     seed=seed, meter=meter, fork=fork)
    return _sweep(spec, *_function_meters(spec, func, setup), as_location(db))


def sweep_sizes(func: Callable[..., Any], *, sizes: Mapping[str, Sequence[int]],
                setup: Callable[..., Any] | None = None, repeat: int = 3, warmup: int = 1,
                timeout_s: float | None = None, name: str = "", db: Path | str | None = None,
                seed: int = 0, max_points: int | None = None, meter: str = "time",
                ) -> MultiReport:
    """Sweep `func` over several sizes (one keyword each) and return the report on them.

    `func(setup(n=..., m=...))`, or `func(n=..., m=...)` without a setup: the sizes
    are passed as keywords named as in `sizes`; the points are `run.design`'s.

    >>> report = sweep_sizes(lambda n, m: sum(range(n * m)),
    ...                      sizes={"n": [100, 200, 400, 800], "m": [1, 2, 4, 8]})
    >>> report.verdict.sentence
    """
    from quadscope.analyse.multi_sweep import analyse_multi
    from quadscope.meters import choose_measuring
    from quadscope.run import rescue, session
    from quadscope.run.design import MAX_POINTS, Axis, design
    from quadscope.store import as_location, open_store

    names = tuple(sizes)
    axes = tuple(Axis(k, given_sizes(vs, f"sweep_sizes' sizes[{k!r}]"))
                 for k, vs in sizes.items())
    if len(axes) < 2:
        raise UsageError("sweep_sizes takes two or more sizes; sweep_function takes one")
    label = function_label(func)
    if setup is not None:
        user_setup = setup

        def keyword_setup(*values: int) -> Any:
            return user_setup(**dict(zip(names, values, strict=True)))
        call: Callable[[Any], Any] = func
    else:
        def keyword_setup(*values: int) -> Any:
            return dict(zip(names, values, strict=True))

        def call(kw: Any) -> Any:
            return func(**kw)
    spec = SweepSpec(command=(label, *("{" + k + "}" for k in names)), name=name or _default_name(label),
                     sizes=axes[0].sizes, repeat=repeat, warmup=warmup, timeout_s=timeout_s,
                     seed=seed, meter=meter, axes=tuple((a.name, a.sizes) for a in axes),
                     points=design(axes, max_points=max_points or MAX_POINTS))
    measuring = choose_measuring(spec.command, meter=spec.meter, function=call,
                                 setup=keyword_setup)
    from quadscope.measure.clock import SystemClock

    with open_store(as_location(db)) as store:
        rescue.ingest(store)
        sweep = session.start(spec, store=store, clock=SystemClock(),
                              machine=session.Machine.real(), measuring=measuring)
        return analyse_multi(sweep, store.runs(sweep.id))


def _default_name(label: str) -> str:
    """The sweep's name when none is given: `label` itself (so `history` still finds earlier
    sweeps by it), its control characters made visible and cut to the longest name, so a
    qualname past 200 characters or a function renamed with an escape is still a name
    `check_name` takes."""
    from quadscope.run.spec import MAX_NAME_CHARS
    from quadscope.textsafe import shorten, visible

    return shorten(visible(label).strip(), MAX_NAME_CHARS)


def function_label(func: Callable[..., Any]) -> str:
    """The target name a function's sweep stores: python:MODULE:QUALNAME."""
    return f"{PREFIX}{getattr(func, '__module__', '?')}:{getattr(func, '__qualname__', func)}"


def _function_meters(spec: SweepSpec, func: Callable[[Any], Any],
                     setup: Callable[[int], Any] | None) -> tuple[Measuring, Counting | None]:
    """The spec's meter measuring the function object itself, and what it counts the work
    with when time cannot decide (a child Python that imports or unpickles it)."""
    from quadscope.meters import choose_measuring
    from quadscope.run.session import counting_for

    return (choose_measuring(spec.command, meter=spec.meter, fork=spec.fork, function=func,
                             setup=setup),
            counting_for(spec.meter, spec.command, fork=spec.fork, function=func, setup=setup))


def _sweep(spec: SweepSpec, measuring: Measuring, counting: Counting | None,
           db: Path | str) -> Analysis:
    from quadscope.analyse.analysis import analyse
    from quadscope.measure.clock import SystemClock
    from quadscope.run import rescue, session
    from quadscope.store import open_store

    with open_store(db) as store:
        # Runs a killed quadscope measured but had not stored yet go in first, as the CLI does.
        rescue.ingest(store)
        sweep = session.start(spec, store=store, clock=SystemClock(),
                              machine=session.Machine.real(), measuring=measuring,
                              counting=counting)
        return analyse(sweep, store.runs(sweep.id))


@dataclass(frozen=True, slots=True)
class ScalingResult:
    """What `assert_scales` decided: the gate's outcome, its message, the analysis and report."""

    outcome: str  # "pass", "fail" or "undecided" (analyse.gate)
    message: str
    decide_n: int | None
    analysis: Analysis
    report: Path


class ScalingError(AssertionError):
    """The measured growth surely exceeds the allowed class."""

    def __init__(self, result: ScalingResult) -> None:
        super().__init__(result.message)
        self.result = result


class ScalingUndecided(AssertionError):
    """The data cannot tell whether the growth stays within the allowed class."""

    def __init__(self, result: ScalingResult) -> None:
        super().__init__(result.message)
        self.result = result


class ScalingSkipped(unittest.SkipTest):
    """Undecided, with `undecided="skip"`: pytest and unittest report the test as skipped."""

    def __init__(self, result: ScalingResult) -> None:
        super().__init__(result.message)
        self.result = result


class ScalingTargetFailed(AssertionError):
    """The target failed (raised, exited non-zero, timed out) at too many runs to fit anything:
    a test fails with what it last said, never skips as "undecided"."""

    def __init__(self, result: ScalingResult) -> None:
        super().__init__(result.message)
        self.result = result


Target = Callable[[Any], Any] | Sequence[str]


def _argv(target: object) -> tuple[str, ...]:
    """A command target as its argv; UsageError for a string (whose characters would be the
    argv) or anything else that is neither a function nor a list of strings."""
    if isinstance(target, str):
        raise UsageError(f"assert_scales takes a command as a list of arguments, e.g. "
                         f"{shlex.split(target) if _splits(target) else ['./prog', '{n}']!r}, "
                         f"not the string {target!r}")
    if not isinstance(target, Sequence) or not all(isinstance(a, str) for a in target):
        raise UsageError(f"assert_scales' target is a function or a command's argv (a list of "
                         f"strings with {{n}}), not {type(target).__name__}")
    return tuple(target)


def _splits(text: str) -> bool:
    try:
        return bool(shlex.split(text))
    except ValueError:
        return False


def assert_scales(target: Target, at_most: str = "n log n", *, sizes: Sequence[int] | None = None,
                  setup: Callable[[int], Any] | None = None, metric: str | None = None,
                  budget_s: float = DEFAULT_BUDGET_S, meter: str = METERS.default.name,
                  db: Path | str | None = None, report: Path | None = None,
                  undecided: Literal["fail", "pass", "skip"] = "fail", repeat: int = 3,
                  timeout_s: float | None = None, name: str = "") -> ScalingResult:
    """Sweep `target` and raise unless its growth stays within `at_most` (see the module docstring).

    `target` is a function called as `target(setup(n))` (or `target(n)`), or
    a command's argv whose items hold `{n}`. Without `sizes` the sweep is
    adaptive and stops within `budget_s`.

    >>> assert_scales(sorted, at_most="n log n", sizes=[2000, 4000, 8000, 16000, 32000],
    ...               setup=lambda n: list(range(n, 0, -1)))
    """
    __tracebackhide__ = True  # a failing test shows the verdict lines, not this function
    from quadscope.analyse.gate import FAIL, PASS, judge_metric
    from quadscope.analyse.sides import gate_evidence
    from quadscope.classes import REGISTRY
    from quadscope.model import METRICS
    from quadscope.run.session import choose, choose_counting
    from quadscope.store import DB_ENV_VAR, as_location

    at_most = REGISTRY.parse(at_most).name  # refused before anything is swept
    if undecided not in ("fail", "pass", "skip"):
        raise ValueError(f"undecided={undecided!r}: use 'fail', 'pass' or 'skip'")
    if metric is not None and metric not in METRICS:
        raise ValueError(f"metric={metric!r} is not a metric; use one of " + ", ".join(METRICS))
    mode = "sizes" if sizes is not None else "adaptive"
    fixed = given_sizes(sizes, "assert_scales' sizes=") if sizes is not None else ()
    if callable(target):
        label = function_label(target)
        spec = SweepSpec(command=(label, "{n}"), name=name or _default_name(label), mode=mode,
                         sizes=fixed, repeat=repeat, timeout_s=timeout_s,
                         budget_s=budget_s, meter=meter)
        measuring, counting = _function_meters(spec, target, setup)
    else:
        if setup is not None:
            raise ValueError("setup= applies to a function; a command reads {n} itself")
        command = _argv(target)
        spec = SweepSpec(command=command, name=name or _default_name(command[0]), mode=mode,
                         sizes=fixed, repeat=repeat, timeout_s=timeout_s,
                         budget_s=budget_s, meter=meter)
        measuring, counting = choose(spec), choose_counting(spec)
    with scratch_dir("db") as scratch:
        configured = as_location(db) if db or os.environ.get(DB_ENV_VAR) else None
        analysis = _sweep(spec, measuring, counting, configured or Path(scratch) / "results.db")
    outcome = judge_metric(analysis.fits.get("A", {}), metric, at_most, analysis.size_word,
                           analysis.work_metric)
    path = _write_report(analysis, report or report_path(spec.name))
    nothing = _nothing_fitted(analysis)
    if nothing:  # a target that raised at every call once skipped as "undecided"
        raise ScalingTargetFailed(ScalingResult(outcome.outcome, f"{nothing}\nreport: {path}",
                                                outcome.decide_n, analysis, path))
    lines = [outcome.sentence, *gate_evidence(analysis, metric), f"report: {path}"]
    if outcome.outcome not in (FAIL, PASS) and counting is not None \
            and analysis.sweep.meter != counting.meter and analysis.sweep.counters_note:
        lines.insert(-1, f"counting: {analysis.sweep.counters_note}")  # why it did not decide
    result = ScalingResult(outcome.outcome, "\n".join(lines), outcome.decide_n, analysis, path)
    if outcome.outcome == FAIL:
        raise ScalingError(result)
    if outcome.outcome == PASS or undecided == "pass":
        return result
    raise ScalingSkipped(result) if undecided == "skip" else ScalingUndecided(result)


def _nothing_fitted(analysis: Analysis) -> str:
    """Why nothing of the target could be fitted (`refuse_if_nothing`'s sentence) and the last
    line its last failed run wrote to stderr (a function's exception); "" when fits exist."""
    from quadscope.analyse.analysis import refuse_if_nothing
    from quadscope.errors import FitRefusedError
    from quadscope.textsafe import visible

    try:
        refuse_if_nothing(analysis)
    except FitRefusedError as exc:
        said = [line.strip() for failed in analysis.failures[-1:]
                for line in failed.measurement.stderr_tail.splitlines() if line.strip()]
        last = f"\nit said: {visible(said[-1][:300])}" if said else ""
        why = str(exc).split("; `quadscope show")[0]  # the store may be a deleted temporary one
        return f"{visible(why)}; the report lists their stderr{last}"
    return ""


def report_path(name: str) -> Path:
    """Where `assert_scales` writes a report no `report=` names: one file per target name.

    A fixed folder in the temporary directory, so a test suite run a thousand
    times leaves one report per target (the latest), not a thousand folders.
    """
    user = getattr(os, "getuid", lambda: "user")()
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._")[:120] or "scaling"
    return Path(tempfile.gettempdir()) / f"quadscope-reports-{user}" / f"{stem}.html"


def _write_report(analysis: Analysis, path: Path) -> Path:
    """Write the HTML report to `path` (whole or not at all: parallel tests may share it)."""
    from quadscope.render import get_renderer

    path.parent.mkdir(parents=True, exist_ok=True)
    body = get_renderer("html").render(analysis)
    assert isinstance(body, bytes)  # the HTML renderer writes one file
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_bytes(body)
    partial.replace(path)
    return path
