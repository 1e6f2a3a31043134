"""Built-in C workloads of known complexity: the accuracy suite, the demo and the benchmarks.

Contract: `WORKLOADS` maps a name to a frozen `Workload` saying what the program
does, how its wall time truly grows (`expected`), which `wall_s` verdicts count
as correct (`acceptable`), a size range where the largest run takes about half a
second on a 2-core VM, and the argv to run it. `build(name)` compiles it with
`cbuild.compile_c` (at first use, cached per user) and returns the executable.
Nothing here runs a workload.

Every program reads n from argv[1] (accumulate-mode ones read a directory and
ignore the launch index), is deterministic, prints a checksum so the work
cannot be optimised away, and does its growing work in a `noinline` function,
named in `culprit`, so a sampling profiler can point at it. The C lives in
`c/*.c` beside this file; `c/prelude.h` is prepended to each.

Verdicts: a confident verdict outside `acceptable` is *confidently wrong*;
"inconclusive" is never wrong, only not (yet) right.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from quadscope.classes import INCONCLUSIVE, REGISTRY
from quadscope.measure.cbuild import compile_c

# -g and frame pointers so `quadscope profile` can walk stacks and name the
# culprit; -O2 so the measured code is what a release build would run.
CFLAGS: tuple[str, ...] = ("-O2", "-g", "-fno-omit-frame-pointer")


@dataclass(frozen=True, slots=True)
class Workload:
    """One C program of known complexity. Sizes are values of n for `{n}`."""

    name: str
    source_file: str  # under c/, without the prelude
    expected: str  # the true growth class of wall_s (and user_s unless `metrics` says otherwise)
    acceptable: frozenset[str]  # wall_s verdicts counted as correct
    sizes: tuple[int, ...]  # a sensible sweep: smallest to largest, largest ~0.5 s
    description: str
    template: tuple[str, ...] = ("{n}",)  # argv after the program; "{dir}" is a scratch dir
    culprit: str | None = None  # the C function doing the growing work
    mode: str = "sizes"  # "sizes", or "accumulate" for the launch-index workloads
    metrics: tuple[tuple[str, str], ...] = ()  # other metrics' true classes: (metric, class)
    suite: bool = True  # part of the accuracy suite (bench/accuracy.py)

    def __post_init__(self) -> None:
        for cls in (self.expected, *self.acceptable, *(c for _, c in self.metrics)):
            if cls not in REGISTRY:
                raise ValueError(f"{self.name}: {cls!r} is not a growth class")

    @property
    def source(self) -> str:
        """The full C source: the prelude, then the program."""
        return _read("prelude.h") + "\n" + _read(self.source_file)

    @property
    def needs_dir(self) -> bool:
        return any("{dir}" in a for a in self.template)

    def argv(self, path: Path | str, *, workdir: Path | str | None = None) -> tuple[str, ...]:
        """The command to sweep: the executable, then the template with `{dir}` filled in.

        `{n}` (or `{i}`) is left for the sweep to substitute; workloads that
        keep state between launches need `workdir`, a fresh empty directory
        made by the caller.
        """
        if self.needs_dir and workdir is None:
            raise ValueError(f"workload {self.name} needs a fresh directory (workdir=...)")
        return (str(path), *(a.replace("{dir}", str(workdir)) for a in self.template))

    def verdict_kind(self, verdict: str) -> str:
        """'correct', 'inconclusive' or 'wrong' for a wall_s verdict on this workload."""
        if verdict == INCONCLUSIVE:
            return "inconclusive"
        return "correct" if verdict in self.acceptable else "wrong"


def _read(filename: str) -> str:
    return resources.files(__package__).joinpath("c", filename).read_text()


def _geometric(lo: float, hi: float, count: int) -> tuple[int, ...]:
    """`count` sizes spaced evenly on a log scale from lo to hi, rounded, distinct."""
    ratio = (hi / lo) ** (1 / (count - 1))
    return tuple(sorted({round(lo * ratio**k) for k in range(count)}))


def _w(name: str, expected: str, sizes: tuple[int, ...], description: str, *,
       acceptable: tuple[str, ...] = (), **kw: object) -> Workload:
    return Workload(
        name=name,
        source_file=f"{name}.c",
        expected=expected,
        acceptable=frozenset(acceptable or (expected,)),
        sizes=sizes,
        description=description,
        **kw,  # type: ignore[arg-type]
    )


_ALL: tuple[Workload, ...] = (
    _w("constant", "1", _geometric(1e3, 1e9, 7),
       "1,000 hash steps whatever n is: only process start-up is measured",
       culprit="fixed_work"),
    _w("bsearch", "log n", _geometric(1e3, 1e15, 7),
       "10^6 binary searches over an implicit sorted array of n keys (no O(n) set-up)",
       culprit="search_all"),
    _w("sqrt", "sqrt n", _geometric(1e10, 1e16, 7),
       "counts the divisors of n by trial division up to √n",
       culprit="count_divisors"),
    _w("linear", "n", _geometric(1e6, 3e8, 7),
       "a serial hash chain of n steps",
       culprit="linear_sum"),
    _w("linear_offset", "n", _geometric(3e5, 1.5e7, 7),
       "~30 ms of fixed start-up work, then a small linear pass: the offset dominates",
       culprit="linear_pass"),
    _w("sort", "n log n", _geometric(3e4, 4e6, 7),
       "merge sort of n pseudo-random 64-bit keys",
       culprit="merge_sort"),
    _w("linear_quadratic", "n^2", _geometric(3e4, 4e6, 7),
       "a linear pass plus n²/10⁵ pairwise steps: looks linear until n ≈ 10⁵, then quadratic",
       culprit="pairwise_pass"),
    _w("insertion_sort", "n^2", _geometric(1e3, 3e4, 7),
       "insertion sort of a reversed array (its worst case)",
       culprit="insertion_sort"),
    _w("cubic", "n^3", _geometric(30, 700, 7),
       "a triple loop over n with a serial dependency",
       culprit="triple_loop"),
    _w("exponential", "c^n", tuple(range(12, 27, 2)),
       "naive recursive subset-sum over n weights: visits all 2^n subsets",
       culprit="count_subsets"),
    _w("memory", "n", _geometric(1e3, 1e5, 7),
       "touches n fresh 4 KiB pages",
       culprit="touch_pages",
       metrics=(("max_rss_bytes", "n"), ("minor_faults", "n"))),
    _w("syscalls", "n", _geometric(1e4, 8e5, 7),
       "n getppid() calls and n one-byte writes to /dev/null: kernel time grows as n",
       culprit="make_syscalls",
       metrics=(("sys_s", "n"),)),
    _w("first_fit", "n^2", _geometric(1e3, 3e4, 7),
       "a top-down 'highest free hole' allocator: each of n allocations scans all earlier ones",
       culprit="find_top_hole"),
    _w("fibonacci", "c^n", tuple(range(24, 39, 2)),
       "naive recursive Fibonacci: the work grows by φ ≈ 1.618 per unit of n, not by 2",
       culprit="fib"),
    _w("cache_step", "n", _geometric(4e3, 1e6, 7),
       "4n loads chasing a random cycle through n slots: the cost per load steps up once "
       "the array leaves the L2 cache (a change of regime, the class stays linear)",
       culprit="chase"),
    _w("big_offset", "n", _geometric(1e6, 1e8, 7),
       "~150 ms of fixed start-up work, then a linear pass that only reaches it at the top",
       culprit="linear_pass"),
    _w("short_linear", "n", _geometric(1e5, 5e6, 7),
       "a serial hash chain whose largest run takes ~20 ms: user_s is tick-coarse",
       culprit="short_chain", metrics=(("user_s", "n"),)),
    _w("hash_insert", "n", _geometric(3e4, 2e6, 7),
       "n inserts of random keys into an open-addressing hash table kept half empty",
       culprit="insert_all"),
    _w("heap_sort", "n log n", _geometric(3e4, 1e6, 7),
       "heap sort of n pseudo-random 64-bit keys",
       culprit="heap_sort"),
    _w("string_search", "n^2", _geometric(1e3, 3e4, 7),
       "naive search for an n/2-byte pattern in n bytes, its worst case: n·m = n²/2",
       culprit="naive_search"),
    _w("bubble_sort", "n^2", _geometric(1e3, 1.5e4, 7),
       "bubble sort of n pseudo-random keys",
       culprit="bubble_sort"),
    _w("first_fit_fixed", "n", _geometric(1e4, 1e7, 7),
       "the fix for first_fit: the allocator remembers its lowest region, O(1) per allocation",
       culprit="place_below_lowest", suite=False),
    _w("log_probe", "n", (), "each launch probes app.0.dat, app.1.dat, … in DIR for the first "
       "free name: launch i probes i names, so the total over K launches grows as K²",
       template=("{dir}", "{i}"), culprit="probe_free_name", mode="accumulate", suite=False,
       metrics=(("sys_s", "n"),)),
    _w("log_fixed", "1", (), "the fix for log_probe: names the file by time and pid, "
       "one O_CREAT|O_EXCL per launch",
       template=("{dir}", "{i}"), culprit="create_unique", mode="accumulate", suite=False),
)

WORKLOADS: dict[str, Workload] = {w.name: w for w in _ALL}

# The programs bench/accuracy.py sweeps: every workload measured over sizes of n.
SUITE: tuple[str, ...] = tuple(w.name for w in _ALL if w.suite)


def build(name: str) -> Path:
    """Compile workload `name` (cached per user) and return the executable's path."""
    workload = WORKLOADS[name]
    return compile_c(workload.source, name=f"workload-{name}", flags=CFLAGS)


__all__ = ["CFLAGS", "SUITE", "WORKLOADS", "Workload", "build"]
