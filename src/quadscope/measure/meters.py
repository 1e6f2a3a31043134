"""Hardware and software event counts for one child, from `perf stat`.

Contract: a `CounterBackend` wraps one child execution. When `gated` is true
the executor holds the child before exec (see the C launcher in `launcher`),
calls `attach(pid)`, which returns only once counting is live, releases the
child and starts the wall clock, reaps it, stops the clock and then calls
`Counting.stop()`, which maps each perf metric of the registry
(quadscope.metrics) to its count. Counts cover the child and every descendant
forked after the attach; an event the machine cannot count is None, never 0.
`NoCounters` counts nothing. Choosing a backend for this machine (which needs
an executor to try perf) is `detect`'s job.

How perf attaches: `perf stat -x, --no-big-num -e EVENTS -p PID -o FILE
--delay=-1 --control fd:CTL,ACK` opens the counters disabled (with inherit,
so children forked later are counted) on the gated child; we write `enable`
and wait for perf's `ack`, so perf's start-up (tens of ms) is over before the
child is released and is in neither wall_s nor the child's rusage. Checked on
perf 6.1 / Linux 6.18: a child touching 100 MiB under `sh -c` gives 27,691
perf page-faults against 27,919 rusage minor faults.

Overhead for /bin/true on the 2-core VM (same interleaved run as in
`launcher`): harness time per run ~2.2 ms with NoCounters and ~20 ms with perf
(perf's start-up, attach and exit, all outside wall_s). The child's wall_s is
0.92 ms with perf against 0.70 ms without: perf's start-up is excluded, but
live software counters (inherited across fork/exec) still cost the child
~0.2 ms per run; that is the price of counting, not of perf's start-up.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import tempfile
from collections.abc import Mapping
from typing import Protocol

from quadscope import metrics
from quadscope.errors import ToolMissingError

_PERF = metrics.by_source(metrics.PERF)
# The events perf is asked for (each metric's first name), in registry order.
EVENTS: tuple[str, ...] = tuple(m.events[0] for m in _PERF)
# perf's names (and the aliases it may print instead) -> the registry's metric names.
_METRIC_OF_EVENT: dict[str, str] = {e: m.name for m in _PERF for e in m.events}
_ATTACH_TIMEOUT_S = 10.0
_STOP_TIMEOUT_S = 10.0


def no_counts() -> dict[str, int | None]:
    """Every perf metric uncounted."""
    return {m.name: None for m in _PERF}


def missing_events(counts: Mapping[str, object]) -> tuple[str, ...]:
    """perf's names of the events a run did not count, in EVENTS order."""
    return tuple(m.events[0] for m in _PERF if counts.get(m.name) is None)


class Counting(Protocol):
    def stop(self) -> dict[str, int | None]: ...


class CounterBackend(Protocol):
    name: str  # what Sweep.counters records: "perf" or "rusage"
    gated: bool  # True: the child must wait before exec until attach() returns

    def attach(self, pid: int) -> Counting: ...


class _NoCounting:
    def stop(self) -> dict[str, int | None]:
        return no_counts()


class NoCounters:
    """Counts nothing: every perf metric is None, and the child is not held."""

    name = "rusage"
    gated = False

    def attach(self, pid: int) -> Counting:
        return _NoCounting()


def parse_perf_csv(text: str) -> dict[str, int | None]:
    """Counts by metric name from `perf stat -x,` output; `<not supported>`/`<not counted>`
    and events absent from the output are None."""
    values = no_counts()
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split(",")
        if len(cols) < 3:
            continue
        raw, event = cols[0].strip(), cols[2].strip()
        if "/" in event:  # hybrid or PMU-qualified: cpu_core/instructions/
            event = event.strip("/").split("/")[-1]
        name = _METRIC_OF_EVENT.get(event.split(":")[0])
        if name is None or raw.startswith("<"):
            continue
        n = int(float(raw)) if "." in raw else int(raw)
        # Hybrid CPUs report one line per core type: the total is their sum.
        values[name] = (values[name] or 0) + n
    return values


class _PerfCounting:
    """One running `perf stat -p`, already enabled when constructed."""

    def __init__(self, perf: str, events: tuple[str, ...], pid: int) -> None:
        fd, self._out = tempfile.mkstemp(prefix="quadscope-perf-", suffix=".csv")
        os.close(fd)
        # Lives until stop() or _kill(), so no `with`: perf writes its complaints here.
        self._err = tempfile.TemporaryFile(prefix="quadscope-perf-err-")  # noqa: SIM115
        ctl_r, self._ctl_w = os.pipe()
        ack_r, ack_w = os.pipe()
        argv = [
            perf, "stat", "-x,", "--no-big-num", "-e", ",".join(events),
            "-p", str(pid), "-o", self._out,
            "--delay=-1", f"--control=fd:{ctl_r},{ack_w}",
        ]  # fmt: skip
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._err,
                pass_fds=(ctl_r, ack_w),
            )
        finally:
            os.close(ctl_r)
            os.close(ack_w)
        try:
            os.write(self._ctl_w, b"enable\n")
            p = select.poll()
            p.register(ack_r, select.POLLIN)
            ack = os.read(ack_r, 16) if p.poll(int(_ATTACH_TIMEOUT_S * 1000)) else b""
        except OSError:
            ack = b""  # perf died before reading: EPIPE
        finally:
            os.close(ack_r)
        if not ack.startswith(b"ack"):
            self._proc.kill()
            self._proc.wait()
            why = self._perf_error()
            self._kill()
            raise ToolMissingError(f"perf could not count the child: {why}")

    def _perf_error(self) -> str:
        self._err.seek(0)
        lines = [ln.strip() for ln in self._err.read().decode(errors="replace").splitlines()]
        useful = [ln for ln in lines if ln and not ln.startswith("Events ")]
        return " ".join(useful[:3]) or "it stopped without saying why"

    def _kill(self) -> None:
        self._proc.kill()
        self._proc.wait()
        os.close(self._ctl_w)
        self._err.close()
        os.unlink(self._out)

    def stop(self) -> dict[str, int | None]:
        # perf -p normally ends by itself once the reaped child is gone; SIGINT
        # makes it write its totals now if it has not noticed yet.
        self._proc.send_signal(signal.SIGINT)
        try:
            self._proc.wait(_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._kill()
            raise ToolMissingError("perf did not stop within 10 s of SIGINT") from None
        os.close(self._ctl_w)
        self._err.close()
        try:
            with open(self._out) as f:
                return parse_perf_csv(f.read())
        finally:
            os.unlink(self._out)


class PerfCounters:
    """Counts EVENTS with `perf stat -p` attached to the held child (see module docstring)."""

    name = "perf"
    gated = True

    def __init__(self, perf: str = "perf", events: tuple[str, ...] = EVENTS) -> None:
        self.perf = perf
        self.events = events

    def attach(self, pid: int) -> Counting:
        return _PerfCounting(self.perf, self.events, pid)
