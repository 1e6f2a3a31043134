"""Execute a sweep: ask its plan for batches, run them, store each run the moment it ends.

Contract: `Runner.run(plan, budget_s)` is the one loop every sweep goes
through. It asks the plan for a batch (giving it every run stored so far and
what is left of the budget by the `Clock` it was given), hands the batch's
argvs and timeouts to `Executor.execute_chunks` (a fixed plan is one batch: the
whole plan), and stores each chunk of measurements with `store.add_runs` as
soon as the executor yields it, before asking for the next, so Ctrl-C or an
exception loses nothing already measured: a `logged` chunk (the launcher's)
in one transaction, committed at once, any other through the store's journal.
Python thus wakes once a look at the launcher, not once a run. Each job
carries a tag saying which run it is (`rescue.rescue_tags`): runs a `kill -9`
caught between the executor's looks, or in a chunk's commit, are stored by the
next quadscope to open the store (`rescue.ingest`, from
`commands.common.open_store`). It stops when the plan says it is
done or when the budget is spent (checked between batches; the plan keeps
each run's timeout within the budget). `started_at` is the clock's time when
the runner asks for the chunk holding that run's measurement. The runner decides when the
sweep's untimed commands run and the executor runs them: `--setup` with the
first job of each size in this session (warm-ups included; again on resume, as
its output may be gone), `--prepare` with every job, each allowed the user's
`--timeout` within the budget left, never the run's own (`Job.untimed_timeout_s`);
one that spends the budget left ends the sweep there, as a spent budget does. Every job carries the
size padding (`spec.size_padding`). A program the sweep's host facts record
as a version manager's shim is run as the program the shim would run
(`spec.run_command`, `Host.shims`), a resumed sweep as it began.

`run_sweep(spec, executor=, clock=, store=)` checks the spec, creates the
sweep in the store and runs its plan: `FixedPlan` over `plan_runs` (sizes
mode) or `plan_accumulate` (accumulate mode), `AgreeingPlan` on the meter's
metric instead of `FixedPlan` for an exact meter's sweep (the meter registry,
`registry=`, says which are), `AdaptivePlan` with `budget_s`
(adaptive mode; an exact meter's adaptive sweep counts one size at a time
from its start instead, `run.counting.exact_plan`, then times the sizes it
counted again, uncounted, `run.timed_repeats`; over several sizes
`MultiAdaptivePlan`, `run/multiadaptive`, whose sweep is stored with the sizes
and points it measured, before counting). Accumulate mode under an
exact meter counting with Valgrind, or under one that counts with it
(`--meter auto`), runs `run.accumulate.InPlacePlan` instead: every 2^k-th
launch counted in place of its timed run, each batch routed to the timed or
the counting executor (`Runner.run(route=)`), the sweep marked after
(`InPlace.mark`). `resume_sweep` continues a stored sweep: a fixed plan runs
exactly the planned runs still missing; an adaptive one goes on with what is
left of the budget after the wall time already spent. The sweep ends
"complete", or "interrupted" when anything (Ctrl-C included) stops it; an
adaptive sweep stores the sizes it chose. Nothing here prints: progress goes
to a `Progress` callback.

One process runs a sweep at a time: `run_sweep` claims the new sweep for this
process (`store.create_sweep(owner=)`) and `resume_sweep` claims it first
(`store.claim`), refusing with `SweepBusyError` (naming pid and host) while
the holder is alive by `measure.host.is_alive`; the claim is released however
the sweep ends. A holder on another host (a shared PostgreSQL store) cannot be
checked by pid: it counts as alive until it is stale, having neither claimed
the sweep nor stored a run of it for STALE_AFTER_S.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from quadscope.errors import QuadscopeError, SetupTimeoutError, SweepBusyError, UsageError
from quadscope.host import Host
from quadscope.measure.clock import Clock
from quadscope.measure.host import is_alive, this_process
from quadscope.measure.launcher import Chunk, Executor, Job
from quadscope.measure.provenance import Provenance
from quadscope.meters import REGISTRY, Registry
from quadscope.model import Owner, Run, Sweep
from quadscope.run import accumulate
from quadscope.run.accumulate import InPlacePlan
from quadscope.run.counting import Counting, CountPlan, Refused
from quadscope.run.counting import budget_s as counting_budget
from quadscope.run.plan import (
    AgreeingPlan,
    Batch,
    FixedPlan,
    Plan,
    plan_accumulate,
    plan_points,
    plan_runs,
)
from quadscope.run.rescue import rescue_tags, store_key
from quadscope.run.spec import (
    SweepSpec,
    check_spec,
    new_sweep,
    run_command,
    size_padding,
    substitute,
    variants,
)
from quadscope.store import Store


class Progress(Protocol):
    def started(self, sweep: Sweep, total_runs: int | None) -> None: ...
    def ran(self, run: Run, done: int, elapsed_s: float) -> None: ...


class NoProgress:
    def started(self, sweep: Sweep, total_runs: int | None) -> None:
        pass

    def ran(self, run: Run, done: int, elapsed_s: float) -> None:
        pass


class Runner:
    """Runs one stored sweep's plan and stores each run as it ends (see the module docstring)."""

    def __init__(self, sweep: Sweep, *, executor: Executor, clock: Clock, store: Store,
                 progress: Progress, done: Sequence[Run] = ()) -> None:
        self.sweep = sweep
        self.runs: list[Run] = list(done)  # every run of the sweep, earlier sessions' first
        self._executor = executor
        self._clock = clock
        self._store = store
        self._progress = progress
        self._seq = store.next_seq(sweep.id)
        self._store_key = store_key(store.location)  # for the rescue tags (run.rescue)
        self._t0 = clock.monotonic()
        # sizes (and other axes) whose --setup has been handed out
        self._set_up: set[tuple[int, tuple[tuple[str, int], ...]]] = set()
        # (variant, size, other axes) -> the job's argv, env and --prepare: built once, as a
        # sweep runs each size many times and this is on every run's path.
        self._commands: dict[tuple[str, int, tuple[tuple[str, int], ...]],
                             tuple[tuple[str, ...], tuple[tuple[str, str], ...],
                                   tuple[str, ...] | None]] = {}

    def run(self, plan: Plan, budget_s: float | None = None,
            route: Callable[[Batch], Executor] | None = None) -> None:
        """Batches from `plan` until it is done or `budget_s` of the clock is spent; `route`
        picks each batch's executor (accumulate mode's counted launches, `run.accumulate`),
        the runner's own when None."""
        deadline = None if budget_s is None else self._clock.monotonic() + budget_s
        while True:
            remaining_s = None if deadline is None else deadline - self._clock.monotonic()
            if remaining_s is not None and remaining_s <= 0:
                return
            batch = plan.next_batch(tuple(self.runs), remaining_s)
            if batch is None:
                return
            untimed_s = self._untimed_limit(remaining_s)
            try:
                self._run_batch(batch, self._executor if route is None else route(batch),
                                untimed_s)
            except SetupTimeoutError:
                if untimed_s != remaining_s or untimed_s == self.sweep.timeout_s:
                    raise  # past the user's own --timeout: the run cannot be prepared
                return  # the budget was spent preparing the next run: done, as when spent

    def _untimed_limit(self, remaining_s: float | None) -> float | None:
        """What a --setup or --prepare may take: the user's --timeout, within the budget left
        (never the run's own, which an adaptive plan caps near its predicted time)."""
        limits = [t for t in (self.sweep.timeout_s, remaining_s) if t is not None]
        return min(limits) if limits else None

    def _job(self, variant: str, size_n: int, timeout_s: float | None, tag: str,
             axes: tuple[tuple[str, int], ...] = (), untimed_s: float | None = None) -> Job:
        sw = self.sweep
        commands = self._commands.get((variant, size_n, axes))
        # Several sizes: every axis's placeholder by name, the first axis being size_n.
        values = {sw.axes[0][0]: size_n, **dict(axes)} if sw.axes else None
        if commands is None:
            command = run_command(sw, variant)
            shell = sw.vs_shell if variant == "B" else sw.shell
            prepare = (None if sw.prepare is None
                       else tuple(substitute((sw.prepare,), True, size_n, values)))
            commands = self._commands[(variant, size_n, axes)] = (
                tuple(substitute(command, shell, size_n, values)),
                size_padding(command, size_n, values), prepare)
        argv, env, prepare = commands
        setup = None
        if sw.setup is not None and (size_n, axes) not in self._set_up:
            self._set_up.add((size_n, axes))
            setup = tuple(substitute((sw.setup,), True, size_n, values))
        return Job(argv, timeout_s, env=env, setup=setup, prepare=prepare, tag=tag,
                   untimed_timeout_s=untimed_s)

    def _run_batch(self, batch: Batch, executor: Executor, untimed_s: float | None) -> None:
        tags = rescue_tags(self._store_key, self.sweep, self._seq, [s.run for s in batch],
                           self._clock.time())
        jobs = [self._job(s.run.variant, s.run.size_n, s.timeout_s, tag, s.run.axes, untimed_s)
                for s, tag in zip(batch, tags, strict=True)]
        chunks = executor.execute_chunks(jobs)
        try:
            self._store_chunks(batch, chunks)
        finally:
            # Closed now, not when collected: a batch cut short (a store error, Ctrl-C
            # while storing) must stop its runs before anything else uses the executor.
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    def _store_chunks(self, batch: Batch, chunks: Iterator[Chunk]) -> None:
        """Store each chunk as it comes, in one transaction when it is logged (`Chunk`)."""
        planned = iter(batch)
        asked = self._clock.time()
        for chunk in chunks:
            runs = [Run(sweep_id=self.sweep.id, seq=self._seq + k, variant=s.run.variant,
                        size_n=s.run.size_n, repeat=s.run.repeat, warmup=s.run.warmup,
                        started_at=asked, measurement=m, axes=s.run.axes)
                    for k, (m, s) in enumerate(zip(chunk.measurements,
                                                   itertools.islice(planned, len(chunk.measurements)),
                                                   strict=True))]
            self._store.add_runs(runs, logged=chunk.logged)
            self._seq += len(runs)
            self.runs.extend(runs)
            elapsed_s = self._clock.monotonic() - self._t0
            for k, run in enumerate(runs, len(self.runs) - len(runs) + 1):
                self._progress.ran(run, k, elapsed_s)
            asked = self._clock.time()


def _fixed_plan(sweep: Sweep, registry: Registry) -> Plan:
    if sweep.mode == "accumulate":
        planned = plan_accumulate(len(sweep.sizes), variants=variants(sweep))
    elif sweep.axes:
        planned = plan_points(sweep.axis_names, sweep.points, repeat=sweep.repeat,
                              warmup=sweep.warmup, seed=sweep.seed, variants=variants(sweep))
    else:
        planned = plan_runs(sweep.sizes, repeat=sweep.repeat, warmup=sweep.warmup,
                            seed=sweep.seed, variants=variants(sweep),
                            startup_n=sweep.startup_n)
    agrees_on = registry.get(sweep.meter).agrees_on
    if agrees_on is not None:  # an exact meter: a size's repeats stop where two counts agree
        return AgreeingPlan(tuple(planned), sweep.timeout_s, metric=agrees_on)
    return FixedPlan(tuple(planned), sweep.timeout_s)


def _exact_plan(sweep: Sweep, executor: Executor, registry: Registry,
                start_n: int) -> Plan | None:
    """An exact meter's adaptive plan (`run.counting.exact_plan`: one count per size,
    doubling from `start_n` until settled), then timed repeats at the sizes counted where
    the meter times a run apart from counting it (`run.timed_repeats`); None for a meter
    that is not exact, or a sweep over several sizes."""
    meter = registry.get(sweep.meter)
    if meter.agrees_on is None or sweep.axes or sweep.mode != "adaptive":
        return None
    from quadscope.run.counting import exact_plan

    plan = exact_plan(variants(sweep), start_n, metric=meter.agrees_on,
                      cost=meter.cost.under(executor), timeout_s=sweep.timeout_s)
    plan.batched = bool(getattr(executor, "counts_many", False))  # a Python call: one start
    plan.workers = int(getattr(executor, "workers", 1))  # counts it runs at once
    from quadscope.measure.exact import timed_part

    if timed_part(executor) is executor or plan.batched:
        return plan  # each run counted as it is timed (perf), or a Python call's batch
    from quadscope.run.timed_repeats import TimedRepeats

    return TimedRepeats(plan, metric=meter.agrees_on, timeout_s=sweep.timeout_s,
                        seed=sweep.seed)


def _route(plan: Plan, executor: Executor) -> Callable[[Batch], Executor] | None:
    """Where an exact sweep's batches run: its timed repeats on the meter's timed executor,
    never counted (`run.timed_repeats`); None (the runner's own) for any other plan."""
    from quadscope.measure.exact import timed_part
    from quadscope.run.timed_repeats import TimedRepeats

    if not isinstance(plan, TimedRepeats):
        return None
    timed = timed_part(executor)
    return lambda batch: timed if TimedRepeats.timed(batch) else executor


def _multi_adaptive(sweep: Sweep, *, warmup: int, registry: Registry) -> Plan:
    """Adaptive mode over several sizes (`run/multiadaptive`), from each axis's smallest size:
    the start on a new sweep, and the same on a resumed one (its sizes are those measured)."""
    from quadscope.meters import exact_metric
    from quadscope.run.multiadaptive import MultiAdaptivePlan

    exact = exact_metric(sweep.meter, registry)
    # An exact count repeats itself: one run a point, the confirming look adds a second.
    return MultiAdaptivePlan(sweep.axis_names, [s[0] for _, s in sweep.axes],
                             metric=exact or "wall_s", repeat=1 if exact else sweep.repeat,
                             warmup=warmup, timeout_s=sweep.timeout_s, seed=sweep.seed)


def _end(store: Store, sweep: Sweep, runs: Sequence[Run], status: str) -> Sweep:
    """Record how the sweep ended; an adaptive sweep's sizes are the ones it measured."""
    if sweep.mode != "adaptive":
        store.set_status(sweep.id, status)
        return dataclasses.replace(sweep, status=status)
    if sweep.axes:  # several sizes: the axes' sizes and the points it chose
        from quadscope.run.multiadaptive import shaped

        ended = dataclasses.replace(shaped(sweep, runs), status=status)
        store.update_sweep(ended)
        return ended
    sizes = tuple(sorted({r.size_n for r in runs if not r.warmup}))
    ended = dataclasses.replace(sweep, sizes=sizes, status=status)
    store.update_sweep(ended)
    return ended


def _count(sweep: Sweep, runner: Runner, counting: Counting, *, spent_s: float, clock: Clock,
           store: Store, progress: Progress) -> Sweep:
    """The counting phase after the timed plan (`run.counting`); the sweep as it then stands.

    `spent_s` is this session's timed plan on the clock; a resumed sweep's timed runs were
    mostly measured before it, so the timed cost is at least what its stored runs took."""
    spent_s = max(spent_s, sum(r.measurement.wall_s for r in runner.runs))
    plan = counting.plan(sweep, runner.runs)
    if plan is None:
        return sweep
    measuring = counting.measuring()
    if isinstance(measuring, Refused):
        refused = counting.refused(sweep, measuring)
        store.update_sweep(refused)
        return refused
    plan.batched = bool(getattr(measuring.executor, "counts_many", False))
    plan.cost = plan.cost.under(measuring.executor)  # QEMU's price, not Valgrind's
    counter = Runner(sweep, executor=measuring.executor, clock=clock, store=store,
                     progress=progress, done=runner.runs)
    t0 = clock.monotonic()
    try:
        budget = counting_budget(spent_s, runner.runs, sweep.budget_s)
        counter.run(plan, plan.deadline_s(budget) if isinstance(plan, CountPlan) else budget)
    finally:
        runner.runs[:] = counter.runs  # stored either way; a Ctrl-C keeps the sweep timed
    marked = counting.mark(sweep, counter.runs, plan, measuring,
                           (spent_s, clock.monotonic() - t0))
    if marked != sweep:
        store.update_sweep(marked)
    return marked


def _in_place(sweep: Sweep, executor: Executor, counting: Counting | None,
              registry: Registry) -> InPlace | None:
    """How accumulate mode's launches are counted in place (`run.accumulate`): under an
    exact meter counting with Valgrind always, under one that `counts_with` it (`auto`)
    within the budget; None when they are not (a timed meter, no Valgrind, or an exact
    meter whose CPU counter counts every launch as it runs)."""
    from quadscope.measure.exact import InstructionMeter, counted_alone, timed_part

    if sweep.mode != "accumulate":
        return None
    meter = registry.get(sweep.meter)
    if meter.agrees_on is not None and isinstance(executor, InstructionMeter):
        plan = InPlacePlan(plan_accumulate(len(sweep.sizes), variants=variants(sweep)),
                           metric=meter.agrees_on, cost=meter.cost.under(executor),
                           timeout_s=sweep.timeout_s,
                           budgeted=False)
        return InPlace(plan, timed_part(executor), counted_alone(executor), meter.name,
                       sweep.counters, sweep.counters_note)
    measuring = None if counting is None else counting.measuring()
    if counting is None or measuring is None or isinstance(measuring, Refused):
        return None
    plan = InPlacePlan(plan_accumulate(len(sweep.sizes), variants=variants(sweep)),
                       metric=counting.metric, cost=counting.cost.under(measuring.executor),
                       timeout_s=sweep.timeout_s)
    return InPlace(plan, executor, counted_alone(measuring.executor), counting.meter,
                   measuring.counters, measuring.note)


@dataclasses.dataclass(frozen=True, slots=True)
class InPlace:
    """Accumulate mode's launches with some counted in place: the plan, the two executors
    it routes between, and what the sweep records when the counts decide."""

    plan: InPlacePlan
    timed: Executor
    counter: Executor
    meter: str
    counters: str
    note: str

    def route(self, batch: Batch) -> Executor:
        return self.counter if self.plan.counting else self.timed

    def mark(self, sweep: Sweep, runs: Sequence[Run]) -> Sweep:
        from quadscope.measure.exact import counted_by
        from quadscope.run.counting import open_reason

        metric = self.plan.metric
        timed = [r for r in runs if r.value(metric) is None]
        reason = open_reason(sweep, timed, pooled=True) if self.plan.budgeted else ""
        spent = (sum(r.measurement.wall_s for r in timed),
                 sum(r.measurement.wall_s for r in runs if r.value(metric) is not None))
        return accumulate.mark(sweep, runs, self.plan, meter=self.meter,
                               counters=counted_by(self.counter, self.counters),
                               note=self.note, reason=reason,
                               spent_s=spent)


def _execute(sweep: Sweep, plan: Plan, *, budget_s: float | None, done: Sequence[Run],
             executor: Executor, clock: Clock, store: Store, progress: Progress,
             owner: Owner, counting: Counting | None = None,
             in_place: InPlace | None = None) -> Sweep:
    try:
        progress.started(sweep, plan.total_runs)
        runner = Runner(sweep, executor=executor, clock=clock, store=store, progress=progress,
                        done=done)
        try:
            t0 = clock.monotonic()
            if in_place is not None:
                runner.run(in_place.plan, budget_s, route=in_place.route)
                marked = in_place.mark(sweep, runner.runs)
                if marked != sweep:
                    store.update_sweep(marked)
                    sweep = marked
            else:
                runner.run(plan, budget_s, route=_route(plan, executor))
            if sweep.mode == "adaptive" and sweep.axes:  # counting reads the points measured
                from quadscope.run.multiadaptive import shaped

                sweep = shaped(sweep, runner.runs)
            if counting is not None and in_place is None:
                sweep = _count(sweep, runner, counting, spent_s=clock.monotonic() - t0,
                               clock=clock, store=store, progress=progress)
        except BaseException:
            # The store may be what failed (a full disk): the first error is the
            # one to report; a sweep left "running" by a dead owner stays resumable.
            with contextlib.suppress(QuadscopeError):
                _end(store, sweep, runner.runs, "interrupted")
            raise
        return _end(store, sweep, runner.runs, "complete")
    finally:
        with contextlib.suppress(QuadscopeError):
            store.release(sweep.id, owner)


# Long enough for any single run (timeouts are minutes), short enough that a
# machine that died mid-sweep does not hold it for more than a working day.
STALE_AFTER_S = 6 * 3600.0


def alive_unless_stale(alive: Callable[[Owner], bool], last_activity_s: float,
                       now_s: float) -> Callable[[Owner], bool]:
    """`alive`, except that a holder on another host idle for STALE_AFTER_S counts as gone."""
    here = this_process().host

    def check(holder: Owner) -> bool:
        if holder.host != here and now_s - max(holder.since, last_activity_s) > STALE_AFTER_S:
            return False
        return alive(holder)

    return check


def busy(sweep: Sweep, holder: Owner) -> SweepBusyError:
    """The sentence for a sweep another live process is running."""
    since = dt.datetime.fromtimestamp(holder.since).strftime("%H:%M:%S") if holder.since else "?"
    here = holder.host == this_process().host
    how = (f"wait for it to end, or stop it (`kill {holder.pid}`) and resume again" if here else
           "quadscope cannot check a process on another host, so it counts as running until it "
           f"has stored nothing for {STALE_AFTER_S / 3600:.0f} h: resume it there once it has "
           "ended, or here after that")
    return SweepBusyError(f"sweep {sweep.id} is being run by process {holder.pid} on host "
                          f"{holder.host or '?'} (since {since}); {how}")


def run_sweep(spec: SweepSpec, *, executor: Executor, clock: Clock, store: Store,
              progress: Progress | None = None, counters: str = "rusage",
              counters_note: str = "", host: Host | None = None,
              provenance: Provenance | None = None, registry: Registry = REGISTRY,
              counting: Counting | None = None) -> Sweep:
    """Run a new sweep to the end (or the budget) and return it as stored.

    `registry` holds the meters `spec.meter` names; `counting`, when given, counts
    the work after the timed plan if time alone left the class open (`run.counting`).
    """
    check_spec(spec, registry)
    if spec.mode == "accumulate":
        spec = dataclasses.replace(spec, sizes=tuple(range(1, spec.runs + 1)), warmup=0, repeat=1)
    owner = this_process(since=clock.time())
    sweep = store.create_sweep(new_sweep(spec, clock=clock, counters=counters,
                                         counters_note=counters_note, host=host or Host(),
                                         provenance=provenance, registry=registry),
                               owner=owner)
    plan: Plan
    budget_s: float | None = spec.budget_s
    if spec.mode == "adaptive" and spec.axes:
        plan = _multi_adaptive(sweep, warmup=spec.warmup, registry=registry)
    elif spec.mode == "adaptive" and (exact := _exact_plan(sweep, executor, registry,
                                                          spec.start_n)) is not None:
        plan = exact
    elif spec.mode == "adaptive":
        # Imported here, as below: the adaptive plan fits (numpy), and the CLI's parser
        # imports this module.
        from quadscope.run.adaptive import AdaptivePlan

        plan = AdaptivePlan(variants=variants(sweep), repeat=spec.repeat, warmup=spec.warmup,
                            timeout_s=spec.timeout_s, seed=spec.seed, until=spec.until,
                            start_n=spec.start_n)
    else:
        plan, budget_s = _fixed_plan(sweep, registry), None
    return _execute(sweep, plan, budget_s=budget_s, done=(), executor=executor, clock=clock,
                    store=store, progress=progress or NoProgress(), owner=owner,
                    counting=counting, in_place=_in_place(sweep, executor, counting, registry))


def check_resumable(sweep: Sweep) -> None:
    """Refuse to resume a sweep that has nothing left to run."""
    if sweep.status == "complete":
        raise UsageError(f"sweep {sweep.id} is already complete; `quadscope show {sweep.id}`")


def resume_sweep(sweep: Sweep, *, executor: Executor, clock: Clock, store: Store,
                 progress: Progress | None = None,
                 alive: Callable[[Owner], bool] = is_alive,
                 registry: Registry = REGISTRY, counting: Counting | None = None) -> Sweep:
    """Continue a stored sweep: run what its plan still lacks; finished runs are kept.

    Refused (`SweepBusyError`) while another live process runs it; a sweep whose
    process died is taken over.
    """
    check_resumable(sweep)
    owner = this_process(since=clock.time())
    last_s = max((r.started_at + r.measurement.wall_s for r in store.runs(sweep.id)), default=0.0)
    holder = store.claim(sweep.id, owner, alive_unless_stale(alive, last_s, clock.time()))
    if holder is not None:
        raise busy(sweep, holder)
    done = store.runs(sweep.id)
    store.set_status(sweep.id, "running")
    plan: Plan
    budget_s: float | None
    spent_s = sum(r.measurement.wall_s for r in done)
    start_n = min(sweep.sizes, default=1)
    if sweep.mode == "adaptive" and sweep.axes:
        plan = _multi_adaptive(sweep, warmup=0, registry=registry)
        budget_s = max((sweep.budget_s or 0.0) - spent_s, 0.0)
    elif sweep.mode == "adaptive" and (exact := _exact_plan(sweep, executor, registry,
                                                          start_n)) is not None:
        plan = exact
        budget_s = max((sweep.budget_s or 0.0) - spent_s, 0.0)
    elif sweep.mode == "adaptive":
        from quadscope.run.adaptive import AdaptivePlan

        # Warm-ups were run the first time, and the sizes from --start with them.
        plan = AdaptivePlan(variants=variants(sweep), repeat=sweep.repeat, warmup=0,
                            timeout_s=sweep.timeout_s, seed=sweep.seed, until=sweep.until)
        budget_s = max((sweep.budget_s or 0.0) - spent_s, 0.0)
    else:
        plan, budget_s = _fixed_plan(sweep, registry), None
    return _execute(sweep, plan, budget_s=budget_s, done=done, executor=executor, clock=clock,
                    store=store, progress=progress or NoProgress(), owner=owner,
                    counting=counting, in_place=_in_place(sweep, executor, counting, registry))
