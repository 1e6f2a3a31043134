"""What the benchmarks share: the machine's description, a scratch store, sweeping a workload.

Contract: nothing here prints. Every benchmark measures quadscope and its named
peer side by side in the same process run, on the same machine, and reports
medians and ratios only: the machine is a shared 2-core VM, so absolute
numbers from another run are not comparable.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from quadscope.analyse.analysis import Analysis, analyse
from quadscope.classes import INCONCLUSIVE
from quadscope.measure.clock import SystemClock
from quadscope.measure.counters import NoCounters
from quadscope.measure.host import host_info
from quadscope.measure.launcher import ProcessExecutor
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import SqliteStore, Store

REPO = Path(__file__).resolve().parent.parent


def machine() -> dict[str, str]:
    """nproc, kernel, CPU model and Python: the facts a reader needs to weigh the numbers."""
    info = host_info()
    return {
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": str(os.cpu_count() or 0),
        "kernel": platform.release(),
        "cpu": "?" if info.cpu is None else info.cpu,
        "python": platform.python_version(),
    }


@contextmanager
def scratch_store() -> Iterator[Store]:
    """A results database of its own, so benchmarks never touch the user's store.

    With QUADSCOPE_BENCH_KEEP_DB set to a path, the database is written there and kept,
    so the sweeps behind a bench's verdicts can be read again (`quadscope show --db`).
    """
    keep = os.environ.get("QUADSCOPE_BENCH_KEEP_DB")
    with tempfile.TemporaryDirectory(prefix="quadscope-bench-") as tmp:
        store = SqliteStore(Path(keep) if keep else Path(tmp) / "bench.db")
        try:
            yield store
        finally:
            store.close()


@dataclass(frozen=True, slots=True)
class Swept:
    analysis: Analysis
    elapsed_s: float  # harness wall time of run_sweep, start to end

    def verdict(self, metric: str = "wall_s", variant: str = "A") -> str:
        fit = self.analysis.fits.get(variant, {}).get(metric)
        return INCONCLUSIVE if fit is None else fit.cls


def sweep(spec: SweepSpec, store: Store) -> Swept:
    """Run one sweep with the real executor (rusage counters: perf would only add cost)."""
    executor = ProcessExecutor(NoCounters())
    t0 = time.monotonic()
    sw = run_sweep(spec, executor=executor, clock=SystemClock(), store=store,
                   counters="rusage", host=host_info())
    elapsed = time.monotonic() - t0
    return Swept(analyse(sw, store.runs(sw.id)), elapsed)


def medians_by_size(analysis: Analysis, metric: str = "wall_s",
                    variant: str = "A") -> tuple[list[int], list[float]]:
    by: dict[int, list[float]] = {}
    for r in analysis.measured(variant):
        v = r.value(metric)
        if v is not None:
            by.setdefault(r.size_n, []).append(v)
    sizes = sorted(by)
    return sizes, [statistics.median(by[n]) for n in sizes]


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ../shared/tools/busy beside the checkout (/work/main), or beside a worktree's parent.
BUSY = next((p / "shared" / "tools" / "busy" for p in REPO.parents
             if (p / "shared" / "tools" / "busy").exists()), REPO.parent / "shared" / "tools" / "busy")


@contextmanager
def busy_load(on: bool, seconds: int = 3600) -> Iterator[None]:
    """While the block runs, `../shared/tools/busy --cores 1 --memory 64` (a bounded competing
    load: one core spinning and a 64 MiB copy loop) when `on`; nothing otherwise."""
    if not on:
        yield
        return
    busy = subprocess.Popen([str(BUSY), "--cores", "1", "--memory", "64", "--seconds",
                             str(seconds)], start_new_session=True)
    time.sleep(2)
    if busy.poll() is not None:
        raise SystemExit(f"busy exited at once ({busy.returncode}): no load to measure under")
    try:
        yield
    finally:
        os.killpg(busy.pid, signal.SIGTERM)
        busy.wait(timeout=30)
