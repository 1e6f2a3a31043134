"""What several sub-commands share: the store option, output files, printing an analysis.

Contract: the only place (with cli.py) that prints an Analysis or writes report
files; every format goes through the renderer registry.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from quadscope.analyse.analysis import Analysis
from quadscope.errors import QuadscopeError, UsageError
from quadscope.render import RENDERERS, get_renderer
from quadscope.store import Store, default_db_path


def add_store_option(p: Any) -> None:
    p.add_argument("--db", metavar="PATH", default=None,
                   help="the results database [$QUADSCOPE_DB or .quadscope/results.db]")


def open_store(args: argparse.Namespace) -> Store:
    return Store(Path(args.db) if getattr(args, "db", None) else default_db_path())


def add_output_options(p: Any) -> None:
    p.add_argument("--json", metavar="FILE", default=None, help="write the JSON report")
    p.add_argument("--csv", metavar="FILE", default=None, help="write one CSV row per run")
    p.add_argument("--html", metavar="FILE", default=None,
                   help="write a self-contained HTML report")
    p.add_argument("--png", metavar="DIR", default=None, help="write PNG plots into DIR")


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse an output path that cannot be written before a sweep spends time measuring."""
    for opt in ("json", "csv", "html", "png"):
        path = getattr(args, opt, None)
        if not path:
            continue
        target = Path(path) if opt != "png" else Path(path) / "x"
        parent = target.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--{opt} {path}: cannot create {parent}: "
                             f"{exc.strerror or exc}") from None
        if not os.access(parent, os.W_OK):
            raise UsageError(f"--{opt} {path}: {parent} is not writable")


def _write(path: str, data: str | bytes) -> None:
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            target.write_bytes(data)
        else:
            target.write_text(data)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def write_outputs(args: argparse.Namespace, analysis: Analysis) -> None:
    """Every file the options ask for; each format is a renderer plug-in."""
    for fmt in ("json", "csv", "html"):
        path = getattr(args, fmt, None)
        if not path:
            continue
        if fmt not in RENDERERS:
            raise UsageError(f"--{fmt} is not available in this build of quadscope")
        _write(path, get_renderer(fmt).render(analysis))
        print(f"quadscope: wrote {path}", file=sys.stderr)
    out_dir = getattr(args, "png", None)
    if out_dir:
        if "png" not in RENDERERS:
            raise UsageError("--png is not available in this build of quadscope")
        files = get_renderer("png").render(analysis)
        for name, data in files.items():
            _write(str(Path(out_dir) / name), data)
        print(f"quadscope: wrote {len(files)} PNG plot(s) to {out_dir}", file=sys.stderr)


def print_analysis(analysis: Analysis) -> None:
    color = sys.stdout.isatty()
    width = 120
    try:
        import shutil

        width = max(80, shutil.get_terminal_size((120, 24)).columns)
    except OSError:
        pass
    sys.stdout.write(get_renderer("terminal", color=color, width=width).render(analysis))
    sys.stdout.flush()


def load_extras(store: Store, sweep_id: int) -> dict[str, Any]:
    """Results attached to a stored sweep (profile, doctor) that reports show beside the fits."""
    extras: dict[str, Any] = {}
    profile = store.get_blob(sweep_id, "profile")
    if profile:
        extras["profile"] = profile
        if "culprits" in profile:
            extras["culprits"] = profile["culprits"]
    doctor = store.get_blob(sweep_id, "doctor")
    if doctor:
        # Reports draw one small plot per probe from its stored sweeps.
        probes = doctor.get("probes") if "probes" in doctor else [doctor]
        enriched = [with_series(store, p) for p in probes or [] if isinstance(p, dict)]
        extras["doctor"] = ({**doctor, "probes": enriched} if "probes" in doctor
                            else (enriched[0] if enriched else doctor))
    return extras


PROBE_METRIC = "wall_s"  # what the doctor's verdicts are mostly about


def with_series(store: Store, probe: Mapping[str, Any]) -> dict[str, Any]:
    """A doctor probe's result with `plot_series`: median wall_s per size of its sweeps."""
    details = probe.get("details") or {}
    sweeps = details.get("sweeps") if isinstance(details, Mapping) else None
    if not isinstance(sweeps, Mapping):
        return dict(probe)
    series = []
    for label, sweep_id in sweeps.items():
        try:
            runs = store.runs(int(sweep_id))
            word = "i" if store.get_sweep(int(sweep_id)).mode == "accumulate" else "n"
        except (QuadscopeError, ValueError, TypeError):
            continue  # a probe sweep deleted since: the table row still shows
        by_n: dict[int, list[float]] = {}
        for r in runs:
            if not r.warmup and r.measurement.ok:
                by_n.setdefault(r.size_n, []).append(float(getattr(r.measurement, PROBE_METRIC)))
        points = [[n, statistics.median(v)] for n, v in sorted(by_n.items())]
        if points:
            series.append({"label": str(label), "points": points, "x_label": word,
                           "y_label": f"median {PROBE_METRIC} (s)",
                           "name": f"median {PROBE_METRIC}"})
    return {**probe, "plot_series": series} if series else dict(probe)
