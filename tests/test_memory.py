"""Time verdicts the caches may account for: widened down to the memory's class, with a note."""

from __future__ import annotations

import numpy as np
from tests.conftest import measurement

from quadscope.analyse.analysis import fit_runs
from quadscope.analyse.memory import memory_bound
from quadscope.model import Run

SIZES = (16_000, 32_000, 64_000, 128_000, 256_000, 512_000, 1_000_000, 2_000_000, 4_000_000)
LLC = {"llc_bytes": str(32 << 20)}


def runs(time: float, bytes_per_n: float, k: float = 2.0) -> list[Run]:
    """Three runs per size: time ∝ n^k with 1% noise, peak RSS 1.5 MiB + bytes_per_n·n."""
    rng = np.random.default_rng(0)
    out = []
    for i, n in enumerate(np.repeat(SIZES, 3)):
        wall = time * (n / SIZES[-1]) ** k * (1 + 0.01 * rng.standard_normal())
        rss = (3 << 19) + bytes_per_n * n
        out.append(Run(sweep_id=1, seq=i, variant="A", size_n=int(n), repeat=i % 3,
                       warmup=False, started_at=0.0,
                       measurement=measurement(wall, max_rss_bytes=rss)))
    return out


def test_time_that_outgrows_memory_leaving_the_cache_is_bracketed_down_to_memorys_class() -> None:
    """n^1.8 time over a working set growing as n to 64 MiB (past a 32 MiB cache): "n … n²"."""
    rs = runs(2.6, 16, k=1.8)
    fits, _ = fit_runs(rs)
    assert fits["user_s"].cls == "n^2" and fits["max_rss_bytes"].cls == "n"
    widened, notes = memory_bound(fits, rs, LLC)
    user = widened["user_s"]
    assert not user.confident
    assert (user.at_least, user.at_most) == ("n", "n^2")
    assert user.decide_n is None and "last-level cache" in user.reason
    assert any(note.startswith("user_s grows as n^2") and "--meter instructions" in note
               for note in notes)
    assert widened["max_rss_bytes"] == fits["max_rss_bytes"]


def test_a_working_set_within_the_cache_leaves_the_verdict_alone() -> None:
    """The same n² time over a working set of 2 MiB (under a quarter of the cache): unchanged."""
    rs = runs(2.6, 0.5)
    fits, _ = fit_runs(rs)
    widened, notes = memory_bound(fits, rs, LLC)
    assert widened == fits and notes == []


def test_without_the_cache_size_or_past_n_squared_nothing_changes() -> None:
    """A sweep stored before llc_bytes was recorded, or time growing as n³: unchanged."""
    rs = runs(2.6, 16)
    fits, _ = fit_runs(rs)
    assert memory_bound(fits, rs, {}) == (fits, [])
    cubic = runs(2.6, 16, k=3.0)
    cubic_fits, _ = fit_runs(cubic)
    assert cubic_fits["wall_s"].cls == "n^3"
    assert memory_bound(cubic_fits, cubic, LLC)[0]["wall_s"] == cubic_fits["wall_s"]


def test_time_growing_as_memory_does_is_not_touched() -> None:
    """Linear time over a linear working set past the cache: nothing to explain."""
    rs = runs(2.6, 16, k=1.0)
    fits, _ = fit_runs(rs)
    assert fits["wall_s"].cls == "n"
    assert memory_bound(fits, rs, LLC) == (fits, [])
