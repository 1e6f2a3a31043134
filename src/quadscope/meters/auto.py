"""The default meter (`--meter auto`): time every run, count the work when time cannot decide.

Contract: `METER` measures exactly as the time meter (`meters.timing`) does.
Its `counts_with` names the exact meter (`instructions`) the runner falls
back on after the timed plan when time alone left the class open: a bracket,
or a caveat such as the caches or the machine's load (`run.counting`). The
counting costs at most what the timed sweep cost; where it succeeds the sweep
is stored as an instruction-meter sweep and its verdict leads with the work.
`--meter time` opts out, `--meter instructions` counts every size whatever it
costs.
"""

from __future__ import annotations

from quadscope.meters import timing
from quadscope.meters.base import Meter

METER = Meter(
    "auto", metrics=("wall_s",), exact=False, measuring=timing.measuring,
    counts_with="instructions",
    describe="auto: time every run and, when time alone leaves the class open, count the "
             "work's instructions too, in at most the timed sweep's own time",
)
