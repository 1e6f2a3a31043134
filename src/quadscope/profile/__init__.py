"""Sampling and attribution (issue 3): which function makes it grow, kernel included.

Data flows one way: sampler (perf / py-spy / fake) -> `StackProfile` per size
-> folded files -> `attribute` (pure) -> `Attribution` -> stored blob
"profile" and the differential flame graph. See `driver.profile_sweep`.
"""

from quadscope.profile.attribute import attribute
from quadscope.profile.driver import choose_sampler, choose_sizes, profile_sweep
from quadscope.profile.perf import PerfSampler, detect_perf
from quadscope.profile.records import Attribution, Culprit
from quadscope.profile.sampler import FakeSampler, Overhead, Sampler

__all__ = [
    "Attribution",
    "Culprit",
    "FakeSampler",
    "Overhead",
    "PerfSampler",
    "Sampler",
    "attribute",
    "choose_sampler",
    "choose_sizes",
    "detect_perf",
    "profile_sweep",
]
