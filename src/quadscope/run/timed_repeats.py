"""An exact sweep's time answer: timed repeats at the counted sizes once the counts are done.

Contract: `TimedRepeats(inner, repeats=, share=, seed=)` hands out `inner`'s
batches (an exact sweep's `CountPlan`, `run.counting.exact_plan`) until it is
done, then one batch: up to `repeats` more timed runs at each size `inner`
counted (repeat 1..R; the counted job's own timed run is repeat 0), in an
order shuffled by `seed`, each priced at that size's timed run, the whole
batch at most `share` of what the sweep has spent so far and within what is
left of the budget: as many repeats at every size as fit, else one at the
cheapest sizes (none at all below MIN_SIZES of them, nor where `decided`,
when given, says the runs so far already settle the time's class). The
runner gives no `decided`: asking `run.counting.open_reason` (four metrics
fitted, each with its forecast) took 1-3 s of Python on the 2-core VM, more
than the repeats it would have saved, which cost at most `share` of the sweep. `timed(batch)` says
whether a batch is that one: the runner sends it to the exact meter's timed
executor (`measure.exact.timed_part`), so these runs are never counted: an
exact count repeats itself, a time does not.

Why: one timed run per size over an exact sweep's four sizes (a span of 8)
left the time's k interval as wide as the whole scale ("wall time grows as
1 … n³ — not exponential (k = 0.00 [0.00, 4.00])" for a 1 ms program whose
four counts took 0.15 s), a hedge where deciding costs a few milliseconds.
The time runs come after the counts, so the work's verdict is never later
for them, and their share keeps them a fraction of what counting cost.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from quadscope.model import Run
from quadscope.run.plan import Batch, Plan, PlannedRun, Scheduled

REPEATS = 4  # timed runs added at each counted size: five in all with the counted job's
SHARE = 0.5  # of what the sweep spent before them, at most
MIN_SIZES = 3  # fewer sizes than this fit no class: no repeats


class TimedRepeats:
    """`inner`'s batches, then the timed repeats (module docstring)."""

    def __init__(self, inner: Plan, *, metric: str, timeout_s: float | None,
                 repeats: int = REPEATS, share: float = SHARE, seed: int | None = None,
                 decided: Callable[[Sequence[Run]], bool] | None = None) -> None:
        self.inner = inner
        self.decided = decided  # whether the runs so far already settle the time's class
        self.metric = metric
        self.timeout_s = timeout_s
        self.repeats = repeats
        self.share = share
        self.seed = seed
        self._first_s: float | None = None  # the budget left when the plan was first asked
        self._done = False

    @property
    def total_runs(self) -> int | None:
        return self.inner.total_runs

    @staticmethod
    def timed(batch: Batch) -> bool:
        """Whether `batch` is the timed repeats (repeat ≥ 1: never counted)."""
        return bool(batch) and all(s.run.repeat >= 1 for s in batch)

    def next_batch(self, history: Sequence[Run], remaining_s: float | None) -> Batch | None:
        if self._first_s is None:
            self._first_s = remaining_s
        if self._done:
            return None
        batch = self.inner.next_batch(history, remaining_s)
        if batch is not None:
            return batch
        self._done = True
        return self._repeats(history, remaining_s) or None

    def _repeats(self, history: Sequence[Run], remaining_s: float | None) -> Batch:
        counted = {(r.variant, r.size_n): r.measurement.wall_s for r in history
                   if r.measurement.ok and r.value(self.metric) is not None}
        if len({n for _, n in counted}) < MIN_SIZES or (
                self.decided is not None and self.decided(history)):
            return ()
        spent = (None if self._first_s is None or remaining_s is None
                 else max(self._first_s - remaining_s, 0.0))
        allowed = [x for x in (remaining_s, None if spent is None else self.share * spent)
                   if x is not None]
        limit = min(allowed) if allowed else None
        keys = sorted(counted, key=lambda k: (counted[k], k))
        once = sum(counted[k] for k in keys)
        repeats = self.repeats if limit is None or once <= 0 else min(self.repeats,
                                                                       int(limit // once))
        while not repeats and keys and limit is not None \
                and sum(counted[k] for k in keys) > limit:
            keys.pop()  # not one more run at every size: the dearest sizes dropped first
        repeats = max(repeats, 1)
        if len({n for _, n in keys}) < MIN_SIZES:
            return ()
        have = {(r.variant, r.size_n, r.repeat) for r in history}  # a resumed sweep's
        runs = [PlannedRun(v, n, r) for v, n in keys for r in range(1, repeats + 1)
                if (v, n, r) not in have]
        random.Random(self.seed).shuffle(runs)
        timeout = [t for t in (self.timeout_s, remaining_s) if t is not None]
        return tuple(Scheduled(run, min(timeout) if timeout else None) for run in runs)
