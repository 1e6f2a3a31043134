"""What the user asked for: the sweep spec, its checks, and what it makes.

Contract: `SweepSpec` is the immutable request (command, mode, sizes, repeats,
budget, ...). `check_spec(spec)` raises `UsageError` with one sentence for a
spec that cannot mean anything, before anything runs or is stored.
`new_sweep(spec, ...)` is the `Sweep` record to store for it (id 0 until the
store gives one). `substitute(command, shell, size_n)` is the argv of one run:
`{n}` and `{i}` replaced inside each argument (never re-split), and a shell
command run as `/bin/sh -c`. `variants(sweep)` names the commands a sweep
runs: "A", and "B" for `--vs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from quadscope.errors import UsageError
from quadscope.measure.clock import Clock
from quadscope.model import Sweep

METERS = ("time", "instructions")


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
    meter: str = "time"  # "time" or "instructions" (--meter)


def substitute(command: Sequence[str], shell: bool, size_n: int) -> list[str]:
    """The argv for one run: `{n}` and `{i}` replaced, a shell string run by /bin/sh -c."""
    args = [a.replace("{n}", str(size_n)).replace("{i}", str(size_n)) for a in command]
    return ["/bin/sh", "-c", args[0]] if shell else args


def variants(sweep: Sweep) -> tuple[str, ...]:
    """The variants a sweep runs: A for the command, and B for `--vs` when there is one."""
    return ("A", "B") if sweep.vs_command is not None else ("A",)


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
    if spec.meter not in METERS:
        raise UsageError(f"--meter is one of {', '.join(METERS)}, not {spec.meter!r}")
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
    """The record to store for `spec`, created now by `clock`; the store assigns its id."""
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
        meter=spec.meter,
        host=host,
        created_at=clock.time(),
        kind=spec.kind,
    )
