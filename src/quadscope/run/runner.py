"""Execute a sweep: plan -> runs, each stored the moment it ends.

Contract: `run_sweep(spec, executor=, clock=, store=)` creates the sweep in the
store, runs its plan through the executor, and writes every run with
`store.add_run` as soon as it finishes, so Ctrl-C, a crash or `kill -9` loses
nothing already measured; `resume_sweep` continues a stored sweep from where it
stopped. Sizes come from `plan` (fixed and accumulate modes) or `adaptive`
(budgeted). Nothing here prints: progress goes to a `Progress` callback.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from quadscope.errors import UsageError
from quadscope.measure.clock import Clock
from quadscope.measure.launcher import Executor
from quadscope.model import Measurement, Run, Sweep
from quadscope.run.plan import PlannedRun, plan_accumulate, plan_runs
from quadscope.store import Store


@dataclass(frozen=True, slots=True)
class SweepSpec:
    """What the user asked for. `command` items may hold `{n}` (or `{i}` in accumulate mode)."""

    command: tuple[str, ...]
    name: str = ""
    shell: bool = False
    vs_command: tuple[str, ...] | None = None
    vs_shell: bool = False
    mode: str = "sizes"  # sizes | adaptive | accumulate
    sizes: tuple[int, ...] = ()
    repeat: int = 3
    warmup: int = 1
    timeout_s: float | None = None
    budget_s: float = 30.0
    start_n: int = 1
    runs: int = 0  # launches, in accumulate mode
    seed: int = 0
    predict_n: int | None = None
    kind: str = "sweep"
    until: tuple[str, ...] = ()  # adaptive: metrics that must be confident; () = all


class Progress(Protocol):
    def started(self, sweep: Sweep, total_runs: int | None) -> None: ...
    def ran(self, run: Run, done: int, elapsed_s: float) -> None: ...


class NoProgress:
    def started(self, sweep: Sweep, total_runs: int | None) -> None:
        pass

    def ran(self, run: Run, done: int, elapsed_s: float) -> None:
        pass


PLACEHOLDERS = ("{n}", "{i}")


def substitute(command: Sequence[str], shell: bool, size_n: int) -> list[str]:
    """The argv for one run: `{n}` and `{i}` replaced, a shell string run by /bin/sh -c."""
    args = [a.replace("{n}", str(size_n)).replace("{i}", str(size_n)) for a in command]
    return ["/bin/sh", "-c", args[0]] if shell else args


def check_spec(spec: SweepSpec) -> None:
    """Refuse specs that cannot mean anything, each with one sentence."""
    if not spec.command or not spec.command[0]:
        raise UsageError("no command to sweep: put it after `--`, e.g. quadscope run -- prog {n}")
    commands = [spec.command] + ([spec.vs_command] if spec.vs_command else [])
    if spec.mode != "accumulate":
        for cmd in commands:
            if not any("{n}" in a for a in cmd):
                raise UsageError(
                    f"no {{n}} in `{' '.join(cmd)}`: put {{n}} where the size goes, "
                    "e.g. quadscope run -- prog {n}, or use --accumulate to repeat one command"
                )
    if spec.repeat < 1:
        raise UsageError(f"--repeat must be at least 1, not {spec.repeat}")
    if spec.warmup < 0:
        raise UsageError(f"--warmup cannot be negative ({spec.warmup})")
    if spec.timeout_s is not None and spec.timeout_s <= 0:
        raise UsageError(f"--timeout must be positive, not {spec.timeout_s}")
    if spec.mode == "accumulate" and spec.runs < 4:
        raise UsageError(f"--runs must be at least 4 to fit a trend, not {spec.runs}")
    if spec.mode == "adaptive" and spec.budget_s <= 0:
        raise UsageError(f"--budget must be positive, not {spec.budget_s}")


def new_sweep(spec: SweepSpec, *, clock: Clock, counters: str, counters_note: str,
              host: dict[str, str]) -> Sweep:
    return Sweep(
        id=0,
        name=spec.name or " ".join(spec.command)[:80],
        mode=spec.mode,
        command=spec.command,
        shell=spec.shell,
        vs_command=spec.vs_command,
        vs_shell=spec.vs_shell,
        sizes=spec.sizes,
        repeat=spec.repeat,
        warmup=spec.warmup,
        timeout_s=spec.timeout_s,
        budget_s=spec.budget_s if spec.mode == "adaptive" else None,
        seed=spec.seed,
        predict_n=spec.predict_n,
        counters=counters,
        counters_note=counters_note,
        host=host,
        created_at=clock.time(),
        kind=spec.kind,
    )


class Runner:
    """Executes planned runs of one stored sweep and stores each as it ends."""

    def __init__(self, sweep: Sweep, *, executor: Executor, clock: Clock, store: Store,
                 progress: Progress, first_seq: int = 0, done: int = 0) -> None:
        self.sweep = sweep
        self._executor = executor
        self._clock = clock
        self._store = store
        self._progress = progress
        self._seq = first_seq
        self._done = done
        self._t0 = clock.monotonic()

    def elapsed_s(self) -> float:
        return self._clock.monotonic() - self._t0

    def execute(self, planned: PlannedRun, timeout_s: float | None = None) -> Run:
        sw = self.sweep
        if planned.variant == "B":
            assert sw.vs_command is not None
            argv = substitute(sw.vs_command, sw.vs_shell, planned.size_n)
        else:
            argv = substitute(sw.command, sw.shell, planned.size_n)
        limit = sw.timeout_s if timeout_s is None else timeout_s
        started = self._clock.time()
        measurement: Measurement = self._executor.execute(argv, limit)
        run = Run(
            sweep_id=sw.id,
            seq=self._seq,
            variant=planned.variant,
            size_n=planned.size_n,
            repeat=planned.repeat,
            warmup=planned.warmup,
            started_at=started,
            measurement=measurement,
        )
        self._store.add_run(run)
        self._seq += 1
        self._done += 1
        self._progress.ran(run, self._done, self.elapsed_s())
        return run


def _variants(sweep: Sweep) -> tuple[str, ...]:
    return ("A", "B") if sweep.vs_command is not None else ("A",)


def fixed_plan(sweep: Sweep, runs: int = 0) -> list[PlannedRun]:
    if sweep.mode == "accumulate":
        return plan_accumulate(runs or len(sweep.sizes), variants=_variants(sweep))
    return plan_runs(sweep.sizes, repeat=sweep.repeat, warmup=sweep.warmup, seed=sweep.seed,
                     variants=_variants(sweep))


def _key(p: PlannedRun | Run) -> tuple[str, int, int, bool]:
    return (p.variant, p.size_n, p.repeat, p.warmup)


def _execute_plan(sweep: Sweep, plan: list[PlannedRun], done_keys: set[tuple[str, int, int, bool]],
                  *, executor: Executor, clock: Clock, store: Store, progress: Progress,
                  first_seq: int) -> Sweep:
    todo = [p for p in plan if _key(p) not in done_keys]
    progress.started(sweep, len(plan))
    runner = Runner(sweep, executor=executor, clock=clock, store=store, progress=progress,
                    first_seq=first_seq, done=len(plan) - len(todo))
    try:
        for planned in todo:
            runner.execute(planned)
    except BaseException:
        store.set_status(sweep.id, "interrupted")
        raise
    store.set_status(sweep.id, "complete")
    return dataclasses.replace(sweep, status="complete")


def run_sweep(spec: SweepSpec, *, executor: Executor, clock: Clock, store: Store,
              progress: Progress | None = None, counters: str = "rusage",
              counters_note: str = "", host: dict[str, str] | None = None) -> Sweep:
    """Run a new sweep to the end (or the budget) and return it as stored."""
    check_spec(spec)
    progress = progress or NoProgress()
    if spec.mode == "accumulate":
        spec = dataclasses.replace(spec, sizes=tuple(range(1, spec.runs + 1)), warmup=0, repeat=1)
    sweep = store.create_sweep(new_sweep(spec, clock=clock, counters=counters,
                                         counters_note=counters_note, host=host or {}))
    if spec.mode == "adaptive":
        from quadscope.run.adaptive import run_adaptive

        return run_adaptive(sweep, spec, executor=executor, clock=clock, store=store,
                            progress=progress)
    return _execute_plan(sweep, fixed_plan(sweep), set(), executor=executor, clock=clock,
                         store=store, progress=progress, first_seq=0)


def resume_sweep(sweep: Sweep, *, executor: Executor, clock: Clock, store: Store,
                 progress: Progress | None = None) -> Sweep:
    """Continue a stored sweep: run what its plan still lacks; finished runs are kept."""
    progress = progress or NoProgress()
    if sweep.status == "complete":
        raise UsageError(f"sweep {sweep.id} is already complete; `quadscope show {sweep.id}`")
    done = store.runs(sweep.id)
    store.set_status(sweep.id, "running")
    if sweep.mode == "adaptive":
        from quadscope.run.adaptive import resume_adaptive

        return resume_adaptive(sweep, done, executor=executor, clock=clock, store=store,
                               progress=progress)
    return _execute_plan(sweep, fixed_plan(sweep), {_key(r) for r in done}, executor=executor,
                         clock=clock, store=store, progress=progress,
                         first_seq=store.next_seq(sweep.id))
