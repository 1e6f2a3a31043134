"""The verdict as an ordered list of small checks, folded into a class, a bracket and a reason.

Contract: pure; no I/O. `Evidence` is a frozen record of the statistics
`quadscope.analyse.evidence.gather` computed for one metric (the chosen and best
classes, k's interval, the leave-one-out refits, the rank test, the hidden
and negligible growth, the local slopes, the second term). Each check of
`CHECKS` is a pure function of it returning zero or more `Doubt` records
(`quadscope.model.Doubt`: which check, the bracket ends it allows, the size
that would decide, the numbers behind it), as pyinstrument's processors are
pure transforms applied in a fixed order. `fold(evidence, doubts)` turns the
doubts into a `Verdict` (class, bracket, deciding size, reason); every
sentence comes from `quadscope.analyse.text`.

The fold's precedence (what fitting has always done, now in one place):

* Any doubt unsettles the class, and so does a fit asked not to settle one
  (a regime with too few sizes above its change: `fitting._split` says why).
* The reason and deciding size are those of the first doubt of the
  selection checks (tie, rising, hidden, leave_one_out, short_span,
  exponent); a negligible growth replaces both; the local slopes' and a
  second term's sentences are added after it, and their sizes raise the
  deciding size. A doubt that names a meter and no size (no affordable n
  decides it) leaves the verdict no deciding size; so does one whose work was
  already counted (`counted_doubts`: in a sweep that counted the work, a time's
  doubt advises no meter and its sentence points to the work's verdict).
* The bracket of a verdict where nothing rises, or too little to count,
  runs from "1" to the fastest growth a doubt names (hidden, leave-one-out,
  negligible). Otherwise it is the classes the data support (within
  SELECT_DELTA, or whose exponent k's interval holds; a significant rise
  drops "1"), widened by the ends of the exponent, slopes and second-term
  doubts, and raised to the class beyond every power when k sits at the top
  of its search and the runs rise.

Coherence with k (issue 25): a verdict never contradicts the exponent
interval printed beside it. k is the exponent of a free power law a + b·n^k,
offset included, so a class is judged on its *effective* exponent
(`Evidence.exponents`, `evidence.exponents`): the k that same estimator finds
on the class's own fitted curve at these sizes. It is f's exponent for a
power (a + b·n² reads 2 whatever a is) and between the neighbouring powers
for a log factor (n log n reads about 1.1–1.2 over a few decades); comparing
k with f's nominal exponent instead would wrongly exclude n log n at k = 1.15,
or wrongly keep n³ at k = 2.71 "because of the offset" (the offset is in k).
With [k_lo, k_hi] k's 95% interval and ± `COHERENCE_TOL` (half a printed digit):

* a settled class's effective exponent lies in [k_lo, k_hi]; otherwise the
  "exponent" check unsettles it (`evidence.gather`), and the bracket is the
  classes around k;
* a bracket's ends lie within the classes that enclose k's interval (the
  fastest at or below k_lo, the slowest at or above k_hi: "n² … n³" for
  k = 2.71 ± 0.09, the exponent between them) or within EXPONENT_SLACK of it,
  the slack `evidence.k_supported` has always given a class k's interval holds
  (a k of 1.36 ± 0.11 over a cost per element that steps up ×4 keeps n, the
  class for large n, in "n … n²"); never a class beyond (`k_ends`,
  `_coherent`: "√n … n²" beside k = 1.96 [1.92, 1.99] becomes "n log n … n²").
  A bracket's ends are looser than a settled class's because a bracket says
  the growth lies between them, not that it is either. A bracket the doubts
  built wholly outside those ends becomes the ends themselves. Where every
  growing class that fits as well as the best on every size
  (`Evidence.leading`) lies beyond them, the two lenses disagree (k = 1.6 ±
  0.15 while n and n log n tie): no bracket is given, and the reason says why.

Two verdicts are built after the fold and keep their own bounds: the cache
caveat (`analyse.memory`), which widens a time verdict below k only by the
growth a cache transition explains in the data, and the bracket just above a
change of regime (`fitting._split`: its bracket is not cut, and
`_reach_back` widens it), whose k comes from a few sizes that still carry the
cost below the change (a negative offset, which a ≥ 0 cannot follow, so k
overstates the growth: calibration's "×4 per element" law read "n log n … n²"
for a linear law when cut). A settled class there still lies in k's interval.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from quadscope.analyse import text
from quadscope.analyse.stats import nice_n
from quadscope.classes import INCONCLUSIVE, Registry
from quadscope.model import Doubt, DoubtValue

# A confident verdict must also be the verdict of this share of bootstrap replicates.
MIN_SUPPORT = 0.8
# A bracket drops the constant only at this stronger significance: a rank test at
# evidence.TREND_P would wrongly exclude a true constant from 1% of brackets.
BRACKET_TREND_P = 0.001
# Nor where the free power law's k itself reads no growth (below this, "0.0" at one decimal):
# the constant under busy in adaptive mode, whose runs rose with the machine's drift (n grows
# with time), read "log n … n³" beside k = 0.01 [0.00, 4.00]; a bracket never excludes the
# class its own k reads.
FLAT_K = 0.05


@dataclass(frozen=True, slots=True)
class Tie:
    """Two classes the runs cannot tell apart: the numbers `text.tie` words, and where they part."""

    first: str
    second: str
    lo_n: float
    hi_n: float
    decide_n: int | None
    growing_share: float | None  # the growing part's share at n_max when start-up dominates
    meter: str = ""  # a meter that decides when no affordable n does ("" for none)

    def numbers(self) -> dict[str, DoubtValue]:
        return {"first": self.first, "second": self.second, "lo_n": self.lo_n, "hi_n": self.hi_n,
                "growing_share": self.growing_share}


@dataclass(frozen=True, slots=True)
class Hidden:
    """A growth term the runs' spread could hide: its share of the cost, where it would show."""

    cls: str
    share: float
    decide_n: int | None
    meter: str = ""  # a meter that decides when no affordable n does ("" for none)


@dataclass(frozen=True, slots=True)
class Slopes:
    """Local slopes the judged class cannot follow (`quadscope.analyse.slopes.Swing`)."""

    judged: str
    at_least: str
    low: float
    high: float
    n_low: tuple[float, float]
    n_high: tuple[float, float]
    decide_n: int


@dataclass(frozen=True, slots=True)
class Evidence:
    """What fitting measured about one metric (`evidence.gather`): all that the checks read.

    `other` is the runner-up when the selection is a tie ("" otherwise) and
    `tie` its numbers; `leading` the classes within SELECT_DELTA with the
    runner-up; `shaky` what leaving a size out chooses instead of `chosen`.
    `trend` is the rank test's (τ, p) where the runs rise (p None: k's
    interval, not a test, showed it); `rising_tie` the constant against the
    best growing class. `hidden` is the walk of hideable growth (computed
    where a constant is chosen or the growth is negligible), `negligible`
    the (upper share, n) of a growth too small to tell from drift.
    """

    metric: str
    registry: Registry
    settle: bool
    chosen: str
    best: str
    lo_n: float
    hi_n: float
    k: float
    k_ci: tuple[float, float]
    k_at_top: bool  # k sits at the top of the power law's search
    leading: tuple[str, ...]
    loo_leading: tuple[str, ...]
    k_supported: tuple[str, ...] = ()  # growing classes whose exponent k's interval holds
    exponents: tuple[tuple[str, float], ...] = ()  # each class's effective exponent (see above)
    cut: bool = True  # cut the bracket to k's interval (not within a regime split off)
    other: str = ""
    tie_by: str = ""  # rival | leave_one_out | bootstrap
    tie: Tie | None = None
    shaky: tuple[str, ...] = ()
    loo_tie: Tie | None = None
    trend: tuple[float, float | None] | None = None
    rising_tie: Tie | None = None
    hidden: tuple[Hidden, ...] = ()
    straddle: tuple[str, str] | None = None  # set when chosen's exponent misses k's interval
    # What would decide the straddle (`decide.exponent_n`): (size, meter); None: ten times the top.
    straddle_advice: tuple[int | None, str] | None = None
    grower: str = ""
    negligible: tuple[float, int | None] | None = None
    slopes: Slopes | None = None
    second_term: Doubt | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    """The fold's outcome: what the Fit reports."""

    cls: str
    at_least: str
    at_most: str
    decide_n: int | None
    reason: str
    doubts: tuple[Doubt, ...]


Check = Callable[[Evidence], tuple[Doubt, ...]]


def tie(ev: Evidence) -> tuple[Doubt, ...]:
    """Another growing class within SELECT_DELTA, a shaky bootstrap or leave-one-out: a tie."""
    if not ev.other or ev.tie is None:
        return ()
    return (Doubt("tie", "", "", ev.tie.decide_n, ev.tie.meter,
                  numbers={**ev.tie.numbers(), "chosen": ev.chosen, "other": ev.other,
                           "by": ev.tie_by}),)


def rising(ev: Evidence) -> tuple[Doubt, ...]:
    """A constant chosen, yet the runs rise with n (a rank test, or k's interval and the cost)."""
    if ev.chosen != "1" or ev.trend is None or ev.rising_tie is None:
        return ()
    tau, p = ev.trend
    return (Doubt("rising", "", "", ev.rising_tie.decide_n, ev.rising_tie.meter,
                  numbers={**ev.rising_tie.numbers(), "tau": tau, "p": p, "k": ev.k,
                           "k_lo": ev.k_ci[0], "k_hi": ev.k_ci[1]}),)


def hidden(ev: Evidence) -> tuple[Doubt, ...]:
    """Growth the runs' spread could hide, from the slowest class up."""
    if not ev.hidden:
        return ()
    first = ev.hidden[0]
    return (Doubt("hidden", "1", ev.hidden[-1].cls, first.decide_n, first.meter,
                  numbers={"class": first.cls, "share": first.share, "hi_n": ev.hi_n}),)


def leave_one_out(ev: Evidence) -> tuple[Doubt, ...]:
    """Leaving one size out chooses another class: one size carries the verdict."""
    if not ev.shaky:
        return ()
    numbers: dict[str, DoubtValue] = {"chosen": ev.chosen, "other": ev.shaky[-1]}
    decide_n, meter = None, ""
    if ev.loo_tie is not None:
        numbers.update(ev.loo_tie.numbers())
        decide_n, meter = ev.loo_tie.decide_n, ev.loo_tie.meter
    return (Doubt("leave_one_out", ev.shaky[0], ev.shaky[-1], decide_n, meter,
                  numbers=numbers),)


def short_span(ev: Evidence) -> tuple[Doubt, ...]:
    """A constant over less than a decade of n is not yet shown."""
    if ev.chosen != "1" or ev.hi_n >= 10 * ev.lo_n:
        return ()
    return (Doubt("short_span", "1", "1", nice_n(10 * ev.lo_n),
                  numbers={"lo_n": ev.lo_n, "hi_n": ev.hi_n}),)


def exponent(ev: Evidence) -> tuple[Doubt, ...]:
    """The chosen class's own exponent lies outside k's interval: the bracket straddles k."""
    if ev.straddle is None:
        return ()
    below, above = ev.straddle
    numbers: dict[str, DoubtValue] = {"chosen": ev.chosen, "k": ev.k, "k_lo": ev.k_ci[0],
                                       "k_hi": ev.k_ci[1]}
    below_k = dict(ev.exponents).get(below)
    if below_k is not None:  # the fastest the slower class can grow here, offset included
        numbers["below_k"] = below_k
    decide_n, meter = ev.straddle_advice or (nice_n(10 * ev.hi_n), "")
    return (Doubt("exponent", below, above, decide_n, meter, numbers=numbers),)


def negligible(ev: Evidence) -> tuple[Doubt, ...]:
    """Growth too small across the sizes to tell from drift: it may be constant."""
    if ev.negligible is None:
        return ()
    share, decide_n = ev.negligible
    # Only a time is judged negligible: counting its work decides where no size does.
    return (Doubt("negligible", "1", ev.grower, decide_n, "" if decide_n else "instructions",
                  numbers={"class": ev.grower, "share": share, "lo_n": ev.lo_n,
                           "hi_n": ev.hi_n}),)


def slopes(ev: Evidence) -> tuple[Doubt, ...]:
    """Local slopes that swing more than noise allows (`quadscope.analyse.slopes`)."""
    s = ev.slopes
    if s is None:
        return ()
    return (Doubt("slopes", s.at_least, s.judged, s.decide_n,
                  numbers={"low": s.low, "high": s.high, "low_from": s.n_low[0],
                           "low_to": s.n_low[1], "high_from": s.n_high[0],
                           "high_to": s.n_high[1]}),)


def second_term(ev: Evidence) -> tuple[Doubt, ...]:
    """A small faster term under the verdict's (`quadscope.analyse.terms`)."""
    return () if ev.second_term is None else (ev.second_term,)


# The registry of checks, in the order their doubts are listed and take precedence.
CHECKS: tuple[Check, ...] = (tie, rising, hidden, leave_one_out, short_span, exponent,
                             negligible, slopes, second_term)
# The checks whose first doubt gives the reason (they answer "is the selection sure?").
SELECTION = ("tie", "rising", "hidden", "leave_one_out", "short_span", "exponent")
# Where nothing rises (or too little), these name the fastest growth the bracket reaches.
FLAT_REACH = ("hidden", "leave_one_out", "negligible")
# Otherwise these widen the bracket the data support by their own ends.
WIDENS = ("exponent", "slopes", "second_term")


def run_checks(ev: Evidence, checks: Sequence[Check] = CHECKS) -> tuple[Doubt, ...]:
    """Every check's doubts, in the checks' order."""
    return tuple(d for check in checks for d in check(ev))


def counted_doubts(doubts: Sequence[Doubt], counted: str) -> tuple[Doubt, ...]:
    """The doubts of a sweep whose work `counted` (an exactly counted metric, "" for none)
    already counted: a doubt advising a meter and no size advises none, and carries the
    counted metric instead (its `numbers["counted"]`), so its sentence points to the work's
    verdict rather than to a meter the sweep already used."""
    if not counted:
        return tuple(doubts)
    return tuple(replace(d, meter="", numbers={**d.numbers, "counted": counted})
                 if d.meter and not d.decide_n else d for d in doubts)


def _advised_away(d: Doubt) -> bool:
    """Whether no affordable size decides `d`: it names a meter, or the work was counted."""
    return not d.decide_n and bool(d.meter or d.numbers.get("counted"))


def _first(doubts: Sequence[Doubt], name: str) -> Doubt | None:
    return next((d for d in doubts if d.check == name), None)


def _reason(ev: Evidence, doubts: Sequence[Doubt]) -> tuple[str, int | None]:
    """The reason and deciding size, by the precedence of the module docstring."""
    reg = ev.registry
    parts: list[str] = []
    decide_n: int | None = None
    said: list[Doubt] = []
    primary = next((d for d in doubts if d.check in SELECTION), None)
    if primary is not None:
        parts, decide_n, said = [text.doubt_text(primary, reg)], primary.decide_n, [primary]
    if (d := _first(doubts, "negligible")) is not None:
        parts, decide_n, said = [text.doubt_text(d, reg)], d.decide_n, [d]
    if (d := _first(doubts, "slopes")) is not None:
        decide_n = max(decide_n or 0, d.decide_n or 0)
        parts.append(text.doubt_text(d, reg, grow_to=decide_n))
    if (d := _first(doubts, "second_term")) is not None:
        decide_n = max(decide_n or 0, d.decide_n or 0) or None
        parts.append(text.doubt_text(d, reg))
        said.append(d)
    if any(_advised_away(d) for d in said):
        decide_n = None  # a doubt no affordable n decides: a size would not settle the verdict
    return "; ".join(parts), decide_n


def _supported(ev: Evidence, cls: str, drop_constant: bool) -> tuple[str, str]:
    """(slowest, fastest) class the data support: the verdict itself when it is settled."""
    if cls != INCONCLUSIVE:
        return cls, cls
    supported = {*ev.leading, *ev.loo_leading, *ev.k_supported}
    if drop_constant:
        supported.discard("1")
    ordered = [g.name for g in ev.registry if g.name in supported]
    return (ordered[0], ordered[-1]) if ordered else ("", "")


def _rise(doubts: Sequence[Doubt]) -> Doubt | None:
    """The rising doubt, unless a negligible growth voids it: too little to count is not a rise."""
    return None if _first(doubts, "negligible") is not None else _first(doubts, "rising")


def _flat(ev: Evidence, doubts: Sequence[Doubt]) -> bool:
    """Nothing rises, or too little to count: the bracket runs up from "1"."""
    return (ev.chosen == "1" and _rise(doubts) is None) or _first(doubts, "negligible") is not None


def needs_support(ev: Evidence, doubts: Sequence[Doubt]) -> bool:
    """Whether the fold reads `k_supported` (an unsettled class whose bracket is not flat):
    fitting computes it only then."""
    return bool(doubts or not ev.settle) and not _flat(ev, doubts)


# The doubts whose ends measure what k cannot, kept beyond k's interval (module docstring).
BEYOND_K = ("slopes", "second_term")
# Half a unit of the two decimals k is printed with (as `evidence.COHERENCE_TOL`).
COHERENCE_TOL = 0.005
# How far (in exponent units) a class's effective exponent may lie outside k's 95% interval
# while an unsettled bracket still holds it (`evidence.k_supported` reads it too).
EXPONENT_SLACK = 0.3


def k_ends(ev: Evidence) -> tuple[str, str] | None:
    """(floor, ceiling): the slowest and fastest class k's interval allows in a bracket (see
    the module docstring); None without exponents or within a regime split off
    (`Evidence.cut`)."""
    if not ev.exponents or not ev.cut:
        return None
    lo, hi = ev.k_ci
    order = ev.registry.index
    names = ev.registry.names
    below = [c for c, e in ev.exponents if e <= lo + COHERENCE_TOL]
    above = [c for c, e in ev.exponents if e >= hi - COHERENCE_TOL]
    near_lo = [c for c, e in ev.exponents if e >= lo - EXPONENT_SLACK]
    near_hi = [c for c, e in ev.exponents if e <= hi + EXPONENT_SLACK]
    floor = min(max(below, key=order, default=names[0]),
                min(near_lo, key=order, default=names[-1]), key=order)
    ceiling = max(min(above, key=order, default=names[-1]),
                  max(near_hi, key=order, default=names[0]), key=order)
    return floor, ceiling


def _disagree(ev: Evidence) -> bool:
    """Every growing class that fits as well as the best on every size lies beyond k's
    interval's ends (a constant chosen while the runs rise is the rising check's; where
    some lie within, the noise leaves many classes standing and the cut keeps those)."""
    ends = k_ends(ev)
    growing = [c for c in ev.leading if ev.registry[c].growing]
    if ends is None or not growing:
        return False
    order = ev.registry.index
    return all(not order(ends[0]) <= order(c) <= order(ends[1]) for c in growing)


def _coherent(ev: Evidence, at_least: str, at_most: str) -> tuple[str, str]:
    """The bracket cut to the classes k's interval allows (see the module docstring)."""
    ends = k_ends(ev)
    if ends is None or not at_least or not at_most:
        return at_least, at_most
    order = ev.registry.index
    floor, ceiling = ends
    if _disagree(ev):
        # The classes that fit best on every size and k's interval disagree (a law that is
        # not one power over these sizes, as a cost per element stepping up): no bracket.
        return "", ""
    lo = max(at_least, floor, key=order)
    hi = min(at_most, ceiling, key=order)
    return (lo, hi) if order(lo) <= order(hi) else (floor, ceiling)


def _widen(ev: Evidence, ends: tuple[str, str], doubts: Sequence[Doubt],
           checks: Sequence[str]) -> tuple[str, str]:
    """`ends` widened by the ends of the doubts of `checks`."""
    at_least, at_most = ends
    order = ev.registry.index
    for d in (d for d in doubts if d.check in checks):
        at_least = min(filter(None, (at_least, d.at_least)), key=order)
        at_most = max(filter(None, (at_most, d.at_most)), key=order)
    return at_least, at_most


def _bracket(ev: Evidence, cls: str, doubts: Sequence[Doubt]) -> tuple[str, str]:
    order = ev.registry.index
    rise = _rise(doubts)
    if cls == INCONCLUSIVE and _flat(ev, doubts):
        # Nothing rises, or too little to count: as for a settled "1", whose bracket holds no
        # class a negligible b would also fit, the bracket runs from constant up to the
        # growth found and the fastest growth the runs could hide. Its top is cut to k's
        # interval; its floor stays "1" (a rise within drift is no evidence against it).
        reach = [d.at_most for d in doubts if d.check in FLAT_REACH]
        top = max(reach, key=order, default="1")
        ends = k_ends(ev)
        return "1", top if ends is None else min(top, max(ends[1], "1", key=order), key=order)
    p = None if rise is None else rise.numbers.get("p")
    drop = (cls == INCONCLUSIVE and ev.chosen == "1" and rise is not None
            and isinstance(p, float) and p < BRACKET_TREND_P and ev.k >= FLAT_K)
    at_least, at_most = _widen(ev, _supported(ev, cls, drop), doubts,
                               [c for c in WIDENS if c not in BEYOND_K])
    if cls == INCONCLUSIVE:
        at_least, at_most = _coherent(ev, at_least, at_most)
    # The local slopes of the upper half and a second growth term fitted beside the first
    # measure what one k over every size cannot; their sentences give their own numbers.
    at_least, at_most = _widen(ev, (at_least, at_most), doubts, BEYOND_K)
    fastest = next((g.name for g in ev.registry if g.outgrows_powers), "")
    if (cls == INCONCLUSIVE and rise is not None and at_most and fastest and ev.k_at_top
            and order(ev.best) >= order(at_most) and order(at_most) < order(fastest)):
        # The free power law's best k sits at the top of its search: the runs outgrow every
        # power tried, so a bracket capped at a power contradicts them (seen on a real
        # Fibonacci sweep: "1 … n³" at k = 4). Widening is the honest side. Only when the
        # best class is the bracket's top: a 0/1 count whose best is "1" keeps its cap.
        at_most = fastest
    return at_least, at_most


def fold(ev: Evidence, doubts: Sequence[Doubt]) -> Verdict:
    """The class, bracket, deciding size and reason the doubts leave (see the module docstring)."""
    # Too few sizes to settle a class (below a change of regime): the caller says why.
    cls = INCONCLUSIVE if doubts or not ev.settle else ev.chosen
    reason, decide_n = _reason(ev, doubts)
    at_least, at_most = _bracket(ev, cls, doubts)
    if cls == INCONCLUSIVE and not at_least and not at_most and _disagree(ev):
        leading = [c for c in ev.leading if ev.registry[c].growing]
        reason = text.then(text.lenses_disagree(ev.k, ev.k_ci, leading, ev.registry), reason)
    return Verdict(cls, at_least, at_most, decide_n, reason, tuple(doubts))


__all__ = ["CHECKS", "Check", "Doubt", "Evidence", "Hidden", "Slopes", "Tie", "Verdict",
           "counted_doubts", "fold", "k_ends", "needs_support", "run_checks"]
