"""CI gates on scaling: fail the build when a metric grows faster than allowed.

Contract: `--fail-above CLASS` (the worst confident metric of A) or
`--fail-above METRIC=CLASS` (repeatable) compares fitted classes in the order
of the class registry (`quadscope.classes`); a violation prints one sentence per metric and returns
exit code GATE_EXIT. An inconclusive fit never passes a gate silently: it is
reported, and fails only with `--strict-gate`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from quadscope.analyse.analysis import Analysis
from quadscope.classes import NAMES, REGISTRY
from quadscope.errors import UsageError
from quadscope.model import METRICS

GATE_EXIT = 8


def add_gate_option(p: Any) -> None:
    p.add_argument("--fail-above", action="append", default=[], metavar="[METRIC=]CLASS",
                   help="exit 8 when a metric grows faster than CLASS, e.g. 'n' or "
                        "'wall_s=n log n' (repeatable)")
    p.add_argument("--strict-gate", action="store_true",
                   help="an inconclusive fit fails a --fail-above gate too")


def parse_gates(items: list[str]) -> list[tuple[str | None, str]]:
    gates: list[tuple[str | None, str]] = []
    for item in items:
        metric, _, cls = item.rpartition("=")
        cls = cls.strip()
        if cls not in REGISTRY:
            raise UsageError(f"--fail-above {item!r}: {cls!r} is not a class; use one of "
                             + ", ".join(NAMES))
        if metric and metric not in METRICS:
            raise UsageError(f"--fail-above {item!r}: {metric!r} is not a metric; use one of "
                             + ", ".join(METRICS))
        gates.append((metric or None, cls))
    return gates


def check_gates(args: argparse.Namespace, analysis: Analysis) -> int:
    gates = parse_gates(getattr(args, "fail_above", []) or [])
    if not gates:
        return 0
    fits = analysis.fits.get("A", {})
    failed = False
    for metric, limit in gates:
        chosen = fits if metric is None else {metric: fits[metric]} if metric in fits else {}
        targets = list(chosen.values())
        for fit in targets:
            if not fit.confident:
                print(f"quadscope: gate {fit.metric} <= {limit}: inconclusive ({fit.reason})",
                      file=sys.stderr)
                failed = failed or bool(getattr(args, "strict_gate", False))
            elif REGISTRY.index(fit.cls) > REGISTRY.index(limit):
                print(f"quadscope: gate failed: {fit.metric} grows as {fit.cls}, "
                      f"faster than the allowed {limit}", file=sys.stderr)
                failed = True
    return GATE_EXIT if failed else 0
