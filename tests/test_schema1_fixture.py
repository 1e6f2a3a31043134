"""A store and an export written by quadscope 0.1.0 (schema 1) still load and fit the same.

`tests/fixtures/schema1/` holds what that release wrote (see `make_fixture.py`
there): a results database with the accuracy suite, an A/B sweep, an
accumulate sweep, failing runs, doctor probes and a profile; the JSON export
of the A/B sweep; and `golden-schema1.json`, the verdicts, fits and comparisons
that release computed from that database. Opening a copy upgrades it in place;
re-fitting it must give the same answer, number for number.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from quadscope.analyse.analysis import analyse
from quadscope.render import get_renderer
from quadscope.store import Store

FIXTURE = Path(__file__).parent / "fixtures" / "schema1"


def _same(got: Any, want: Any, where: str = "") -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict), where
        for k, v in want.items():
            assert k in got, f"{where}.{k} missing"
            _same(got[k], v, f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _same(g, w, f"{where}[{i}]")
    elif isinstance(want, float) and isinstance(got, int | float):
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {got} != {want}"
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


@pytest.fixture
def old_store(tmp_path: Path) -> Store:
    shutil.copy(FIXTURE / "store-schema1.db", tmp_path / "old.db")
    return Store(tmp_path / "old.db")


def test_schema1_store_refits_to_the_same_verdicts(old_store: Store) -> None:
    """Every sweep of the 0.1.0 store gives the fits and verdict that release gave."""
    golden = json.loads((FIXTURE / "golden-schema1.json").read_text())
    for sweep_id, want in golden.items():
        sweep = old_store.get_sweep(sweep_id)
        got = json.loads(get_renderer("json").render(analyse(sweep, old_store.runs(sweep.id))))
        for key in ("verdict", "fits", "vs_fits"):
            if key in want:
                _same(got[key], want[key], f"sweep {sweep_id}: {key}")
        if "comparison" in want:
            for metric, mc in want["comparison"]["metrics"].items():
                _same(got["comparison"]["metrics"][metric], mc, f"sweep {sweep_id}: {metric}")
