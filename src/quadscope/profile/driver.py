"""Profile a stored sweep: sample it at a few sizes, attribute its growth, write the files.

Contract: `profile_sweep(sweep, sizes, sampler=..., out_dir=..., runs=...)`
re-runs the sweep's command (variant A) under `sampler` at `sizes` (default:
`choose_sizes` over the sizes the sweep measured), writes
`out_dir/folded-n<N>.txt` per size (as sampled) and `out_dir/flame-diff.svg`
(interpreter start-up folded into one frame when it does not grow:
`startup.fold_startup`; for a Python before 3.12 sampled by py-spy and perf
together, perf's C chains placed under the Python frame: `native.splice_native`),
samples page
faults at the largest size when the sweep's fault counts call for it
(`should_sample_faults`: perf's page_faults when stored, else rusage's),
measures the profiler's overhead once, and returns an `Attribution` (with the
user's function named from the samples, `sampled_sentence.sampled_culprit`); it
stores nothing (the caller does `store.put_blob(sweep.id, "profile",
attribution.to_dict())`). The sweep's stored runs are only read: for the
time each size's samples are scaled to (median user+sys CPU seconds) and to
plan the sampling rate.
`choose_sampler(argv)` picks the real sampler for a command.
"""

from __future__ import annotations

import math
import shlex
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from quadscope.analyse.fitting import fit_metric
from quadscope.errors import ToolMissingError
from quadscope.model import Run, Sweep
from quadscope.profile.attribute import FitFn, attribute
from quadscope.profile.flamegraph import render_svg
from quadscope.profile.flametree import flame_tree
from quadscope.profile.native import PythonNativeSampler, splice_native
from quadscope.profile.perf import PerfSampler, PerfSetup, detect_perf
from quadscope.profile.python import (
    NATIVE_FAILED,
    PySpySampler,
    find_pyspy,
    interpreter_note,
    pyspy_native_works,
    python_argv,
    python_version,
)
from quadscope.profile.records import CULPRIT_SENTENCE, Attribution
from quadscope.profile.sampled_sentence import sampled_culprit
from quadscope.profile.sampler import Sampler
from quadscope.profile.stacks import Frame, StackProfile, write_folded
from quadscope.profile.startup import fold_startup
from quadscope.run.spec import run_command, substitute

DEFAULT_SIZE_COUNT = 5
FAULTS_PER_N = 0.1  # at least this many faults per n at the largest size: sample them
FAULTS_MIN = 50_000  # or at least this many in one run


def choose_sizes(measured: Sequence[int], count: int = DEFAULT_SIZE_COUNT) -> tuple[int, ...]:
    """Up to `count` measured sizes nearest to a geometric spread over their range."""
    sizes = sorted({s for s in measured if s > 0})
    if len(sizes) <= count:
        return tuple(sizes)
    lo, hi = math.log(sizes[0]), math.log(sizes[-1])
    picked: list[int] = []
    for i in range(count):
        target = lo + (hi - lo) * i / (count - 1)
        best = min(
            (s for s in sizes if s not in picked),
            key=lambda s: (round(abs(math.log(s) - target), 9), s),
        )
        picked.append(best)
    return tuple(sorted(picked))


def _ok(runs: Sequence[Run]) -> list[Run]:
    return [r for r in runs if r.variant == "A" and not r.warmup and r.measurement.ok]


def reference_seconds(runs: Sequence[Run], size_n: int) -> float | None:
    """Median CPU seconds (user + sys) of the sweep's good runs at `size_n`; wall if no CPU."""
    at = [r for r in _ok(runs) if r.size_n == size_n]
    if not at:
        return None
    # An imported sweep (hyperfine, pytest-benchmark) has wall time alone.
    cpus = [r.measurement.user_s + r.measurement.sys_s for r in at
            if r.measurement.user_s is not None and r.measurement.sys_s is not None]
    cpu = statistics.median(cpus) if cpus else 0.0
    return cpu if cpu > 0 else statistics.median(r.measurement.wall_s for r in at)


def should_sample_faults(runs: Sequence[Run]) -> tuple[bool, int | None]:
    """(sample faults?, expected faults per run at the largest size), from the stored runs.

    The count is perf's `page_faults` when the runs at the largest size carry it,
    else rusage's minor + major faults. rusage misses whole kinds: a call through
    the legacy vsyscall page traps and is emulated by the kernel before the
    fault is counted in rusage (ru_minflt stays ~70 however many calls), while
    perf's page-faults event sees every one of them.
    """
    from quadscope.analyse.launches import counted_apart

    # The timed runs: a count under Valgrind (at a size the timed sweep may not have, when
    # counting went on doubling) has rusage's faults of Valgrind and no perf page_faults.
    good, _ = counted_apart(_ok(runs), "instructions")
    if not good:
        return False, None
    top = max(r.size_n for r in good)
    at_top = [r.measurement for r in good if r.size_n == top]
    counted = [m.page_faults for m in at_top if m.page_faults is not None]
    if not counted:
        counted = [m.minor_faults + m.major_faults for m in at_top
                   if m.minor_faults is not None and m.major_faults is not None]
    if not counted:  # an imported sweep: no fault counts were ever taken
        return False, None
    faults = int(statistics.median(counted))
    return (top > 0 and faults / top >= FAULTS_PER_N) or faults >= FAULTS_MIN, faults


def symbol_notes(profile: StackProfile, share: float = 0.05) -> tuple[str, ...]:
    """One sentence per binary holding ≥ `share` of the samples with almost no symbols."""
    total = profile.total_weight
    per_dso: dict[str, list[int]] = {}
    for stack, w in profile.stacks.items():
        leaf = stack[-1]
        if leaf.kernel or not leaf.dso.startswith("/"):
            continue
        counts = per_dso.setdefault(leaf.dso, [0, 0])
        counts[0 if leaf.known else 1] += w
    notes = []
    for dso, (known, unknown) in sorted(per_dso.items()):
        if total and (known + unknown) / total >= share and unknown >= 0.9 * (known + unknown):
            notes.append(
                f"{dso} has no symbols: rebuild with -g or install its -dbgsym package; "
                f"its code shows as [{Path(dso).name}] instead of function names"
            )
    return tuple(notes)


def choose_sampler(argv: Sequence[str], setup: PerfSetup | None = None, *,
                   light: bool = False, timeout_s: float | None = None,
                   timeout_why: str = "") -> Sampler:
    """The real sampler for `argv`: perf, or for Python py-spy / perf -X perf (see `python`).

    `light`: py-spy without `--native` (perf's separate recordings still add the C
    functions): `--native` slowed a Python call 3-4.5×, by a factor varying 30% between
    sizes, which bent the fitted growth of a repeated call. `timeout_s` bounds each
    recording (else the samplers' own 600 s), `timeout_why` says why in the note of a
    recording it stopped.
    """
    bound: dict[str, Any] = {} if timeout_s is None else {"timeout_s": timeout_s,
                                                          "timeout_why": timeout_why}
    if python_argv(argv):
        version = python_version(argv[0])
        perf, perf_missing = _perf_or_why(setup)
        if version is not None and version >= (3, 12) and perf is not None:
            return PerfSampler(perf, python_perf=True, **bound)
        pyspy = find_pyspy()
        if pyspy:
            native = not light and pyspy_native_works(pyspy, argv[0])
            spy_notes = () if native or light else (NATIVE_FAILED,)
            if perf is not None:  # perf adds the interpreter's C functions (see native.py)
                return PythonNativeSampler(
                    PySpySampler(pyspy, native=native, notes=spy_notes, **bound),
                    PerfSampler(perf, **bound))
            return PySpySampler(pyspy, native=native,
                                notes=(*spy_notes, no_c_frames_note(perf_missing)), **bound)
        if perf is None:
            raise ToolMissingError(perf_missing)
        s = perf
        why = (f"Python functions are not shown: {argv[0]} is Python "
               f"{'.'.join(map(str, version)) if version else '(unknown version)'}, which has no "
               "perf trampolines (3.12+ has `-X perf`), and py-spy is not installed "
               "(`pip install py-spy`); the interpreter's C functions are shown instead")
        return PerfSampler(PerfSetup(s.perf, s.event, s.kernel, s.max_freq_hz, s.fault_event,
                                     (*s.notes, why)), **bound)
    return PerfSampler(setup or detect_perf(), **bound)


def _perf_or_why(setup: PerfSetup | None) -> tuple[PerfSetup | None, str]:
    """perf's setup, or None and the sentence saying why it cannot sample here."""
    if setup is not None:
        return setup, ""
    try:
        return detect_perf(), ""
    except ToolMissingError as e:
        return None, str(e)


def no_c_frames_note(why: str) -> str:
    """Why a Python program's profile shows no C function under its Python frames."""
    return ("the interpreter's C functions under Python frames (list.insert's list_insert) "
            "are not shown: they come from perf (-X perf on Python 3.12+, a second recording "
            f"before), and perf does not work here ({why.rstrip('.')}); py-spy's Python "
            "frames are shown alone")


def profile_sweep(
    sweep: Sweep,
    sizes: Sequence[int] | None,
    *,
    sampler: Sampler,
    out_dir: Path,
    runs: Sequence[Run] = (),
    fit: FitFn = fit_metric,
    measure_overhead: bool = True,
    progress: Callable[[str], None] | None = None,
) -> Attribution:
    say = progress or (lambda _msg: None)
    measured = sorted({r.size_n for r in _ok(runs)}) or list(sweep.sizes)
    chosen = tuple(sorted(set(sizes))) if sizes else choose_sizes(measured)
    out_dir.mkdir(parents=True, exist_ok=True)
    profiles: list[StackProfile] = []
    folded: list[str] = []
    notes: list[str] = list(sampler.notes)
    for n in chosen:
        say(f"sampling n={n} with {sampler.name}")
        argv = substitute(run_command(sweep), sweep.shell, n)
        prof = sampler.sample(argv, size_n=n, reference_s=reference_seconds(runs, n),
                              out_dir=out_dir)
        profiles.append(prof)
        folded.append(str(write_folded(out_dir / f"folded-n{n}.txt", prof.stacks)))
        notes.extend(x for x in (*prof.notes, *symbol_notes(prof)) if x not in notes)
    merged, spliced = splice_native(profiles)
    if spliced:
        notes.append(spliced)
    startup = fold_startup(merged, interpreted=python_argv(sweep.command))
    if startup.note:
        notes.append(startup.note)
    profiles = list(startup.profiles)
    result = attribute(profiles, fit=fit, seed=sweep.seed)
    notes.extend(result.notes)
    if sampler.name.startswith("py-spy") and (why := interpreter_note(result.culprits)):
        notes.append(why)
    classes = {Frame(c.symbol, c.dso): c.self_class for c in result.culprits}
    svg = render_svg(profiles[0], profiles[-1], classes=classes,
                     title=f"quadscope: {shlex.join(sweep.command)}")
    svg_path = out_dir / "flame-diff.svg"
    svg_path.write_text(svg)
    top = chosen[-1]
    top_argv = substitute(run_command(sweep), sweep.shell, top)
    faults = None
    wanted, expected = should_sample_faults(runs)
    if wanted:
        say(f"sampling page faults at n={top}")
        faults = sampler.sample_faults(top_argv, size_n=top, expected_faults=expected,
                                       out_dir=out_dir)
    overhead = None
    if measure_overhead:
        say(f"measuring the profiler's overhead at n={top}")
        overhead = sampler.overhead(top_argv, size_n=top)
    tree = flame_tree(profiles[0], profiles[-1], classes=classes,
                      middle=profiles[-2] if len(profiles) > 2 else None)
    said = sampled_culprit(result.culprits, tree, superlinear=result.superlinear,
                           size_n=chosen[-1], profiles=profiles, fit=fit, seed=sweep.seed)
    return Attribution(
        sweep_id=sweep.id,
        sizes=chosen,
        sampler=sampler.name,
        event=profiles[-1].event,
        samples=tuple(p.samples for p in profiles),
        culprits=result.culprits,
        folded=tuple(folded),
        flame_svg_path=str(svg_path),
        flame_svg=svg,
        superlinear=result.superlinear,
        notes=tuple(notes),
        faults=faults,
        overhead=overhead,
        total_s=result.series.total_s,
        extra={"repeats": [p.repeats for p in profiles],
               **({CULPRIT_SENTENCE: said} if said else {})},
        flame_tree=tree,
    )
