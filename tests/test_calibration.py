"""A fixed-seed slice of bench/calibration.py: simulated sweeps of known truth are never confidently wrong.

The benchmark runs a thousand sweeps per law; this runs six per law with the
same generator and the same scoring, so a change that makes quadscope
confidently wrong on a simple case fails here, not only in the benchmark.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from calibration import LAWS, one


@pytest.mark.parametrize("law", list(LAWS))
def test_simulated_sweeps_are_never_confidently_wrong(law: str) -> None:
    """Six sweeps per true law (noise 1-20%, outliers, drift, offsets): right class or right bracket."""
    # Indices cycle through the grid: CV = i % 3, outlier (i // 3) % 2, drift (i // 6) % 2,
    # offset (i // 12) % 3; these six reach every noise level, outliers, drift and offsets.
    outcomes = [one(law, index, seed=7) for index in (1, 5, 11, 14, 29, 35)]
    wrong = [o for o in outcomes if o.kind == "wrong"]
    assert not wrong, wrong
    assert all(o.kind in ("right", "bracket") for o in outcomes)
