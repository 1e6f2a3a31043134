"""Human-readable values: seconds, bytes and counts, each in its natural scale.

Contract: pure formatting, used by every renderer so a value reads the same in
the terminal, HTML and PNG. `fmt_value(metric, v)` formats by the metric's unit
in the registry (quadscope.metrics); a name the registry does not know (a doctor
probe's own series) is read by its suffix: `_s` seconds, `_bytes` bytes, else a
count. `fmt_exit(code)` is a run's exit status, a signal by its name.
"""

from __future__ import annotations

import math
import signal
from collections.abc import Callable

from quadscope import metrics


def fmt_seconds(v: float) -> str:
    if v != v:
        return "nan"
    a = abs(v)
    if a < 1e-10:  # below any clock's resolution: a fitted zero, not a duration
        return "0 s"
    if a >= 3600:
        return f"{v / 3600:.3g} h"
    if a >= 60:
        return f"{v / 60:.3g} min"
    if a >= 1:
        return f"{v:.3g} s"
    if a >= 1e-3:
        return f"{v * 1e3:.3g} ms"
    if a >= 1e-6:
        return f"{v * 1e6:.3g} µs"
    return f"{v * 1e9:.3g} ns"


def fmt_bytes(v: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:.0f} B"


def fmt_count(v: float) -> str:
    a = abs(v)
    if a < 1e-6:  # counts are whole numbers; a fitted 5e-18 is zero
        return "0"
    if a >= 1e18:
        return f"{v:.3g}"
    shown = float(f"{a:.3g}")  # 999.7k shows as 1M, not "1e+03k"
    for unit, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if shown >= scale:
            return f"{v / scale:.3g}{unit}"
    if v == int(v):
        return f"{int(v)}"
    return f"{v:.3g}"


def fmt_exit(code: int) -> str:
    """A run's exit status as a person reads it: "3", or "killed by SIGABRT (signal 6)" for
    the -SIGNUM that `Measurement.exit_code` holds when a signal ended the run ("-6" was
    read as a status); a number this platform does not name is "killed by signal 200"."""
    if code >= 0:
        return str(code)
    try:
        name = signal.Signals(-code).name
    except ValueError:
        return f"killed by signal {-code}"
    return f"killed by {name} (signal {-code})"


def fmt_value(metric: str, v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    known = metrics.find(metric)
    if known is not None:
        unit = known.unit
    else:
        unit = "s" if metric.endswith("_s") else "bytes" if metric.endswith("_bytes") else "count"
    return _BY_UNIT[unit](v)


_BY_UNIT: dict[str, Callable[[float], str]] = {
    "s": fmt_seconds,
    "bytes": fmt_bytes,
    "count": fmt_count,
}
