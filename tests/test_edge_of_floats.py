"""A base-c exponential fitted on the edge of what floats hold: the advice on what would
decide names no n (a meter instead), never a crash (the doctor's quick run once exited 70:
"class c^n cannot be fitted at these sizes")."""

from __future__ import annotations

import numpy as np

from quadscope.analyse.classfit import ClassFit, prepare
from quadscope.analyse.decide import METER, Extension, tie_n
from quadscope.classes import REGISTRY


def test_a_tie_with_an_exponential_that_cannot_be_refitted_names_the_meter() -> None:
    sizes = [10.0, 20.0, 40.0, 80.0, 160.0] * 3
    values = [1.0 + 0.01 * n for n in sizes]
    data = prepare("wall_s", sizes, values)
    exp = REGISTRY["c^n"].with_base(1e300)  # its largest fittable n is about 1: below 160
    assert exp.normalised(data.n, float(data.n[-1])) is None
    linear = REGISTRY["n"]
    fits = {"c^n": ClassFit(exp, 1.0, 1e-300, 0.0, 1.0),
            "n": ClassFit(linear, 1.0, 0.01, 0.0, 1.0)}
    boot = np.tile(data.y, (50, 1))
    advice = tie_n(Extension.of(data, 1.0), fits, ["c^n", "n"], boot, REGISTRY, 2.0)
    assert advice.n is None and advice.meter == METER
