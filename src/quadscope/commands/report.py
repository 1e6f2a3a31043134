"""`quadscope report RUN`: the HTML page and PNG plots of a stored sweep, comparison or doctor run.

Contract: reads the sweep, its runs and its attached results (profile, doctor)
from the store, calls `analysis.analyse` once and hands the `Analysis` to the
HTML and PNG renderers; nothing is re-run. A doctor result's probes get, for
their small plots, the median `wall_s` per size of each of their stored
sweeps (`details["sweeps"]`), added as `plot_series`. With neither `--html`
nor `--png`, writes `quadscope-<id>.html` in the current directory.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from quadscope.analysis import analyse
from quadscope.errors import QuadscopeError, UsageError
from quadscope.model import Sweep
from quadscope.store import Store

PROBE_METRIC = "wall_s"  # what the doctor's verdicts are mostly about


def register(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help="write an HTML report and/or PNG plots of a stored sweep (nothing is re-run)",
        description="Reads RUN (an id, a name, or 'last') from the results database and writes "
        "a self-contained HTML page (--html) and/or PNG plots (--png DIR).",
    )
    p.add_argument("run", metavar="RUN", help="sweep id, name, or 'last'")
    p.add_argument("--html", metavar="FILE", default=None, help="write the HTML report to FILE")
    p.add_argument("--png", metavar="DIR", default=None, help="write PNG plots into DIR")
    p.add_argument("--db", metavar="PATH", default=None,
                   help="the results database [$QUADSCOPE_DB or .quadscope/results.db]")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from quadscope.render.html import HtmlRenderer
    from quadscope.render.png import PngRenderer
    from quadscope.store import default_db_path

    with Store(Path(args.db) if args.db else default_db_path()) as store:
        sweep = store.get_sweep(args.run)
        runs = store.runs(sweep.id)
        extras = load_report_extras(store, sweep)
    analysis = analyse(sweep, runs, extras=extras)
    html_path = args.html
    if not html_path and not args.png:
        html_path = f"quadscope-{sweep.id}.html"
    if html_path:
        _write(Path(html_path), HtmlRenderer().render(analysis).encode("utf-8"))
        print(f"quadscope: wrote {html_path}", file=sys.stderr)
    if args.png:
        files = PngRenderer().render(analysis)
        for name, data in files.items():
            _write(Path(args.png) / name, data)
        print(f"quadscope: wrote {len(files)} PNG plot(s) to {args.png}", file=sys.stderr)
    return 0


def load_report_extras(store: Store, sweep: Sweep) -> dict[str, Any]:
    """The profile and doctor results attached to `sweep`, with probe series for plotting."""
    extras: dict[str, Any] = {}
    profile = store.get_blob(sweep.id, "profile")
    if profile:
        extras["profile"] = profile
        if "culprits" in profile:
            extras["culprits"] = profile["culprits"]
    doctor = store.get_blob(sweep.id, "doctor")
    if doctor:
        probes = doctor.get("probes") if "probes" in doctor else [doctor]
        enriched = [_with_series(store, p) for p in probes if isinstance(p, Mapping)]
        extras["doctor"] = {**doctor, "probes": enriched} if "probes" in doctor else enriched[0]
    return extras


def _with_series(store: Store, probe: Mapping[str, Any]) -> dict[str, Any]:
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


def _write(target: Path, data: bytes) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
