"""The honest error of a function's sampled time at one size. Pure.

Contract: `samples_per_second(profile)` is a recording's sampling rate over
the cost it is scaled to; `sampled_sd(seconds, per_second)` returns, for each size's sampled
time of one function (its self or inclusive seconds, scaled from a recording's
samples), the standard error that time carries, for `analyse.fitting.fit_metric`'s
`sd`. Two independent parts, added in variance:

* sampling: a time of v seconds rests on v·p samples at p samples a second, a
  Poisson count, so its variance is v/p seconds² (as `attribute.excess_sd`); a
  size where the function was not seen has the error of one sample (an empty
  count says it was under about one sample, not that it was exactly 0);
* load: one recording per size is one run (or one shell loop of runs) of the
  program, and what else the machine does between recordings moves its whole
  time: `LOAD_CV` of it.

Why the second part is needed: fitted on its own scatter, a + b·n^k through
one value at each of four sizes has one degree of freedom to judge the noise
from, and a recording slowed 1.6× at the largest size is absorbed by k (that
point's leverage is near 1), leaving residuals of a percent: pair_count (n²)
read n³ with k in [2.76, 2.93]. Sampling error alone is no cure: with 3,000
samples at the largest size it is 2%, far below what load does.

`LOAD_CV` is the relative standard deviation of one run's CPU time between
repeats at the same size, measured by `bench/recording_spread.py` on the
profiler's own known-culprit program (profile.programs.QUADRATIC, 25 single
runs at each of n = 1k, 2k, 4k, 8k; eight sessions on this shared 2-core
machine, four at load average 2-8 from other work and four under
`busy --cores 1 --memory 64`): SD/median 0.03-0.82 over the 32 cells, median
0.25 (robust IQR/1.349 over the median: median 0.13); the slowest single run
was 1.1-4.6× its size's median. It agrees with the CPU times of BENCHMARKS §1's
CPython scripts, whose three runs at one size spread by 8-80% of their median
(max − min, about 1.7 standard deviations for three runs). The tail is heavier
than a normal's, so 0.25 is a floor, not a bound: a class settled through it
has beaten the neighbours by more than a typical slowdown of one recording.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from quadscope.profile.stacks import StackProfile

LOAD_CV = 0.25


def samples_per_second(profile: StackProfile) -> float:
    """Samples per second of the cost at a profile's size (0 when it has no samples)."""
    if profile.total_weight and profile.reference_s > 0:
        return profile.samples / profile.reference_s
    return 0.0


def sampled_sd(seconds: Sequence[float], per_second: Sequence[float],
               load_cv: float = LOAD_CV) -> tuple[float, ...]:
    """Each size's standard error (seconds) of a sampled time (see the module docstring).

    `per_second` is each size's samples per second of cost (0 where unknown: the
    load part alone)."""
    if len(per_second) != len(seconds):
        raise ValueError(f"{len(seconds)} times but {len(per_second)} sampling rates")
    return tuple(math.sqrt(_sampling_var(v, p) + (load_cv * v) ** 2)
                 for v, p in zip(seconds, per_second, strict=True))


def _sampling_var(v: float, p: float) -> float:
    """v/p seconds² for v·p samples at p a second, at least one sample's (1/p²)."""
    if p <= 0:
        return 0.0
    return max(v * p, 1.0) / (p * p)
