"""Following "n = X would decide": does it decide, and decide right?

Simulated fixed sweeps of known truth (`bench/calibration.py`'s laws: single
laws, changes of regime and two growth terms; noise CV 1% / 5% / 20%, an
outlier in half, drift in half, start-up offset 0 / ⅓ / ⅘ of the smallest
run) are fitted as a stored sweep would be. Each one left unsettled is
followed as a user would follow its advice:

* a size (`Fit.decide_n`): the sweep is extended with the same design (the
  same repeats, sizes doubling from the largest measured up to the size
  named, which is measured last) and the extended sweep is fitted again;
* a meter (the reason names `--meter`) or no size: not followed, counted apart.

Each followed sweep is scored: decided (a settled class), decided right (the
settled class is the truth, `calibration._truths` at the new top size),
confidently wrong (a settled class that is not the truth, or a bracket that
excludes it), and the cost of following, the extension's summed runs over the
sweep's own. Goal: following decides at least 4 times in 5, and is never
confidently wrong more often than before the prediction changed.

usage: .venv/bin/python bench/decide_n.py [--per-law 36] [--jobs 2] [--laws 'n;n^2']
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration import (
    _BROKEN_SIZES,
    _TWO_SIZES,
    BROKEN,
    LAWS,
    REPEAT,
    TWO,
    _scenario,
    _score,
    _truth,
    _truths,
)

from quadscope.analyse.fitting import fit_metric
from quadscope.model import Fit
from quadscope.workloads.synthetic import Scenario, simulate

# Laws whose sweeps the advice is about (the exponential's sizes are its own: n is small).
FOLLOWED = [law for law in LAWS if law != "exp"] + [*BROKEN, *TWO]
# Sizes doubling from the largest measured to the one named: at most this many new sizes
# (a size beyond 2^40 times the top is not followed, it is counted as absurd).
MAX_NEW_SIZES = 40


@dataclass(frozen=True, slots=True)
class Followed:
    law: str
    cv: float
    advice: str  # settled | size | meter | none
    decide_n: int | None
    top_n: int
    kind: str  # after following: right | bracket | bare | wrong ("" when not followed)
    cost_ratio: float  # the extension's runs summed, over the sweep's own (0 when not followed)
    before: str  # the verdict's score before following
    settled: bool = False  # following settled a class
    checks: str = ""  # the checks whose doubts left it unsettled, before following
    after_checks: str = ""  # those that still left it unsettled after following


def extension(top_n: int, decide_n: int) -> list[int]:
    """Sizes doubling from `top_n` up to `decide_n`, which is the last (the same design)."""
    out: list[int] = []
    n = 2 * top_n
    while n < decide_n and len(out) < MAX_NEW_SIZES:
        out.append(n)
        n *= 2
    return [*out, decide_n]


def _advice(fit: Fit) -> str:
    if fit.confident:
        return "settled"
    if fit.decide_n:
        return "size"
    return "meter" if "--meter" in fit.reason else "none"


def one(law: str, index: int, seed: int) -> Followed:
    sizes = _BROKEN_SIZES if law in BROKEN else _TWO_SIZES if law in TWO else LAWS[law][1]
    rng = np.random.default_rng([seed, index, FOLLOWED.index(law), 7])
    scenario = _scenario(index)
    truth, truth_cls = _truth(law, sizes, scenario.offset_share)
    ns, vs = simulate(truth, scenario, sizes, REPEAT, rng)
    fit = fit_metric("wall_s", ns, vs, seed=index)
    top = int(max(sizes))
    before = _score(_truths(law, truth, truth_cls, top), fit.cls, fit.at_least, fit.at_most)
    advice = _advice(fit)
    checks = ",".join(d.check for d in fit.doubts)
    if advice != "size" or fit.decide_n is None or fit.decide_n <= top:
        return Followed(law, scenario.cv, advice, fit.decide_n, top, "", 0.0, before,
                        checks=checks)
    new = extension(top, fit.decide_n)
    if fit.decide_n > top * 2.0**MAX_NEW_SIZES:
        return Followed(law, scenario.cv, "absurd", fit.decide_n, top, "", float("inf"), before,
                        checks=checks)
    # The extension's runs: the same noise, drift going on, no new outlier.
    more = Scenario(cv=scenario.cv, drift=0.0, offset_share=scenario.offset_share)
    n2, v2 = simulate(truth, more, new, REPEAT, rng)
    if scenario.drift:  # the drift goes on over the run order as it went
        last = max(len(vs) - 1, 1)
        v2 = [v * (1 + scenario.drift * (len(vs) + j) / last) for j, v in enumerate(v2)]
    after = fit_metric("wall_s", [*ns, *n2], [*vs, *v2], seed=index)
    kind = _score(_truths(law, truth, truth_cls, max(new)), after.cls, after.at_least,
                  after.at_most)
    return Followed(law, scenario.cv, advice, fit.decide_n, top, kind,
                    float(sum(v2) / sum(vs)), before, after.confident, checks,
                    "" if after.confident else ",".join(d.check for d in after.doubts))


def _batch(args: tuple[str, Sequence[int], int]) -> list[Followed]:
    law, indices, seed = args
    return [one(law, i, seed) for i in indices]


def run(per_law: int, jobs: int, seed: int, laws: Sequence[str]) -> list[Followed]:
    chunks = []
    for law in laws:
        idx = list(range(per_law))
        step = max(1, per_law // (2 * max(jobs, 1)))
        chunks += [(law, idx[i:i + step], seed) for i in range(0, per_law, step)]
    if jobs <= 1:
        return [o for c in chunks for o in _batch(c)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return [o for part in pool.map(_batch, chunks) for o in part]


def _pct(k: int, n: int) -> str:
    return f"{k} of {n} ({k / max(n, 1):.0%})"


def markdown(out: Sequence[Followed], elapsed_s: float) -> str:
    followed = [o for o in out if o.kind]
    decided = [o for o in followed if o.settled]
    settled_right = [o for o in followed if o.kind == "right"]
    wrong = [o for o in followed if o.kind == "wrong"]
    lines = [f"{len(out)} simulated fixed sweeps ({REPEAT} repeats, CV 1% / 5% / 20%, outlier, "
             f"drift, offsets) in {elapsed_s:.0f} s; {len(out) - sum(o.advice == 'settled' for o in out)} "
             "left unsettled.", "",
             "| true law | unsettled | named a size | named the meter / nothing | followed: decided "
             "| decided right | confidently wrong | median cost of following |",
             "|---|---|---|---|---|---|---|---|"]
    for law in dict.fromkeys(o.law for o in out):
        mine = [o for o in out if o.law == law and o.advice != "settled"]
        f = [o for o in mine if o.kind]
        c = Counter(o.kind for o in f)
        cost = f"{np.median([o.cost_ratio for o in f]):.1f}×" if f else "—"
        lines.append(f"| {law} | {len(mine)} | {sum(o.advice in ('size', 'absurd') for o in mine)} | "
                     f"{sum(o.advice in ('meter', 'none') for o in mine)} | "
                     f"{sum(o.settled for o in f)} of {len(f)} | {c['right']} | **{c['wrong']}** | "
                     f"{cost} |")
    absurd = [o for o in out if o.advice == "absurd"]
    lines += ["", "| followed, still unsettled: the checks after | sweeps |", "|---|---|"]
    for check, n in Counter(o.after_checks for o in followed if not o.settled).most_common(12):
        lines.append(f"| {check or '(none)'} | {n} |")
    lines += ["", "| checks that left it unsettled | followed | decided |", "|---|---|---|"]
    for check, n in Counter(o.checks for o in followed).most_common(12):
        done = sum(o.settled for o in followed if o.checks == check)
        lines.append(f"| {check} | {n} | {done} |")
    lines += ["", f"Following the size named decides: **{_pct(len(decided), len(followed))}** "
                  f"(goal ≥ 80%); decides right: {_pct(len(settled_right), len(followed))}; "
                  f"confidently wrong after following: **{_pct(len(wrong), len(followed))}**; "
                  f"a size beyond 2^{MAX_NEW_SIZES}× the top: {len(absurd)}.",
              "Sizes named, as multiples of the top size: median "
              + (f"{np.median([o.decide_n / o.top_n for o in out if o.decide_n]):.0f}×, largest "
                 f"{max(o.decide_n / o.top_n for o in out if o.decide_n):.3g}×."
                 if any(o.decide_n for o in out) else "none.")]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--per-law", type=int, default=36)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--laws", default="", help="only these true laws, separated by ;")
    args = p.parse_args(argv)
    laws = [law.strip() for law in args.laws.split(";") if law.strip()] or FOLLOWED
    t0 = time.monotonic()
    out = run(args.per_law, args.jobs, args.seed, laws)
    print("## Following the deciding size\n")
    print(markdown(out, time.monotonic() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
