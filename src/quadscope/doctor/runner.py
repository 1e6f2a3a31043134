"""Run doctor probes within a time budget and store each probe's sweeps.

Contract: `run_doctor(probes, quick=, budget_s=, store=, clock=, tools=,
machine=)` runs each probe in turn: builds its C helpers (`cbuild.compile_c`,
in parallel), links them into a scratch `{bin}` directory, runs each variant
as an ordinary stored sweep (`run.session.start`, kind="doctor", recording
the host facts and skew checks `quadscope run` records, read once per doctor
run through `Tools.host`) through the given executors, fits the metrics the
variant names with `fitting.fit_metric` over `analysis.metric_series` (the
measured runs: no warm-up, no failure), and
hands the fits and any numbers the helpers printed to the probe's pure
`judge`. A setup command that prints a JSON line contributes it to the
variant's numbers too. Each probe's sweeps
get its `ProbeResult` as the blob "doctor"; a final sweep named "doctor"
(kind="doctor", no runs) carries the whole `DoctorReport` under the same key,
so `quadscope show` and reports find it.

Budget: each probe gets a slice of what is left, in proportion to its
`weight`; each variant a share of its probe's slice. Every run's timeout is
clamped to the time left in its slice, and a sweep whose slice is spent stops
between runs (its status becomes "interrupted" and it is fitted on what it
has). Each sweep stops early enough to leave its fits their measured cost
(`fit_reserve_s`), so the total never exceeds `budget_s` by more than the
compile time of a cold cache and the bookkeeping between runs.

A variant that asks to be counted (`Variant.count`) has its helper's system
calls counted (`Tools.count`, strace in `default_tools`: `doctor.counts`) in one launch before its
sweep and one after it, into the variant's details, so its judge decides from
the count; a count that cannot be taken leaves a note, and the judge times.
A variant with `count_sizes` is run once at each of them before its sweep, its
minor page faults (rusage) kept in its details the same way.

A helper that cannot be compiled (`ToolMissingError`) makes its variants
unavailable; a probe with no variant left is `skipped` with that sentence.
Nothing here prints: progress goes to a `DoctorProgress`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from quadscope.analyse.analysis import metric_series
from quadscope.doctor import NO_TIME_LEFT
from quadscope.doctor.base import Evidence, Helper, Probe, ProbePlan, Variant
from quadscope.doctor.counts import Calls, count_syscalls, failed_creates
from quadscope.doctor.details import ProbeSweeps
from quadscope.doctor.records import DoctorReport, ProbeResult
from quadscope.errors import FitRefusedError, QuadscopeError
from quadscope.measure.cbuild import compile_c
from quadscope.measure.clock import Clock
from quadscope.measure.launcher import Executor, SerialExecutor
from quadscope.meters import Measuring, choose_measuring
from quadscope.model import Fit, Measurement, Run, Sweep
from quadscope.run import session
from quadscope.run.spec import SweepSpec
from quadscope.store import Store
from quadscope.units import fmt_exit

BLOB_KEY = "doctor"
_MIN_RUN_S = 0.05
COUNT_TIMEOUT_S = 10.0  # one counted launch of a helper (`Variant.count`)


class DoctorProgress(Protocol):
    def probe_started(self, name: str, slice_s: float) -> None: ...
    def probe_done(self, result: ProbeResult, elapsed_s: float) -> None: ...


class NoDoctorProgress:
    def probe_started(self, name: str, slice_s: float) -> None:
        pass

    def probe_done(self, result: ProbeResult, elapsed_s: float) -> None:
        pass


class AuxError(Exception):
    """A setup or detail command failed; the message is one sentence."""


def run_aux(argv: Sequence[str], timeout_s: float) -> str:
    """Run a setup/detail command outside the sweep; its stdout, or AuxError."""
    try:
        proc = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired as e:
        raise AuxError(f"`{' '.join(argv)}` took longer than {timeout_s:.1f} s") from e
    except OSError as e:
        raise AuxError(f"`{' '.join(argv)}` could not start: {e}") from e
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        raise AuxError(f"`{os.path.basename(argv[0])}` failed: {last}")
    return proc.stdout


def _compile(source: str, *, name: str, flags: Sequence[str]) -> Path:
    # Looks compile_c up at call time, so a test can replace it on this module.
    return compile_c(source, name=name, flags=flags)


@dataclass(frozen=True)
class Tools:
    """The side effects the runner uses, so tests can swap each for a fake.

    `perf_executor` counts with perf (None when perf is unusable here);
    variants that ask for perf fall back to `executor` without it.
    """

    executor: Executor
    perf_executor: Executor | None = None
    counters_note: str = ""
    compile: Callable[..., Path] = _compile
    aux: Callable[[Sequence[str], float], str] = run_aux
    scratch_root: str | None = None  # where {bin} and {tmp} are made; None = system temp
    jobs: int = field(default_factory=lambda: max(1, os.cpu_count() or 1))
    # One run's system calls (`doctor.counts`), for variants that ask (`Variant.count`);
    # None: nothing is counted (the judges time, as a fake executor's tests expect)
    count: Callable[[Sequence[str], float], Mapping[str, Calls] | None] | None = None
    host: session.Machine = field(default_factory=session.Machine.real)  # the sweeps' host facts


def default_tools(no_perf: bool) -> Tools:
    """The real executors: plain for every variant, perf for those that ask when it works here."""
    plain = choose_measuring(no_perf=True)
    if no_perf:
        return Tools(executor=plain.executor, counters_note="perf was turned off with --no-perf",
                     count=count_syscalls)
    best = choose_measuring()
    perf = best.executor if best.counters == "perf" else None
    return Tools(executor=plain.executor, perf_executor=perf, counters_note=best.note,
                 count=count_syscalls)


class _OverBudget(Exception):
    """Raised between runs when a variant's slice is spent; never leaves this module."""


class _BudgetedExecutor(SerialExecutor):
    """Clamps every run's timeout to the slice left and refuses to start past it.

    Batches go through `SerialExecutor.execute_many`, one `execute` per run,
    so the clamp and the refusal apply run by run.
    """

    def __init__(self, inner: Executor, clock: Clock, deadline: float) -> None:
        self._inner = inner
        self._clock = clock
        self._deadline = deadline

    def execute(self, argv: Sequence[str], timeout_s: float | None) -> Measurement:
        left = self._deadline - self._clock.monotonic()
        if left < _MIN_RUN_S:
            raise _OverBudget()
        return self._inner.execute(argv, left if timeout_s is None else min(timeout_s, left))


class _SweepId:
    """Progress hook that remembers the sweep run_sweep created (it may raise before returning)."""

    def __init__(self) -> None:
        self.sweep: Sweep | None = None

    def started(self, sweep: Sweep, total_runs: int | None) -> None:
        self.sweep = sweep

    def ran(self, run: Run, done: int, elapsed_s: float) -> None:
        pass


def fit_reserve_s(v: Variant, perf: bool) -> float:
    """Time to keep for fitting a variant: ~0.1 s per metric plus ~1.5 ms per point."""
    points = v.runs if v.mode == "accumulate" else len(v.sizes) * v.repeat
    return (len(v.metrics) + int(perf)) * (0.1 + 0.0015 * points)


def substitute_dirs(argv: Sequence[str], bin_dir: str, tmp_dir: str) -> tuple[str, ...]:
    return tuple(a.replace("{bin}", bin_dir).replace("{tmp}", tmp_dir) for a in argv)


def _failure_reason(runs: Sequence[Run], stopped: bool) -> str:
    tried = [r for r in runs if not r.warmup]
    if not tried:
        return (
            "its time budget ran out before any run finished; raise --budget"
            if stopped
            else "no run finished"
        )
    bad = [r for r in tried if not r.measurement.ok]
    last = bad[-1].measurement if bad else tried[-1].measurement
    tail = last.stderr_tail.strip().splitlines()
    if last.timed_out:
        return "every run timed out within its share of the budget; raise --budget"
    if tail:
        return tail[-1]
    code = last.exit_code
    return f"every run failed ({f'exit {code}' if code >= 0 else fmt_exit(code)})"


def build_helpers(
    helpers: Sequence[Helper], tools: Tools
) -> tuple[dict[str, Path], dict[str, str]]:
    """Compile every helper (in parallel); (paths by name, error sentences by name)."""
    built: dict[str, Path] = {}
    errors: dict[str, str] = {}

    def one(h: Helper) -> tuple[str, Path | None, str]:
        try:
            return h.name, tools.compile(h.source, name=h.name, flags=h.flags), ""
        except QuadscopeError as e:  # ToolMissingError: no compiler, or it failed
            return h.name, None, str(e)

    if not helpers:
        return built, errors
    with ThreadPoolExecutor(max_workers=min(tools.jobs, len(helpers))) as pool:
        for name, path, err in pool.map(one, helpers):
            if path is None:
                errors[name] = err
            else:
                built[name] = path
    return built, errors


class _ProbeRun:
    """One probe's execution: its scratch directories, sweeps and evidence."""

    def __init__(
        self,
        probe: Probe,
        plan: ProbePlan,
        *,
        quick: bool,
        store: Store,
        clock: Clock,
        tools: Tools,
        machine: Mapping[str, Any],
        facts: session.HostFacts,
        deadline: float,
    ) -> None:
        self.probe = probe
        self.facts = facts
        self.plan = plan
        self.quick = quick
        self.store = store
        self.clock = clock
        self.tools = tools
        self.machine = machine
        self.deadline = deadline
        self.fits: dict[str, Mapping[str, Fit]] = {}
        self.details: dict[str, Mapping[str, Any]] = {}
        self.unavailable: dict[str, str] = dict(plan.unavailable)
        self.notes: list[str] = []
        self.sweep_ids: dict[str, int] = {}

    def execute(self) -> ProbeResult:
        root = self.tools.scratch_root
        bin_dir = tempfile.mkdtemp(prefix="quadscope-doctor-bin-", dir=root)
        try:
            built, errors = build_helpers(self.plan.helpers, self.tools)
            for name, path in built.items():
                os.symlink(path, os.path.join(bin_dir, name))
            todo: list[Variant] = []
            for v in self.plan.variants:
                missing = [errors[h] for h in v.helpers if h in errors]
                if missing:
                    self.unavailable[v.label] = missing[0]
                else:
                    todo.append(v)
            for v in todo:  # counts first: a slice that runs out leaves them standing
                if v.count_sizes:
                    self._count_faults(v, bin_dir)
            for i, v in enumerate(todo):
                left = self.deadline - self.clock.monotonic()
                share = left / (len(todo) - i)
                if share < _MIN_RUN_S:
                    self.unavailable[v.label] = f"{NO_TIME_LEFT} in the budget for it; raise --budget"
                    continue
                self._variant(v, bin_dir, self.clock.monotonic() + share)
        finally:
            shutil.rmtree(bin_dir, ignore_errors=True)
        evidence = Evidence(
            fits=self.fits,
            details=self.details,
            facts={**self.machine, "quick": self.quick},
            unavailable=self.unavailable,
            notes=tuple(self.notes),
        )
        ran = ProbeSweeps(dict(self.sweep_ids), tuple(self.notes), dict(self.unavailable))
        result = replace(self.probe.judge(evidence), ran=ran)
        for sweep_id in self.sweep_ids.values():
            self.store.put_blob(sweep_id, BLOB_KEY, result.to_dict())
        return result

    def _variant(self, v: Variant, bin_dir: str, deadline: float) -> None:
        tmp_dir = tempfile.mkdtemp(prefix="quadscope-doctor-", dir=self.tools.scratch_root)
        try:
            setup_numbers: dict[str, Any] = {}
            for template in v.setup:
                for n in v.sizes:
                    left = deadline - self.clock.monotonic()
                    if left < _MIN_RUN_S:
                        raise AuxError(f"{NO_TIME_LEFT} to prepare it; raise --budget")
                    argv = substitute_dirs(template, bin_dir, tmp_dir)
                    out = self.tools.aux([a.replace("{n}", str(n)) for a in argv], left)
                    if out.strip().startswith("{"):
                        setup_numbers = _last_json(out)
            if setup_numbers:
                self.details[v.label] = setup_numbers
            first = self._count(v, bin_dir, tmp_dir, 1) if v.count and self.tools.count else None
            self._sweep(v, bin_dir, tmp_dir, deadline)
            if first is not None and v.label in self.sweep_ids:
                launched = len(self.store.runs(self.sweep_ids[v.label]))
                last = self._count(v, bin_dir, tmp_dir, launched + 2)
                if last is not None:
                    self.details[v.label] = {**self.details.get(v.label, {}), **{
                        "count_launches": [1, launched + 2],
                        "failed_creates": [failed_creates(first), failed_creates(last)],
                        "syscalls": [sum(c.calls for c in first.values()),
                                     sum(c.calls for c in last.values())]}}
            if v.detail is not None and v.label in self.fits:
                left = deadline - self.clock.monotonic()
                if left >= _MIN_RUN_S:
                    out = self.tools.aux(substitute_dirs(v.detail, bin_dir, tmp_dir), left)
                    self.details[v.label] = {**self.details.get(v.label, {}), **_last_json(out)}
                else:
                    self.notes.append(f"{v.label}: no time left for the helper's own numbers")
        except AuxError as e:
            if v.label in self.fits:
                self.notes.append(f"{v.label}: {e}")
            else:
                self.unavailable[v.label] = str(e)
        finally:
            shutil.rmtree(tmp_dir, ignore_errors=True)

    def _count_faults(self, v: Variant, bin_dir: str) -> None:
        """One run of `v` at each of its `count_sizes`, its page faults kept in its details:
        perf's count where the variant asks for perf and it works (it sees faults rusage
        does not, such as an emulated vsyscall's), else rusage's minor faults. Taken before
        any sweep of the probe and not clamped to a slice: a small helper's run takes
        milliseconds, and the count is what the judge decides from."""
        use_perf = v.perf and self.tools.perf_executor is not None
        executor = self.tools.perf_executor if use_perf else self.tools.executor
        assert executor is not None
        metric = "page_faults" if use_perf else "minor_faults"
        tmp_dir = tempfile.mkdtemp(prefix="quadscope-doctor-", dir=self.tools.scratch_root)
        try:
            argv = substitute_dirs(v.argv, bin_dir, tmp_dir)
            faults: list[int] = []
            for n in v.count_sizes:
                m = executor.execute([a.replace("{n}", str(n)) for a in argv], COUNT_TIMEOUT_S)
                value = m.value(metric) if m.ok else None
                if value is None:
                    self.notes.append(f"{v.label}: its page faults could not be counted "
                                      f"at n = {n}")
                    return
                faults.append(int(value))
        finally:
            shutil.rmtree(tmp_dir, ignore_errors=True)
        self.details[v.label] = {**self.details.get(v.label, {}), "count_sizes":
                                 list(v.count_sizes), "count_faults": faults}

    def _count(self, v: Variant, bin_dir: str, tmp_dir: str,
               launch: int) -> Mapping[str, Calls] | None:
        """The system calls of launch `launch` of `v`, run once under the counter (not timed,
        so not clamped to the slice: a count of a small helper takes milliseconds)."""
        argv = [a.replace("{i}", str(launch)) for a in substitute_dirs(v.argv, bin_dir, tmp_dir)]
        assert self.tools.count is not None
        counted = self.tools.count(argv, COUNT_TIMEOUT_S)
        if counted is None:
            self.notes.append(f"{v.label}: its system calls could not be counted (strace)")
        return counted

    def _sweep(self, v: Variant, bin_dir: str, tmp_dir: str, deadline: float) -> None:
        use_perf = v.perf and self.tools.perf_executor is not None
        inner = self.tools.perf_executor if use_perf else self.tools.executor
        assert inner is not None
        spec = SweepSpec(
            command=substitute_dirs(v.argv, bin_dir, tmp_dir),
            name=f"doctor {self.probe.name}/{v.label}",
            mode=v.mode,
            sizes=v.sizes,
            repeat=v.repeat,
            warmup=v.warmup,
            runs=v.runs,
            timeout_s=max(deadline - self.clock.monotonic(), _MIN_RUN_S),
            kind="doctor",
            startup_n=None,  # a probe's sizes are what its judge reads: no start-up runs
        )
        reserve = min(fit_reserve_s(v, use_perf), (deadline - self.clock.monotonic()) / 2)
        hook = _SweepId()
        stopped = False
        try:
            counted = "perf" if use_perf else "rusage"
            session.start(
                spec,
                store=self.store,
                clock=self.clock,
                machine=self.tools.host,
                measuring=Measuring(_BudgetedExecutor(inner, self.clock, deadline - reserve),
                                    counted, "" if use_perf else self.tools.counters_note),
                facts=self.facts,
                progress=hook,
            )
        except _OverBudget:
            stopped = True
            self.notes.append(f"{v.label}: stopped at its share of the time budget")
        except QuadscopeError as e:
            self.unavailable[v.label] = str(e)
            if hook.sweep is not None:
                self.sweep_ids[v.label] = hook.sweep.id
            return
        if hook.sweep is None:
            self.unavailable[v.label] = "its sweep could not be created"
            return
        sweep_id = hook.sweep.id
        self.sweep_ids[v.label] = sweep_id
        runs = self.store.runs(sweep_id)
        good = [r for r in runs if r.variant == "A" and not r.warmup and r.measurement.ok]
        metrics = (*v.metrics, *(["page_faults"] if use_perf else []))
        from quadscope.analyse.fitting import fit_metric  # scipy: not when only parsing options

        fits: dict[str, Fit] = {}
        for metric in metrics:
            sizes, values = metric_series(good, metric)
            if not values:
                continue
            try:
                fits[metric] = fit_metric(metric, sizes, values, seed=hook.sweep.seed)
            except FitRefusedError as e:
                self.notes.append(f"{v.label}: {metric}: {e}")
        if fits:
            self.fits[v.label] = fits
        else:
            self.unavailable[v.label] = _failure_reason(runs, stopped)


def _last_json(text: str) -> dict[str, Any]:
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise AuxError(f"the helper printed malformed JSON: {e}") from e
            if isinstance(obj, dict):
                return obj
    raise AuxError("the helper printed no JSON line")


def run_doctor(
    probes: Sequence[Probe],
    *,
    quick: bool,
    budget_s: float,
    store: Store,
    clock: Clock,
    tools: Tools,
    machine: Mapping[str, Any],
    progress: DoctorProgress | None = None,
) -> DoctorReport:
    """Run `probes` in order within `budget_s` and store their sweeps and the report."""
    progress = progress or NoDoctorProgress()
    # Once: every probe's sweeps record the same. No git: the helpers are quadscope's own.
    facts = session.read_host(tools.host, git=False)
    t0 = clock.monotonic()
    end = t0 + budget_s
    results: list[ProbeResult] = []
    weights = [max(p.weight, 0.01) for p in probes]
    for i, probe in enumerate(probes):
        now = clock.monotonic()
        left = end - now
        share = left * weights[i] / sum(weights[i:])
        progress.probe_started(probe.name, share)
        if share < _MIN_RUN_S:
            result = ProbeResult.skipped(
                probe.name, probe.describe, f"{NO_TIME_LEFT} in the budget; raise --budget"
            )
        else:
            try:
                plan = probe.plan(quick, machine)
                result = _ProbeRun(
                    probe,
                    plan,
                    quick=quick,
                    store=store,
                    clock=clock,
                    tools=tools,
                    machine=machine,
                    facts=facts,
                    deadline=now + share,
                ).execute()
            except QuadscopeError as e:
                result = ProbeResult.skipped(probe.name, probe.describe, str(e))
        results.append(result)
        progress.probe_done(result, clock.monotonic() - now)
    report = DoctorReport(
        results=tuple(results),
        machine=dict(machine),
        quick=quick,
        budget_s=budget_s,
        elapsed_s=clock.monotonic() - t0,
        created_at=clock.time(),
    )
    summary = store.create_sweep(
        Sweep(
            id=0,
            name="doctor",
            mode="sizes",
            command=("quadscope", "doctor", *(["--quick"] if quick else [])),
            kind="doctor",
            status="complete",
            created_at=clock.time(),
            host=facts.host,
            budget_s=budget_s,
        )
    )
    report = replace(report, summary_sweep_id=summary.id)
    store.put_blob(summary.id, BLOB_KEY, report.to_dict())
    return report
