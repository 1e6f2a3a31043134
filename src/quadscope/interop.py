"""Reading what users already have: hyperfine and pytest-benchmark JSON as quadscope sweeps.

Contract: `read_sweeps(data, source=, now=, param=)` turns a parsed JSON
document into `Imported` sweeps (a `Sweep` with id 0 and its runs' sizes and
measurements), ready to store and then fit, compare and report like any
other; it is pure and raises `ImportFormatError` (one sentence) for anything
else. Formats:

- hyperfine `--parameter-scan NAME ... --export-json FILE`: one sweep per
  command given (its results' commands with the parameter's value written
  `{n}`, in the file's order); each result's `parameters[NAME]` is n and each of its `times` (wall seconds,
  one per run) a run, with the run's `exit_codes` entry, and its
  `memory_usage_byte` as max_rss_bytes when hyperfine wrote them per run.
  hyperfine reports user and system time only as means, so they are left
  out rather than repeated on every run.
- pytest-benchmark `--benchmark-json FILE`: one sweep per benchmarked
  function (the name before `[`), n from its one numeric parameter (or
  `param=`), the rounds of `stats.data` as runs when saved with
  `--benchmark-save-data`, else one run at `stats.median` per size (a
  note says so). Its `commit_info` and `machine_info` become the sweep's git
  fields and machine.

The sweep's `counters` names the tool; `created_at` is the file's own date when
it has one, else `now`.

Every number is checked before anything is returned, so nothing of a file
that holds one bad value is stored: times must be durations (0, or 1e-15
to 1e9 seconds: `is_duration`), exit codes integers from -255 to 255,
memory a non-negative 64-bit integer, sizes exact integers from 0 to
`sizes.MAX_SIZE` (read as decimals, never through a float).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from quadscope.errors import SizesError, UsageError
from quadscope.model import Measurement, Sweep
from quadscope.run.sizes import MAX_SIZE, check_distinct, plain_decimal

MAX_BYTES = 2**63 - 1  # what a store's 64-bit integer column holds
# Runs one file may hold: storing and reading back 4,000,000 (a 28 MB hyperfine file of
# 20,000 runs at 199 sizes) took well over the 120 s it was given, with nothing said.
MAX_RUNS = 1_000_000


class ImportFormatError(UsageError):
    """A file to import is not hyperfine's or pytest-benchmark's JSON, or has no sizes."""


@dataclass(frozen=True, slots=True)
class Imported:
    sweep: Sweep
    runs: tuple[tuple[int, Measurement], ...]  # (size_n, measurement) in file order


def read_sweeps(data: Any, *, source: str, now: float, param: str | None = None) -> list[Imported]:
    """The sweeps in a hyperfine or pytest-benchmark JSON document (see the module docstring)."""
    if isinstance(data, Mapping) and isinstance(data.get("results"), list):
        return _hyperfine(data["results"], source, now, param)
    if isinstance(data, Mapping) and isinstance(data.get("benchmarks"), list):
        return _pytest_benchmark(data, source, now, param)
    if isinstance(data, Mapping) and "sweep" in data and "runs" in data:
        # A quadscope export was once told it is "neither hyperfine nor pytest-benchmark".
        raise ImportFormatError(
            f"{source} is a sweep `quadscope export --json` wrote, not one to import: "
            f"`quadscope compare RUN {source}` compares a stored sweep with it")
    raise ImportFormatError(
        f"{source} is neither `hyperfine --export-json` output (a 'results' list) nor "
        "pytest-benchmark JSON (a 'benchmarks' list)")


def _size(params: Any, param: str | None, source: str, what: str) -> tuple[str, int]:
    """(name, n): the named parameter, or the only numeric one."""
    if not isinstance(params, Mapping) or not params:
        raise ImportFormatError(f"{source}: {what} has no parameter to use as n; run it with a "
                                "size parameter (hyperfine --parameter-scan, pytest parametrize)")
    numeric = {k: v for k, v in params.items() if _as_int(v) is not None}
    if param is not None:
        if param not in numeric:
            raise ImportFormatError(f"{source}: {what} has no numeric parameter {param!r} "
                                    f"(it has {', '.join(map(str, params)) or 'none'})")
        key = param
    elif len(numeric) == 1:
        key = next(iter(numeric))
    else:
        raise ImportFormatError(f"{source}: {what} has {len(numeric)} numeric parameters "
                                f"({', '.join(map(str, numeric)) or 'none'}); name n with --param")
    value = _as_int(numeric[key])
    assert value is not None
    return key, _checked_size(value, source, what)


def _as_int(v: Any) -> int | None:
    """`v` as an exact integer (an int, a whole float, or the decimal text of one), or None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    try:  # text as --sizes reads it: ASCII digits only (Decimal takes "1_000" and "１０")
        exact = (plain_decimal(v) if isinstance(v, str)
                 else Decimal(str(v)) if isinstance(v, float) else None)
    except InvalidOperation:
        return None
    if exact is None or not exact.is_finite() or exact != exact.to_integral_value():
        return None
    return int(exact)


def _checked_size(n: int, source: str, what: str) -> int:
    if not 0 <= n <= MAX_SIZE:
        raise ImportFormatError(f"{source}: {what} has size {n}, outside 0 to {MAX_SIZE}")
    return n


# A duration a run can have: none shorter than a femtosecond but zero (far below it
# the fit's weights, 1/t², overflow), none longer than 30 years (far past it their
# sums do). A per-call rusage delta of an in-process batch is ~1e-12 s at the least.
MIN_DURATION_S = 1e-15
MAX_DURATION_S = 1e9


def is_duration(seconds: float) -> bool:
    """Whether `seconds` can be a run's time: 0, or finite from MIN_ to MAX_DURATION_S."""
    return seconds == 0 or MIN_DURATION_S <= seconds <= MAX_DURATION_S


def _seconds(v: Any, source: str, what: str) -> float:
    """A time from the file: a duration (`is_duration`) in seconds, or ImportFormatError."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ImportFormatError(f"{source}: {what} has a time {_shown(v)} that is not a number; "
                                "nothing was stored")
    try:
        t = float(v)
    except OverflowError:  # an integer of hundreds of digits
        t = math.inf
    if not is_duration(t):
        raise ImportFormatError(f"{source}: {what} has a time {_shown(v)}, which is not a "
                                f"duration (0, or {MIN_DURATION_S:g} to {MAX_DURATION_S:g} s); "
                                "nothing was stored")
    return t


def _integer(v: Any, low: int, high: int, source: str, what: str, field: str) -> int:
    """An integer field (an exit code, a byte count) within [low, high], or ImportFormatError."""
    n = _as_int(v)
    if n is None or not low <= n <= high:
        raise ImportFormatError(f"{source}: {what} has {field} {_shown(v)}, not an integer from "
                                f"{low} to {high}; nothing was stored")
    return n


def _distinct(runs: Sequence[tuple[int, Measurement]], source: str) -> None:
    try:
        check_distinct(tuple(sorted({n for n, _ in runs})), source)
    except SizesError as exc:
        raise ImportFormatError(str(exc)) from None


def _shown(v: Any) -> str:
    return repr(v)[:40]


def _check_count(runs: int, source: str, what: str) -> None:
    if runs > MAX_RUNS:
        raise ImportFormatError(f"{source}: {what} hold {runs:,} runs; quadscope imports at most "
                                f"{MAX_RUNS:,} from one file (more would take many minutes to "
                                "store and fit): keep fewer runs a size, or split the file")


def size_templates(commands: Sequence[tuple[str, str]]) -> list[str]:
    """Each (command, size as written) with the size written as {n}: the command hyperfine ran.

    Only a number standing alone in digits is the size, and where commands of one shape (the
    same text between their numbers) hold their own size at a place, that place alone: every
    occurrence replaced split `python3 bench.py {n}` at n = 3 into a sweep of its own
    (`python{n} bench.py {n}`). A size written other than in digits is replaced where it occurs.
    """
    parts = [re.split(r"(\d+)", command) for command, _ in commands]
    shapes: dict[tuple[str, ...], list[int]] = {}
    for i, split in enumerate(parts):
        shapes.setdefault(tuple(split[0::2]), []).append(i)
    out = [command.replace(value, "{n}") for command, value in commands]
    for members in shapes.values():
        if not all(commands[i][1].isdigit() for i in members):
            continue
        slots = [j for j in range(1, len(parts[members[0]]), 2)
                 if all(parts[i][j] == commands[i][1] for i in members)]
        if len(members) == 1:
            slots = slots[-1:]  # alone, nothing tells the places apart: the last, as CLIs put n
        for i in members:
            out[i] = "".join("{n}" if j in slots else part for j, part in enumerate(parts[i]))
    return out


def _hyperfine(results: list[Any], source: str, now: float, param: str | None) -> list[Imported]:
    by_template: dict[str, list[tuple[int, Measurement]]] = {}
    try:
        sized = []
        for i, res in enumerate(results):
            if not isinstance(res, Mapping):
                raise ImportFormatError(f"{source}: hyperfine's result {i} is {_shown(res)}, "
                                        "not an object; export it again with --export-json")
            key, _ = _size(res.get("parameters"), param, source, f"command {res.get('command')!r}")
            sized.append((str(res["command"]), str(res["parameters"][key])))
        _check_count(sum(len(res["times"]) for res in results), source, "hyperfine's results")
        templates = size_templates(sized)
        for i, res in enumerate(results):
            if not isinstance(res, Mapping):
                raise ImportFormatError(f"{source}: hyperfine's result {i} is {_shown(res)}, "
                                        "not an object; export it again with --export-json")
            what = f"command {res.get('command')!r}"
            key, n = _size(res.get("parameters"), param, source, what)
            times = [_seconds(t, source, what) for t in res["times"]]
            codes = list(res.get("exit_codes") or [0] * len(times))
            memory: Any = res.get("memory_usage_byte")
            per_run_memory = isinstance(memory, list) and len(memory) == len(times)
            # Each command hyperfine was given is its own sweep: its size written as {n}.
            runs = by_template.setdefault(templates[i], [])
            for k, t in enumerate(times):
                rss = (_integer(memory[k], 0, MAX_BYTES, source, what, "a memory use")
                       if per_run_memory else None)
                code = (_integer(codes[k], -255, 255, source, what, "an exit code")
                        if k < len(codes) and codes[k] is not None else 0)
                runs.append((n, Measurement(wall_s=t, exit_code=code, max_rss_bytes=rss)))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ImportFormatError(f"{source} looks like hyperfine JSON but a result lacks "
                                f"{exc}: export it again with --export-json") from None
    if not any(by_template.values()):
        raise ImportFormatError(f"{source}: hyperfine's results hold no runs")
    out = []
    for template, runs in by_template.items():
        if not runs:
            continue
        _distinct(runs, source)
        try:
            command = tuple(shlex.split(template))
        except ValueError:
            command = (template,)
        sweep = _sweep(name=template, command=command, sizes=[n for n, _ in runs], now=now,
                       source_tool="hyperfine", note="imported from hyperfine: wall time per "
                       "run; user and system time are only given as means and are left out")
        out.append(Imported(sweep, tuple(runs)))
    return out


def _pytest_benchmark(data: Mapping[str, Any], source: str, now: float,
                      param: str | None) -> list[Imported]:
    by_func: dict[str, list[tuple[int, Measurement]]] = {}
    medians_only: set[str] = set()
    try:
        _check_count(sum(len(b["stats"].get("data") or ()) for b in data["benchmarks"]), source,
                     "its benchmarks")
        for b in data["benchmarks"]:
            func = str(b.get("fullname") or b["name"]).split("[", 1)[0]
            _, n = _size(b.get("params"), param, source, f"benchmark {b['name']!r}")
            stats = b["stats"]
            samples = stats.get("data")
            if not samples:
                samples = [stats["median"]]
                medians_only.add(func)
            what = f"benchmark {b['name']!r}"
            by_func.setdefault(func, []).extend(
                (n, Measurement(wall_s=_seconds(t, source, what), exit_code=0)) for t in samples)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ImportFormatError(f"{source} looks like pytest-benchmark JSON but a benchmark "
                                f"lacks {exc}: write it again with --benchmark-json") from None
    if not by_func:
        raise ImportFormatError(f"{source}: pytest-benchmark's file holds no benchmarks")
    for runs in by_func.values():
        _distinct(runs, source)
    commit = _mapping(data.get("commit_info"))
    machine = _mapping(data.get("machine_info"))
    cpu = _mapping(machine.get("cpu"))
    label = " ".join(x for x in (str(machine.get("node") or ""),
                                 f"({cpu.get('brand_raw')})" if cpu.get("brand_raw") else "") if x)
    created = _timestamp(data.get("datetime"), now)
    commit_id = str(commit.get("id") or "")
    out = []
    for func, runs in by_func.items():
        note = ("imported from pytest-benchmark: one run per round"
                if func not in medians_only else
                "imported from pytest-benchmark statistics: one median per size; save with "
                "--benchmark-save-data to import every round")
        sweep = _sweep(name=func, command=(f"{func}[{{n}}]",), sizes=[n for n, _ in runs],
                       now=created, source_tool="pytest-benchmark", note=note)
        branch = commit.get("branch")
        sweep = dataclasses.replace(
            sweep, git_commit="" if commit_id == "unversioned" else commit_id,
            git_branch="" if branch in (None, "(unknown)") else str(branch),
            git_dirty=bool(commit.get("dirty")), machine=label)
        out.append(Imported(sweep, tuple(runs)))
    return out


def _mapping(v: Any) -> Mapping[str, Any]:
    # Metadata of another shape is left out, not a reason to refuse the measurements.
    return v if isinstance(v, Mapping) else {}


def _timestamp(text: Any, now: float) -> float:
    try:
        return dt.datetime.fromisoformat(str(text)).timestamp()
    except ValueError:
        return now


def _sweep(*, name: str, command: tuple[str, ...], sizes: Sequence[int], now: float,
           source_tool: str, note: str) -> Sweep:
    repeats = max((sizes.count(n) for n in set(sizes)), default=1)
    return Sweep(id=0, name=name[:80], mode="sizes", command=command,
                 sizes=tuple(sorted(set(sizes))), repeat=repeats, warmup=0, counters=source_tool,
                 counters_note=note, created_at=now, status="complete")
