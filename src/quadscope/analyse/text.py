"""Every sentence a user reads about a verdict, written in one place (as hyperfine's warnings.rs).

Contract: pure functions from numbers and typed records (`quadscope.model.Doubt`,
class names looked up in a `Registry`) to text; nothing here fits, decides or
prints. The statistics modules (`classfit`, `fitting`, `memory`, `analysis`)
return numbers and records; `verdict.fold` and they call here for the words.
Sizes are written by `fmt_n` (digits below 10⁷, three significant figures
above), shares as whole percentages, exponents with two decimals, bytes by
`units.fmt_bytes`. A class is named by its registry `label` ("n²") where a
sentence compares growth, by its `words` ("quadratic") where it names a
term, and by its `name` ("n^2") where it repeats the verdict's own cell;
these choices are the ones the reports have always printed, kept here
byte for byte.

`doubt_text(doubt, registry, grow_to=...)` is the sentence of one doubt;
each check of `verdict.CHECKS` has one (its `check` name picks it). The
sentences are written for a size n; `sized(sentence, size_word)` renames it
to the sweep's own variable (accumulate mode's launch index i: "at i = 55",
"without growing i", "i²"), as `headline.label` renames a class.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

from quadscope.classes import Registry
from quadscope.model import Doubt, DoubtValue, Run, Sweep
from quadscope.units import fmt_bytes, fmt_exit, fmt_seconds

K = TypeVar("K", bound=Hashable)

# How the note of a count that was refused ends (`run.counting.Counting.refused`).
REFUSED_TAIL = "; time alone decides"


def fmt_n(n: float) -> str:
    """A size as people read it in a sentence: 4096, 1.05e+07."""
    return f"{int(n):d}" if n < 1e7 else f"{n:.3g}"


_SIZE_N = re.compile(r"(?<![\w{\-])n(?![\w}\-])", re.ASCII)


def sized(sentence: str, size_word: str) -> str:
    """`sentence` with its size n written as `size_word`: every standalone n (not a word's
    letter, not the {n} placeholder) and a superscript ⁿ (cⁿ)."""
    if size_word == "n":
        return sentence
    renamed = _SIZE_N.sub(size_word, sentence)
    return renamed.replace("ⁿ", "ⁱ") if size_word == "i" else renamed


def decades(lo: float, hi: float) -> str:
    """The span of sizes lo..hi in words: "two decades", "1.3 decades" (a size below 1 as 1)."""
    span = math.log10(max(hi, 1.0) / max(lo, 1.0))
    words = {1: "one decade", 2: "two decades", 3: "three decades", 4: "four decades"}
    r = round(span)
    if span < 0.85:
        return "less than a decade"
    if abs(span - r) < 0.15 and r in words:
        return words[r]
    return f"{span:.1f} decades"


def refused(metric: str, sizes: int) -> str:
    """Why a metric with fewer than three sizes is not fitted."""
    have = "no size" if sizes == 0 else f"only {sizes} distinct size(s)"
    return f"{metric}: {have} with finite values, and a growth class needs at least 3 sizes."


def by_note(said: Iterable[tuple[str, K]]) -> dict[K, list[str]]:
    """The metrics each note (`K`: the note, or the note with its variant) is said of, notes
    in the order first said, for one line per note (`of_metrics`): the same note of eleven
    metrics once filled eleven lines."""
    out: dict[K, list[str]] = {}
    for metric, note in said:
        out.setdefault(note, []).append(metric)
    return out


def of_metrics(metrics: Sequence[str], note: str) -> str:
    """One note said of several metrics: "max_rss_bytes, minor_faults: not settled; …"."""
    return f"{', '.join(metrics)}: {note}"


def refusals(refused: Iterable[tuple[str, str]]) -> list[str]:
    """The notes of metrics not fitted, from (metric, its `FitRefusedError` sentence, which
    names it first), one per sentence (`by_note`): "wall_s, user_s, …: only 2 distinct
    size(s) …". A sentence that does not start with its metric is kept whole, apart."""
    pairs = list(refused)
    named = [(m, why.removeprefix(f"{m}: ")) for m, why in pairs if why.startswith(f"{m}: ")]
    return ([of_metrics(ms, why) for why, ms in by_note(named).items()]
            + [why for m, why in pairs if not why.startswith(f"{m}: ")])


def all_failed(variant: str, tried: int) -> str:
    """The note for a variant none of whose runs succeeded."""
    return f"{variant}: every one of its {tried} runs failed, so nothing was fitted"


def codes_text(codes: Sequence[int | str]) -> str:
    """Failed runs' outcomes in a note: "exit codes [1, 'timeout']", and each signal that
    killed some by its name ("killed by SIGABRT (signal 6)"): "exit codes [-6]" read as a
    status. Statuses alone read as they always have."""
    statuses = [c for c in codes if not isinstance(c, int) or c >= 0]
    signals = [fmt_exit(c) for c in codes if isinstance(c, int) and c < 0]
    return "; ".join(([f"exit codes {statuses}"] if statuses else []) + signals)


def nothing_to_fit(codes: Sequence[int | str]) -> str:
    """Why no verdict is given when every run of the command failed."""
    return (f"every run of the command failed ({codes_text(codes)}), so there is nothing "
            "to fit; `quadscope show -v` lists their stderr")


def too_few_sizes(failed: int, codes: Sequence[int | str], good: int, sizes: Sequence[int],
                  startup_n: int | None = None) -> str:
    """Why no verdict is given when the runs that succeeded cover fewer than three sizes.

    The start-up size (`Sweep.startup_n`) is named apart: it is not one of the sizes a
    class is fitted on, so "cover only 3 size(s) [1, 100, 200]: a growth class needs at
    least 3" once contradicted itself. Plain `show` only counts the failures; -v lists them."""
    swept = [n for n in sizes if n != startup_n]
    beside = (f" beside the start-up runs at n = {fmt_n(startup_n)}"
              if startup_n is not None and startup_n in sizes else "")
    return (f"{failed} runs failed ({codes_text(codes)}) and the {good} that succeeded "
            f"cover only {len(swept)} size(s) {swept}{beside}: a growth class needs at least 3; "
            "`quadscope show -v` lists the failures")


def startup_failed(startup_n: int, codes: Sequence[int | str]) -> str:
    """Why the start-up runs (`Sweep.startup_n`) were dropped: the program failed there."""
    return (f"the start-up runs at n = {fmt_n(startup_n)} failed ({codes_text(codes)}), "
            "so the start-up was left to the fit (--startup-n sets another size)")


def startup_ignored(startup_n: int, metrics: Sequence[str]) -> str:
    """Why the start-up runs were measured but left out of some time's fit."""
    return (f"{', '.join(metrics)}: the start-up runs at n = {fmt_n(startup_n)} were left out "
            "of the fit, as they do not follow the other sizes (another regime at small n) "
            "or would not narrow the verdict")


def vs_not_fitted(failed: int, codes: Sequence[int | str], good: int) -> str:
    """Why an A/B sweep ends in failure when the --vs command (B) could not be fitted."""
    if good == 0:
        return (f"every run of the --vs command (B) failed ({codes_text(codes)}), so A "
                "cannot be compared with it; `quadscope show -v` lists their stderr")
    return (f"{failed} runs of the --vs command (B) failed ({codes_text(codes)}) and its "
            f"{good} that succeeded cover too few sizes to fit, so A cannot be compared with it; "
            "`quadscope show -v` lists the failures")


def then(first: str, reason: str) -> str:
    """`first`, then an earlier reason after "; " (nothing trailing when it is empty)."""
    return f"{first}; {reason}".rstrip("; ")


def _f(numbers: Mapping[str, DoubtValue], key: str) -> float:
    value = numbers[key]
    assert isinstance(value, int | float), key
    return float(value)


def _s(numbers: Mapping[str, DoubtValue], key: str) -> str:
    return str(numbers[key])


def _grow_to(decide_n: int | None, then: str, otherwise: str, meter: str = "",
             counted: DoubtValue = None) -> str:
    if decide_n:
        return f"grow n to {fmt_n(decide_n)} {then}"
    if counted:
        return counted_instead(str(counted))
    return count_instead(meter) if meter else otherwise


def count_instead(meter: str) -> str:
    """What decides when no affordable n does: counting the work with an exact meter."""
    return (f"no affordable n would decide it; count the work instead: --meter {meter} decides "
            "the class without growing n")


def counted_instead(metric: str) -> str:
    """What decides when no affordable n does and the sweep counted the work: its verdict."""
    return (f"no affordable n would decide it from time; the work was counted exactly "
            f"({metric}): its verdict is the algorithm's class")


def readvised(reason: str, named: int, n: int | None, meter: str, counted: str = "") -> str:
    """`reason` with the size it named (`named`) changed to n, where a forecast of following
    it moved it (`analyse.forecast`); where n is None, its "grow n to …" advice replaced by
    what decides instead: the meter, or the work's count where it was counted."""
    old = fmt_n(named)
    if n is not None:
        return re.sub(rf"(?<![\d.]){re.escape(old)}(?![\d.])", fmt_n(n), reason)
    instead = counted_instead(counted) if counted else count_instead(meter)
    advice = re.compile(rf"grow n to {re.escape(old)}\b[^;]*")
    return advice.sub(instead, reason) if advice.search(reason) else f"{reason}; {instead}"


def tie(numbers: Mapping[str, DoubtValue], decide_n: int | None, registry: Registry,
        meter: str = "") -> str:
    """Why two classes (`first`, `second`) cannot be told apart, and what would tell them apart
    (a size, else `meter`)."""
    first, second = registry[_s(numbers, "first")].label, registry[_s(numbers, "second")].label
    lo_n, hi_n = _f(numbers, "lo_n"), _f(numbers, "hi_n")
    share = numbers.get("growing_share")
    if share is not None:
        pct = max(1, math.ceil(100 * float(share)))
        said = (f"start-up cost dominates every size: the growing part is under {pct}% of the "
                f"total at n = {fmt_n(hi_n)}")
        apart = f"tell {first} from {second}"
    else:
        said = (f"{first} and {second} fit about equally well over {decades(lo_n, hi_n)} of n "
                f"({fmt_n(lo_n)}–{fmt_n(hi_n)})")
        apart = "tell them apart"
    if decide_n:
        return f"{said}; grow n to {fmt_n(decide_n)} to {apart}"
    if numbers.get("counted"):
        return f"{said}; {counted_instead(str(numbers['counted']))}"
    if meter:
        return f"{said}; {count_instead(meter)}"
    return f"{said}; no practical n decides it to {apart}"


def _tie_doubt(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    reason = tie(d.numbers, d.decide_n, registry, d.meter)
    if d.numbers.get("by") == "leave_one_out":
        return (f"leaving one size out turns {d.numbers['chosen']} into {d.numbers['other']}, "
                f"so one size carries it: {reason}")
    return reason


def _rising(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    n = d.numbers
    if n.get("p") is not None:  # the rank test (`evidence._rising`), in words first
        rise = ("values rise with n beyond chance: of any two runs, the one at the larger n "
                f"is more often the higher (Kendall τ = {_f(n, 'tau'):.2f}: 0 would be no "
                f"trend, 1 always higher; p = {_f(n, 'p'):.1g})")
    else:
        rise = (f"values rise with n (k = {_f(n, 'k'):.2f}, 95% interval "
                f"{_f(n, 'k_lo'):.2f}–{_f(n, 'k_hi'):.2f})")
    return (f"{rise}, though no growth class clearly beats a constant: "
            f"{tie(n, d.decide_n, registry, d.meter)}")


def _hidden(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    n = d.numbers
    target = _grow_to(d.decide_n, "to confirm it is constant", "no practical n would show it",
                      d.meter, n.get("counted"))
    return (f"no growth detected, but the spread of the runs could hide a "
            f"{registry[_s(n, 'class')].words} term worth up to {_f(n, 'share'):.0%} of the cost "
            f"at n = {fmt_n(_f(n, 'hi_n'))}: start-up cost may be masking it; {target}")


def _leave_one_out(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    return (f"leaving one size out, the runs fit {d.numbers['other']}, so one size carries the "
            f"constant: {tie(d.numbers, d.decide_n, registry, d.meter)}")


def _short_span(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    lo_n, hi_n = _f(d.numbers, "lo_n"), _f(d.numbers, "hi_n")
    return (f"no growth detected over n = {fmt_n(lo_n)}–{fmt_n(hi_n)}, less than a decade; "
            f"grow n to {fmt_n(d.decide_n or hi_n)} to confirm it is constant")


def _exponent(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    n = d.numbers
    return (f"the best class, {n['chosen']}, disagrees with the free exponent k = "
            f"{_f(n, 'k'):.2f} (95% interval {_f(n, 'k_lo'):.2f}–{_f(n, 'k_hi'):.2f}), so the "
            f"metric may mix growth terms; "
            + _grow_to(d.decide_n, "to see which one dominates",
                       "no practical n would show which one dominates", d.meter,
                       n.get("counted")))


def _negligible(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    n = d.numbers
    target = _grow_to(d.decide_n, "to see whether it keeps growing", "no practical n would show it",
                      d.meter, n.get("counted"))
    share = _f(n, "share")
    most = f"at most {share:.0%}" if share >= 0.01 else "under 1%"
    return (f"the runs grow as {registry[_s(n, 'class')].label} by {most} of the cost over "
            f"n = {fmt_n(_f(n, 'lo_n'))}–{fmt_n(_f(n, 'hi_n'))}, too little to tell from drift "
            f"between runs: it may be constant; {target}")


def _slopes(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    """The local slopes' swing; `grow_to` is the verdict's deciding size, which it names."""
    n = d.numbers
    return (f"the local slope swings from k = {_f(n, 'low'):.2f} (n = "
            f"{fmt_n(_f(n, 'low_from'))}–{fmt_n(_f(n, 'low_to'))}) to {_f(n, 'high'):.2f} "
            f"(n = {fmt_n(_f(n, 'high_from'))}–{fmt_n(_f(n, 'high_to'))}), more than noise "
            f"allows for {registry[d.at_most].label}: a cost per element that rises with n "
            f"(cache levels) or steps up; the class may be as slow as "
            f"{registry[d.at_least].label}; grow n to {fmt_n(grow_to or d.decide_n or 0)} to see "
            f"where it levels off")


def _second_term(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    n = d.numbers
    term = registry[_s(n, 'class')].words
    if _f(n, "share") >= 0.5:  # it already carries most of the cost: nothing left to overtake
        return (f"a {term} term is present and already {_f(n, 'share'):.0%} of the cost at "
                f"n = {fmt_n(_f(n, 'n_max'))}, though the fit cannot settle it")
    if d.decide_n:
        where = f"it would dominate the {n['first']} term from n = {fmt_n(d.decide_n)}"
    elif n.get("counted"):
        where = counted_instead(str(n["counted"]))
    elif d.meter:
        where = count_instead(d.meter)
    else:
        where = "no practical n would let it dominate"
    return (f"a {term} term is present but small at these n "
            f"({_f(n, 'share'):.0%} of the cost at n = {fmt_n(_f(n, 'n_max'))}): {where}")


def share_text(share: float) -> str:
    """A share of the work: whole percent from 1% up, one decimal below ("0.3%")."""
    return f"{share:.0%}" if share >= 0.0095 else f"{share:.1%}"


def _terms_label(names: str, registry: Registry) -> str:
    """An explanation's terms ("n + n^2", as `exactfit` stores them) in labels: "n + n²"."""
    return " + ".join(registry[t].label if t in registry else t for t in names.split(" + "))


def _work_terms(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    """An exact count's fastest term: a note beside a settled class, or too small to settle."""
    n = d.numbers
    top, at = registry[d.at_most].label, fmt_n(_f(n, "n_max"))
    share = share_text(_f(n, "share"))
    if n.get("settled") and _f(n, "share") >= 0.5:
        slower = registry[_s(n, "first")].words if n.get("first") else "start-up"
        return (f"the {top} term does {share} of the work at n = {at}, a {slower} term "
                f"{share_text(_f(n, 'share1'))} and the start-up "
                f"{share_text(_f(n, 'share_a'))}")
    if n.get("settled"):
        first = registry[_s(n, "first")].words if n.get("first") else "start-up"
        where = (f"dominates beyond n ≈ {fmt_n(d.decide_n)}" if d.decide_n
                 else "would dominate only beyond any practical n")
        return (f"the {top} term is {share} of the work at n = {at} and {where}; the {first} "
                f"term does most of the work at the sizes measured")
    target = (f"grow n to {fmt_n(d.decide_n)}, where it would be 1%" if d.decide_n
              else "no practical n would make it 1%")
    return (f"the {top} term is only {share} of the work at n = {at}, too little to tell "
            f"from the count's bookkeeping; {target}")


def _counts_it(d: Doubt) -> str:
    """"; `--meter instructions` counts the work itself", or nothing where the sweep counted
    the work (the caveat's `numbers["counted"]`): advice to do what was done misleads."""
    if d.numbers.get("counted"):
        return ""
    return f"; `--meter {d.meter or 'instructions'}` counts the work itself"


def _kernel(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    """A settled time the kernel's rising share may account for (`analyse.kernel`)."""
    n = d.numbers
    return (f"the kernel's share of the CPU time rose from {_f(n, 'share_lo'):.0%} at "
            f"n = {fmt_n(_f(n, 'lo_n'))} to {_f(n, 'share_hi'):.0%} at "
            f"n = {fmt_n(_f(n, 'hi_n'))} (page faults on fresh memory, system calls), and "
            f"user time alone supports {registry[d.at_least].label}: the kernel's work may "
            f"change regime within these sizes{_counts_it(d)}")


def _anchor(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    """A settled time class the work counted contradicts (`analyse.anchors`)."""
    n = d.numbers
    time, work = registry[str(n["time"])].label, registry[str(n["work"])].label
    return (f"over these sizes it reads {time} (k = {_f(n, 'k'):.2f}), but the work, counted "
            f"exactly, grows as {work}, and an instruction's cost is bounded: beyond these "
            f"sizes the time grows as the work does, so it lies between {work} and {time}")


def _waiting(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    """A settled wall time the runs' waiting for a CPU may account for (`analyse.waiting`)."""
    n = d.numbers
    return (f"the runs waited for a CPU: wall time was {_f(n, 'ratio_lo'):.1f}× the CPU time "
            f"at n = {fmt_n(_f(n, 'lo_n'))} and {_f(n, 'ratio_hi'):.1f}× at "
            f"n = {fmt_n(_f(n, 'hi_n'))} ({_f(n, 'preempted'):.0f} times preempted by other "
            f"work), and CPU time supports {registry[d.at_least].label}: the machine's load "
            f"may account for the rest{_counts_it(d)}")


def _parallel(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    """A wall time the program's growing parallelism holds down (`analyse.parallel`)."""
    n = d.numbers
    return (f"the program kept more CPUs busy as n grew: {_f(n, 'cpus_lo'):.1f} at "
            f"n = {fmt_n(_f(n, 'lo_n'))} and {_f(n, 'cpus_hi'):.1f} at "
            f"n = {fmt_n(_f(n, 'hi_n'))} (CPU time over wall time), so wall time grows "
            f"slower than the work until the cores run out; CPU time supports "
            f"{registry[str(n['cpu'])].label}{_counts_it(d)}")


def _exact_misfit(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    """The best law of two terms misses the counts, and its fastest term is a minority."""
    n = d.numbers
    top, at = registry[d.at_most].label, fmt_n(_f(n, "n_max"))
    target = (f"count up to n = {fmt_n(d.decide_n)} to see whether it holds" if d.decide_n
              else "no practical n shows whether it holds")
    return (f"the counts follow {_terms_label(_s(n, 'terms'), registry)} only roughly (they miss "
            f"it by {math.sqrt(_f(n, 'c_hat')):.1f}× the count's bookkeeping), and its {top} "
            f"term is only {share_text(_f(n, 'share'))} of the work at n = {at}: a cost per "
            f"element that moves with n bends counts as that term would; {target}")


def _exact_tie(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    """Another explanation of the counts as good, or one size that alone asks for the term."""
    n = d.numbers
    aim = "to tell them apart" if n.get("other") else "to see whether it holds"
    target = f"grow n to {fmt_n(d.decide_n)} {aim}" if d.decide_n else f"no practical n is enough {aim}"
    chosen = _terms_label(_s(n, "chosen"), registry)
    parts = []
    if n.get("other"):
        parts.append(f"the counts fit {chosen} and {_terms_label(_s(n, 'other'), registry)} about "
                     f"equally well over n = {fmt_n(_f(n, 'lo_n'))}–{fmt_n(_f(n, 'hi_n'))}")
    if n.get("carried_by") is not None:
        top = registry[_s(n, "chosen").split(" + ")[-1]].label
        parts.append(f"only the count at n = {fmt_n(_f(n, 'carried_by'))} asks for the {top} "
                     f"term in {chosen}: without it the slower terms fit")
    return f"{', and '.join(parts)}; {target}"


def _exact_hidden(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    n = d.numbers
    target = f"grow n to {fmt_n(d.decide_n)} to see it" if d.decide_n else "no practical n shows it"
    return (f"a {registry[_s(n, 'class')].words} term worth up to {share_text(_f(n, 'share'))} "
            f"of the work at n = {fmt_n(_f(n, 'n_max'))} cannot be ruled out at these sizes; "
            f"{target}")


def lenses_disagree(k: float, k_ci: tuple[float, float], leading: Sequence[str],
                    registry: Registry) -> str:
    """Why an unsettled verdict gives no bracket: the best classes lie outside k's interval."""
    names = " and ".join(registry[c].label for c in leading)
    return (f"the free exponent k = {k:.2f} (95% interval {k_ci[0]:.2f}–{k_ci[1]:.2f}) "
            f"excludes {names}, which fit best: the growth is not one class over these sizes")


def change_of_regime(numbers: Mapping[str, DoubtValue]) -> str:
    """Where the growth changes and the exponents either side."""
    return (f"the growth changes near n = {fmt_n(_f(numbers, 'n_break'))} (k ≈ "
            f"{_f(numbers, 'k_below'):.1f} below, {_f(numbers, 'k_above'):.1f} above)")


def _regime(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    n = d.numbers
    aim = "fit the growth there" if n.get("fitted") == 0 else "settle the class there"
    return (f"{change_of_regime(n)} and only {int(_f(n, 'sizes_above'))} sizes lie above it; "
            f"grow n to {fmt_n(d.decide_n or _f(n, 'hi_n'))} to {aim}")


def above_regime(n_break: int, reason: str) -> str:
    """The upper regime's reason, said to hold above the change ("" stays "")."""
    return reason and f"above a change of regime near n = {fmt_n(n_break)}: {reason}"


def step(numbers: Mapping[str, DoubtValue]) -> str:
    """A step in the cost with the same class on both sides."""
    ratio = numbers.get("ratio")
    # Without a growing part below (b = 0) there is no ratio to give.
    times = f", the growing part ×{float(ratio):.2g} above it" if ratio is not None else ""
    return f"the cost steps near n = {fmt_n(_f(numbers, 'n_break'))}: {numbers['class']} on both sides{times}"


def _step(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    return f"{step(d.numbers)}, or it changes to faster growth"


def _memory(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    return (f"{memory_why(d.numbers)}, where the time grew {_excess(d.numbers)} more than "
            f"below it: the caches may account for growth beyond {registry[d.at_least].label}")


def _excess(numbers: Mapping[str, DoubtValue]) -> str:
    return f"×{_f(numbers, 'excess'):.2g}"


def memory_why(numbers: Mapping[str, DoubtValue]) -> str:
    """The working set that left a cache: what makes the caches a suspect."""
    return (f"its working set grows as {numbers['memory']} to "
            f"{fmt_bytes(_f(numbers, 'working_set_bytes'))}, out of the "
            f"{fmt_bytes(_f(numbers, 'cache_bytes'))} {numbers['cache']}")


def memory_note(metric: str, d: Doubt) -> str:
    """The note beside a time verdict the caches account for part of, and what would tell.

    With the work counted (`per_work` in the numbers) it gives the measured rise of
    the time per unit of work and leaves the verdicts alone.
    """
    if d.numbers.get("per_work"):
        return (f"{metric}: {memory_why(d.numbers)}, and the time per unit of work counted "
                f"rose {_excess(d.numbers)} past it (cache and TLB misses): the work's class is "
                "the algorithm's, the rest is what the memory costs")
    slowest, fastest = str(d.numbers["slowest"]), d.at_most
    grows = slowest if slowest == fastest else f"{slowest} … {fastest}"
    return (f"{metric} grows as {grows} over these sizes, but {memory_why(d.numbers)}, and past "
            f"it the time grew {_excess(d.numbers)} more than its growth while the data fit "
            "(cache and TLB misses): that part may be the memory's rather than the "
            f"algorithm's, which grows at least as {d.at_least}; `--meter {d.meter}` counts the "
            "work itself")


# The headline's clause when wall time outgrows the instructions counted: short, the note
# (shown with -v, and in JSON) gives the numbers.
OUTGROWS_HEADLINE = ("; time outgrows the instructions counted: look at sys_s and "
                     "minor_faults")
_NOT_INSTRUCTIONS = ("the extra time is not in instructions executed (kernel work, page zeroing, "
                     "cache misses); read the wall_s verdict, and sys_s and minor_faults for the "
                     "cause")


def flat_count_note(slowest: str, growth: float) -> str:
    """Wall time grows while the instructions counted barely moved."""
    return (f"wall_s grows at least as {slowest} but instructions changed by "
            f"{abs(growth - 1):.2%} over the sizes: {_NOT_INSTRUCTIONS}")


def outgrows_note(slowest: str, fastest: str) -> str:
    """Wall time surely grows faster than the instructions counted."""
    return (f"wall_s grows at least as {slowest} but instructions at most as {fastest}: "
            f"{_NOT_INSTRUCTIONS}")


def _few_counts(d: Doubt, registry: Registry, grow_to: int | None) -> str:
    n = d.numbers
    return (f"counted at {n['sizes']} sizes, and an exact class needs {n['needed']}: the counts "
            f"grew {_f(n, 'growth'):.0%} from n = {fmt_n(_f(n, 'lo_n'))} to "
            f"{fmt_n(_f(n, 'hi_n'))}, so the cost is not constant; `--meter instructions` "
            "counts every size")


_TEXTS: dict[str, Callable[[Doubt, Registry, int | None], str]] = {
    "tie": _tie_doubt,
    "rising": _rising,
    "hidden": _hidden,
    "leave_one_out": _leave_one_out,
    "short_span": _short_span,
    "exponent": _exponent,
    "negligible": _negligible,
    "slopes": _slopes,
    "second_term": _second_term,
    "regime": _regime,
    "step": _step,
    "memory": _memory,
    "work_terms": _work_terms,
    "exact_tie": _exact_tie,
    "exact_misfit": _exact_misfit,
    "kernel": _kernel,
    "waiting": _waiting,
    "parallel": _parallel,
    "anchor": _anchor,
    "exact_hidden": _exact_hidden,
    "few_counts": _few_counts,
}


def counted_how(counters: str) -> str:
    """How the work was counted, as a sentence says it: "under Valgrind", "by the CPU's counter"."""
    return {"valgrind": "under Valgrind", "qemu": "under QEMU",
            "qemu, then valgrind": "under QEMU, then Valgrind",
            "perf": "by the CPU's counter"}.get(
        counters, f"with {counters}" if counters else "")


def counting_cost(spent_s: tuple[float, float], timed: str = "the timed sweep") -> str:
    """What counting cost against what timing did, `spent_s` = (timing's seconds, counting's):
    "6.77 s, 60× the timed sweep's 112 ms", "200 ms, 5% of the timed sweep's 4.05 s", or
    "6.77 s" when timing took no time."""
    timed_s, counted_s = spent_s
    if timed_s <= 0:
        return fmt_seconds(counted_s)
    ratio = counted_s / timed_s
    times = (f"{ratio:.0f}×" if ratio >= 10 else f"{ratio:.1f}×" if ratio >= 1
             else f"{max(ratio * 100, 1):.0f}% of")
    whose = f"{timed}'" if timed.endswith("s") else f"{timed}'s"  # the timed launches'
    return f"{fmt_seconds(counted_s)}, {times} {whose} {fmt_seconds(timed_s)}"


def work_counted(reason: str, counters: str, where: str, spent_s: tuple[float, float]) -> str:
    """The note of a timed sweep whose work was then counted (`run.counting`'s `mark`):
    "time alone left the class open, so the work was counted under Valgrind at 4 sizes
    (6.77 s, 60× the timed sweep's 112 ms)". `where` is "4 sizes" or "12 points"."""
    how = counted_how(counters)
    return (f"{reason}, so the work was counted{' ' + how if how else ''} at {where} "
            f"({counting_cost(spent_s)})")


def counting_note(sweep: Sweep, runs: Sequence[Run], metric: str | None) -> str:
    """The sweep's note on counting, for the default report of one size or several: said
    where its work (`metric`) was counted after timing (some measured runs carry the
    count, others not), "" otherwise (a timed sweep, or one counted as it ran: its
    meter says so, and `-v` its note)."""
    if not metric or not sweep.counters_note or sweep.mode == "accumulate":
        return ""  # accumulate mode's launches counted in place: `launches.counted_text`
    measured = [r for r in runs if not r.warmup and r.measurement.ok]
    counted = sum(r.value(metric) is not None for r in measured)
    return sweep.counters_note if 0 < counted < len(measured) else ""


def uncounted_note(sweep: Sweep, runs: Sequence[Run], metric: str | None,
                   counted_metric: str | None) -> str:
    """The sweep's note on counting where `--meter auto` tried to count the work and could
    not class it (`counted_metric`, the metric its exact meter counts, holds values in some
    runs, yet no work metric was fitted) or was refused: the default report then says why
    the advice names the meter, not only `-v`. "" otherwise."""
    if metric or not sweep.counters_note or counted_metric is None:
        return ""
    tried = any(r.value(counted_metric) is not None for r in runs
                if not r.warmup and r.measurement.ok)
    return sweep.counters_note if tried or sweep.counters_note.endswith(REFUSED_TAIL) else ""


def doubt_text(d: Doubt, registry: Registry, *, grow_to: int | None = None) -> str:
    """The sentence of one doubt (`grow_to`: the verdict's deciding size, for checks that name it)."""
    return _TEXTS[d.check](d, registry, grow_to)


__all__ = ["OUTGROWS_HEADLINE", "above_regime", "all_failed", "by_note", "change_of_regime",
           "codes_text", "count_instead", "counted_how", "counted_instead", "counting_cost", "counting_note",
           "decades", "doubt_text", "flat_count_note", "fmt_n", "lenses_disagree", "memory_note",
           "memory_why", "nothing_to_fit", "of_metrics", "outgrows_note", "refusals", "refused",
           "share_text", "sized",
           "step", "then", "tie",
           "too_few_sizes", "vs_not_fitted", "work_counted"]
