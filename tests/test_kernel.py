"""A settled time that outgrows user time while the kernel's share rises is widened to what
user time supports, with a doubt naming the count; never with the work counted."""

from __future__ import annotations

from quadscope.analyse.kernel import kernel_bound
from quadscope.model import Fit, Measurement, Run

SIZES = (10000, 20000, 40000, 80000, 160000)


def _fit(metric: str, cls: str, *, lo: str = "", hi: str = "") -> Fit:
    confident = not lo
    return Fit(metric=metric, cls=cls if confident else "inconclusive", exponent=2.5,
               exponent_ci=(2.2, 2.9), coefficients={"a": 0.0, "b": 1.0}, r2=0.99,
               candidates=(), n_points=15, best=cls, at_least=lo or cls, at_most=hi or cls)


def _runs(shares: tuple[float, ...]) -> list[Run]:
    out = []
    for n, share in zip(SIZES, shares, strict=True):
        user = (n / 10000) ** 2 * 1e-3
        sys = user * share / (1 - share)
        m = Measurement(wall_s=user + sys, user_s=user, sys_s=sys, exit_code=0)
        out.append(Run(sweep_id=1, seq=len(out), variant="A", size_n=n, repeat=0,
                       warmup=False, started_at=0.0, measurement=m))
    return out


RISING = (0.0, 0.02, 0.05, 0.2, 0.35)
FITS = {"cpu_s": _fit("cpu_s", "n^3"), "wall_s": _fit("wall_s", "n^3"),
        "user_s": _fit("user_s", "n^2", lo="n^2", hi="n^3")}


def test_time_the_kernel_may_carry_is_widened_to_user_times_floor() -> None:
    out, notes = kernel_bound(FITS, _runs(RISING))
    for metric in ("cpu_s", "wall_s"):
        fit = out[metric]
        assert not fit.confident and (fit.at_least, fit.at_most) == ("n^2", "n^3")
        assert fit.doubts[-1].check == "kernel" and fit.doubts[-1].meter == "instructions"
    assert notes[1].startswith("cpu_s: the kernel's share of the CPU time rose from 0% at "
                               "n = 10000 to 35% at n = 160000")
    assert "user time alone supports n²" in notes[0]


def test_a_kernel_share_that_stays_small_changes_nothing() -> None:
    out, notes = kernel_bound(FITS, _runs((0.0, 0.02, 0.05, 0.1, 0.2)))
    assert out == FITS and notes == []


def test_with_the_work_counted_the_time_is_left_alone() -> None:
    out, notes = kernel_bound(FITS, _runs(RISING), work="instructions")
    assert out == FITS and notes == []


def test_user_time_supporting_the_class_changes_nothing() -> None:
    fits = {**FITS, "user_s": _fit("user_s", "n^3")}
    out, notes = kernel_bound(fits, _runs(RISING))
    assert out == fits and notes == []
