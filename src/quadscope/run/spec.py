"""What the user asked for: the sweep spec, its checks, and what it makes.

Contract: `SweepSpec` is the immutable request (command, mode, sizes, repeats,
budget, meter, ...). `check_spec(spec, registry)` raises `UsageError` with one
sentence for a spec that cannot mean anything (a meter the meter registry
lacks among them), before anything runs or is stored.
`new_sweep(spec, ...)` is the `Sweep` record to store for it (id 0 until the
store gives one), its start-up size (`startup_size`: runs at n = 1 beside a fixed
grid, measuring the program's start-up apart) decided there.
`substitute(command, shell, size_n)` is the argv of one run: `{n}` and `{i}`
replaced inside each argument (never re-split), and a shell command run as
`/bin/sh -c`. `size_padding(command, size_n)` is the
environment variable that keeps the child's argv + environment the same size
at every n: each `{n}` adds the digits of n to the argv, and the padding gives
back what those digits lack of `MAX_DIGITS`, so the child's initial stack (argv
and environment strings sit at its top) starts at the same offset whatever n is
and no alignment effect grows in step with n's digits (Mytkowicz et al.,
"Producing wrong data without doing anything obviously wrong!", ASPLOS 2009,
measured such effects from the environment's size alone). `variants(sweep)`
names the commands a sweep runs: "A", and "B" for `--vs`; `run_command(sweep,
variant)` is the command it runs (`measure.shims`: a version manager's shim
recorded in the sweep's host facts is run as the program it would run). Numbers are
bounded (MAX_SECONDS, MAX_REPEAT, sizes.MAX_SIZE): nan, inf and absurd values
are refused, never stored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from quadscope import meters, metrics
from quadscope.errors import UsageError
from quadscope.host import Host
from quadscope.model import Sweep
from quadscope.run.sizes import MAX_EXACT_SIZE, MAX_SIZE, MAX_SIZES
from quadscope.textsafe import command_text, shorten

if TYPE_CHECKING:  # and pyfunc where used: the CLI's parser imports this module
    from quadscope.measure.clock import Clock
    from quadscope.measure.provenance import Provenance

# Bounds past which a number is a typo, not a plan: a week of time, a thousand
# repeats. They keep nan, inf and 1e300 out of the store before anything runs.
MAX_SECONDS = 7 * 24 * 3600.0
MAX_REPEAT = 1000
MAX_SEED = 2**63 - 1
MAX_NAME_CHARS = 200
NAME_CHARS = 80  # a default name (the command) is cut to one line of a terminal
LATEST_NAMES = ("last", "latest")  # refs `quadscope show` reads as the newest sweep


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
    setup: str | None = None  # shell command, untimed, once per size before its runs
    prepare: str | None = None  # shell command, untimed, before every run
    cpus: tuple[int, ...] = ()  # pin every run to these CPUs; () = not pinned
    meter: str = meters.REGISTRY.default.name  # a meter of the registry (--meter)
    fork: bool = False  # python: targets: one forked call per run (--fork)
    # Several sizes (run/axes.py, run/design.py): each axis's name and sizes, the
    # combinations to measure; `sizes` is then the first axis's. Empty for one size.
    # Adaptive mode over several sizes (run/multiadaptive.py): each axis's one start, no points.
    axes: tuple[tuple[str, tuple[int, ...]], ...] = ()
    points: tuple[tuple[int, ...], ...] = ()
    # The size whose runs measure the start-up apart (--startup-n; None: off), where
    # `startup_size` says it applies.
    startup_n: int | None = 1


def startup_size(spec: SweepSpec, registry: meters.Registry = meters.REGISTRY) -> int | None:
    """The size run apart to measure the program's start-up, or None where none is.

    A fixed grid over one size of a timed program gets runs at `spec.startup_n` (n = 1:
    the program starting, reading its arguments and doing one element's work), planned
    and stored like every size, so the fit measures the offset a rather than trading it
    off against k (`analyse.fitting`, step 5). None when switched off, when the grid
    already reaches that size, and where there is no start-up to measure or it is
    measured already: a `python:` target's calls (in-process), accumulate mode (one
    command), adaptive mode (it starts at `--start`, 1 unless told), several sizes, and
    an exact meter's counts (an offset counted exactly is not noisy).
    """
    from quadscope.measure.pyfunc import PREFIX as PYTHON_PREFIX

    n0 = spec.startup_n
    if n0 is None or spec.mode != "sizes" or spec.axes or not spec.sizes:
        return None
    if min(spec.sizes) <= n0 or meters.exact_metric(spec.meter, registry):
        return None
    commands = [spec.command] + ([spec.vs_command] if spec.vs_command else [])
    if any(c and c[0].startswith(PYTHON_PREFIX) for c in commands):
        return None
    return n0


def substitute(command: Sequence[str], shell: bool, size_n: int,
               values: Mapping[str, int] | None = None) -> list[str]:
    """The argv for one run: `{n}` and `{i}` replaced, a shell string run by /bin/sh -c.

    `values`, for a sweep over several sizes, gives every axis's size by name instead.
    """
    if values:
        from quadscope.run.axes import fill

        args = fill(command, values)
    else:
        args = [a.replace("{n}", str(size_n)).replace("{i}", str(size_n)) for a in command]
    return ["/bin/sh", "-c", args[0]] if shell else args


PAD_VAR = "QUADSCOPE_PAD"
MAX_DIGITS = 20  # an int64's digits: no size outgrows the padding


def size_padding(command: Sequence[str], size_n: int,
                 values: Mapping[str, int] | None = None) -> tuple[tuple[str, str], ...]:
    """The padding variable for one run of `command` at `size_n` (see the module docstring);
    with `values` (several sizes) every axis's placeholders are counted."""
    if values:
        pad = sum(a.count("{" + k + "}") * (MAX_DIGITS - len(str(v)))
                  for a in command for k, v in values.items())
        return ((PAD_VAR, "x" * max(0, pad)),)
    holes = sum(a.count("{n}") + a.count("{i}") for a in command)
    return ((PAD_VAR, "x" * max(0, holes * (MAX_DIGITS - len(str(size_n))))),)


def run_command(sweep: Sweep, variant: str = "A") -> tuple[str, ...]:
    """The command `variant` of `sweep` runs: as typed, but a program the sweep's host facts
    record as a version manager's shim replaced by the program the shim runs (a shell
    command is left as typed)."""
    from quadscope.measure.shims import see_through

    command, shell = ((sweep.vs_command, sweep.vs_shell) if variant == "B"
                      else (sweep.command, sweep.shell))
    if command is None:
        raise ValueError(f"sweep {sweep.id} has no variant {variant}")
    return tuple(command) if shell else see_through(command, sweep.host.shims)


def variants(sweep: Sweep) -> tuple[str, ...]:
    """The variants a sweep runs: A for the command, and B for `--vs` when there is one."""
    return ("A", "B") if sweep.vs_command is not None else ("A",)


def check_seconds(option: str, value: float | None) -> None:
    """Refuse a duration that is not a positive, finite number of seconds up to a week."""
    if value is None:
        return
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"{option} must be a positive number of seconds, not {value}")
    if value > MAX_SECONDS:
        raise UsageError(f"{option} {value:g} is more than a week ({MAX_SECONDS:.0f} s); "
                         "give it in seconds")


def _count(option: str, value: int, low: int, high: int, why: str = "") -> None:
    if not low <= value <= high:
        raise UsageError(f"{option} must be from {low} to {high}{why}, not {value}")


def check_name(name: str) -> None:
    """Refuse a --name that would read as a sweep id or `last`, or that cannot be printed."""
    if not name:
        return
    if name.strip().isdigit() or name.strip().lower() in LATEST_NAMES:
        raise UsageError(f"--name {name!r} looks like a sweep id or `last`, so `quadscope show "
                         f"{name.strip()}` could not find it; choose a name with a letter in it")
    if not name.isprintable() or len(name) > MAX_NAME_CHARS or name != name.strip():
        raise UsageError(f"--name {name[:40]!r} must be printable text of at most "
                         f"{MAX_NAME_CHARS} characters, without surrounding spaces")


def _check_python_target(cmd: Sequence[str], mode: str, names: Sequence[str] = ()) -> None:
    from quadscope.measure.pyfunc import PREFIX as PYTHON_PREFIX

    if not cmd[0].startswith(PYTHON_PREFIX):
        return
    if names:
        wanted = tuple("{" + n + "}" for n in names)
        if tuple(cmd[1:]) != wanted:
            raise UsageError(f"a python: target is called with the sizes alone, in the order of "
                             f"--sizes: `{cmd[0]} {' '.join(wanted)}`, not `{' '.join(cmd)}`")
        return
    placeholder = "{i}" if mode == "accumulate" else "{n}"
    if tuple(cmd[1:]) != (placeholder,):
        raise UsageError(f"a python: target is called with the size alone: "
                         f"`{cmd[0]} {placeholder}`, not `{' '.join(cmd)}`; "
                         "build other arguments inside the function")


def _check_axes(spec: SweepSpec, commands: Sequence[Sequence[str]]) -> None:
    """A sweep over several sizes: fixed sizes (or one start each, adaptive), every axis used,
    every placeholder given."""
    from quadscope.run.axes import check_placeholders
    from quadscope.run.design import Axis

    if spec.mode not in ("sizes", "adaptive"):
        raise UsageError("a sweep over several sizes measures sizes: --accumulate takes none")
    axes = [Axis(name, sizes) for name, sizes in spec.axes]
    check_placeholders(axes, commands)
    if spec.mode == "adaptive":  # each axis's one start (run/multiadaptive.py) grows from it
        for name, sizes in spec.axes:
            if len(sizes) != 1:
                raise UsageError(f"adaptive mode over several sizes starts each axis at one size, "
                                 f"not {len(sizes)} for {name}")
            _count(f"--start {name}=", sizes[0], 1, MAX_EXACT_SIZE // 1024,
                   " (it is doubled from there)")
        return
    if not spec.points:
        raise UsageError("a sweep over several sizes needs its points (run/design.py)")


def check_spec(spec: SweepSpec, registry: meters.Registry = meters.REGISTRY) -> None:
    """Refuse specs that cannot mean anything, each with one sentence; `registry` has the meters."""
    if not spec.command or not spec.command[0]:
        raise UsageError("no command to sweep: put it after `--`, e.g. quadscope run -- prog {n}")
    if spec.vs_command is not None and (not spec.vs_command or not spec.vs_command[0].strip()):
        raise UsageError("the second command (--vs) is empty: give it, e.g. --vs './fast {n}'")
    commands = [spec.command] + ([spec.vs_command] if spec.vs_command else [])
    names = tuple(name for name, _ in spec.axes)
    if spec.axes:
        _check_axes(spec, commands)
    elif spec.mode != "accumulate":
        for cmd in commands:
            if not any("{n}" in a for a in cmd):
                raise UsageError(
                    f"no {{n}} in `{' '.join(cmd)}`: put {{n}} where the size goes, "
                    "e.g. quadscope run -- prog {n}, or use --accumulate to repeat one command"
                )
    pairs = [(spec.command, spec.shell)]
    if spec.vs_command is not None:
        pairs.append((spec.vs_command, spec.vs_shell))
    for cmd, shell in pairs:
        if not shell:
            _check_python_target(cmd, spec.mode, names)
    _count("--repeat", spec.repeat, 1, MAX_REPEAT)
    _count("--warmup", spec.warmup, 0, MAX_REPEAT)
    check_seconds("--timeout", spec.timeout_s)
    check_seconds("--budget", spec.budget_s)
    if spec.mode == "accumulate":
        _count("--runs", spec.runs, 4, MAX_SIZES, " (4 is the least that fits a trend)")
    _count("--start", spec.start_n, 0, MAX_EXACT_SIZE)  # adaptive grows n no further
    if spec.predict_n is not None:
        _count("--predict", spec.predict_n, 0, MAX_SIZE)
    _count("--seed", spec.seed, 0, MAX_SEED)
    if spec.startup_n is not None:
        _count("--startup-n", spec.startup_n, 0, MAX_SIZE, " (or off)")
    check_name(spec.name)
    unknown = [m for m in spec.until if metrics.find(m) is None]
    if unknown:
        raise UsageError(f"--until names no metric {', '.join(repr(m) for m in unknown)}; "
                         f"choose from {', '.join(metrics.NAMES)}")
    from quadscope.measure.pyfunc import PREFIX as PYTHON_PREFIX

    if any(c.startswith(PYTHON_PREFIX) for c in (spec.command[0], *(spec.vs_command or ("",)))) \
            and (spec.setup or spec.prepare):
        raise UsageError("--setup and --prepare run shell commands before a program's runs; "
                         "a Python function builds its input in its own setup(n)")
    meters.named(spec.meter, registry)  # a UsageError naming the meters otherwise


def new_sweep(spec: SweepSpec, *, clock: Clock, counters: str, counters_note: str,
              host: Host, provenance: Provenance | None = None,
              registry: meters.Registry = meters.REGISTRY) -> Sweep:
    """The record to store for `spec`, created now by `clock`; the store assigns its id
    (`registry` has the meters, which say whether the meter is exact: `startup_size`)."""
    from quadscope.measure.provenance import Provenance

    where = provenance or Provenance()
    return Sweep(
        id=0,
        # Named as the user would type the command, so a copied name still runs.
        name=spec.name or shorten(command_text(spec.command, spec.shell), NAME_CHARS),
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
        git_commit=where.git_commit,
        git_branch=where.git_branch,
        git_dirty=where.git_dirty,
        machine=where.machine,
        created_at=clock.time(),
        kind=spec.kind,
        setup=spec.setup,
        prepare=spec.prepare,
        cpus=spec.cpus,
        fork=spec.fork,
        until=spec.until,
        axes=spec.axes,
        points=spec.points,
        startup_n=startup_size(spec, registry),
    )
