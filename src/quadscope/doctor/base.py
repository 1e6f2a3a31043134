"""The records every doctor probe shares: what a probe plans, what it is shown, what it says.

Contract: a probe is a frozen object with `name`, `describe`, `weight` (its
share of the doctor's time budget, see `doctor.runner`),
`plan(quick, machine) -> ProbePlan` (its C helpers, sweeps and sizes; pure)
and `judge(evidence) -> ProbeResult` (pure: fits and printed numbers in, one
verdict and one actionable sentence out). The result's `details` is the
probe's own typed record in `doctor.details` (one class there per probe; a
probe without one may return `OtherDetails`, a plain object holding its
`numbers`). The runner (`doctor.runner`) is the only place that compiles,
runs and stores; nothing here touches a process.

A probe states only what is its own: a probe of one helper plans with
`Helper.plan(Helper.variant(label, *args, ...) for ...)` (the argv from `{bin}`
and the helper's name filled in), and its judge reads costs with `cost_fits`
(cpu_s, else wall_s), fills a `Row` (measured, class and cost cells, details)
and returns `row.ok/slow/pathological(finding)`, or `ProbeResult.skipped` when
nothing ran.

Argv templates in a plan may hold `{bin}` (the directory where every helper of
the probe is linked under its plain name), `{tmp}` (a fresh scratch directory
per variant, removed afterwards) and `{n}` / `{i}` (substituted by the sweep).

Verdicts: `ok` (nothing to fix), `slow` (grows as expected but a constant is
large enough to act on), `pathological` (the cost grows faster than the work:
superlinear, or a per-launch cost that keeps rising), `skipped` (the probe
could not run here; the finding says why).

A verdict decided from a count leads its table cells with it (`counted_first`:
"<count> (counted); timed: <timing>"), so the class shown is the verdict's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from quadscope.classes import REGISTRY
from quadscope.doctor.details import ProbeDetails
from quadscope.doctor.records import VERDICTS as VERDICTS
from quadscope.doctor.records import ProbeResult
from quadscope.model import Fit


@dataclass(frozen=True, slots=True)
class Helper:
    """A C helper: compiled by `cbuild.compile_c` and linked into `{bin}` as `name`."""

    name: str
    source: str
    flags: tuple[str, ...] = ("-O2",)

    def argv(self, *args: str) -> tuple[str, ...]:
        """This helper run from `{bin}` with `args`."""
        return (f"{{bin}}/{self.name}", *args)

    def variant(self, label: str, *args: str, **fields: Any) -> Variant:
        """A sweep of this helper alone, run as `{bin}/NAME ARGS…`; `fields` are the
        rest of the `Variant` (sizes, repeat, metrics, …)."""
        return Variant(label=label, argv=self.argv(*args), helpers=(self.name,), **fields)

    def plan(self, variants: Iterable[Variant],
             unavailable: Mapping[str, str] | None = None) -> ProbePlan:
        """A plan that builds this helper alone and runs `variants`."""
        return ProbePlan((self,), tuple(variants), unavailable or {})


@dataclass(frozen=True, slots=True)
class Variant:
    """One stored sweep of a probe.

    `argv` is the swept command. `setup` commands run once per size before the
    sweep (with `{n}` substituted), e.g. to fill a directory. `detail`, when
    set, runs once at `detail_n` outside the sweep and must print one JSON
    object on stdout: the executor keeps no stdout, so numbers a helper
    measures itself come this way. `helpers` names the helpers this variant
    needs; if one cannot be built the variant is unavailable. `perf` asks for
    the perf counter backend (slower per run; only where perf's page-faults
    see what rusage cannot). `metrics` are the ones fitted for the judge (each
    fit costs ~0.05 s, ~1 s at 1000 points); `page_faults` is added when perf
    counts. `count` (accumulate mode) counts the helper's system calls under
    strace in one launch before the sweep and one after it (`doctor.counts`), so
    a judge can decide from a count that noise cannot move; `count_sizes` (sizes
    mode) runs the helper once at each of those sizes before the probe's sweeps
    and keeps its page faults, so the count stands even when a slice runs out.
    `cpu_s` is derived: user_s + sys_s of the run (the kernel's
    precise runtime, split by tick samples, so only the sum is exact). On a shared
    machine contention inflates wall time tenfold at random while CPU time barely
    moves (measured: a 0.6 ms exec with 1.0 ms σ of wall_s, 0.04 ms σ of cpu_s),
    so judges read costs from cpu_s where the cost is CPU work. The stored sweep
    keeps every metric for `quadscope show`.
    """

    label: str
    argv: tuple[str, ...]
    helpers: tuple[str, ...]
    sizes: tuple[int, ...] = ()
    mode: str = "sizes"
    runs: int = 0
    repeat: int = 3
    warmup: int = 1
    setup: tuple[tuple[str, ...], ...] = ()
    detail: tuple[str, ...] | None = None
    detail_n: int = 0
    perf: bool = False
    metrics: tuple[str, ...] = ("cpu_s", "wall_s", "minor_faults")
    # Accumulate mode: count the helper's system calls (`doctor.counts`) in one launch
    # before the sweep and one after it, into `details[label]` as `count_launches`,
    # `failed_creates` and `syscalls` (each a pair): a judge decides from the count.
    count: bool = False
    # Sizes mode: run the helper once at each of these sizes before the sweep (untimed by
    # the judge) into `details[label]` as `count_sizes` and `count_faults` (minor page
    # faults from rusage, one per size): a judge decides from the count per unit of n.
    count_sizes: tuple[int, ...] = ()  # read back with `counted_per_unit`


@dataclass(frozen=True, slots=True)
class ProbePlan:
    """What to build and sweep. `unavailable` maps variant labels known not to work here to why."""

    helpers: tuple[Helper, ...]
    variants: tuple[Variant, ...]
    unavailable: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Evidence:
    """Everything `judge` sees: per variant label, its fits and printed numbers.

    `fits[label][metric]` comes from `analysis.analyse(sweep, runs).fits["A"]`;
    a label missing from `fits` did not run (see `unavailable[label]`).
    `facts` are machine facts (`MachineInfo.to_dict()`); `notes` are the
    runner's remarks (budget reached, runs that failed).
    """

    fits: Mapping[str, Mapping[str, Fit]] = field(default_factory=dict)
    details: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    facts: Mapping[str, Any] = field(default_factory=dict)
    unavailable: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


class Probe(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def describe(self) -> str: ...
    @property
    def weight(self) -> float: ...  # its share of the doctor's time budget

    def plan(self, quick: bool, machine: Mapping[str, Any]) -> ProbePlan: ...

    def judge(self, evidence: Evidence) -> ProbeResult: ...


@dataclass(frozen=True, slots=True)
class Row:
    """A judge's table row before its verdict: the cells every result it returns shares.

    A probe that could not run returns `ProbeResult.skipped` instead (no class, no cost).
    """

    probe: str
    measured: str
    cls: str
    cost: str
    details: ProbeDetails

    def ok(self, finding: str) -> ProbeResult:
        return self._judged("ok", finding)

    def slow(self, finding: str) -> ProbeResult:
        return self._judged("slow", finding)

    def pathological(self, finding: str) -> ProbeResult:
        return self._judged("pathological", finding)

    def _judged(self, verdict: str, finding: str) -> ProbeResult:
        return ProbeResult(self.probe, self.measured, self.cls, self.cost, verdict, finding,
                           self.details)


# -- helpers for judges --------------------------------------------------------


def cost_fits(evidence: Evidence, labels: Iterable[str]) -> dict[str, Fit | None]:
    """Each variant's cost: its cpu_s fit (what other tenants barely move), else wall_s."""
    return {k: fit_of(evidence, k, "cpu_s", "wall_s") for k in labels}


def ran(evidence: Evidence, labels: Iterable[str]) -> list[str]:
    """The variants among `labels` that were fitted, in their order."""
    return [k for k in labels if k in evidence.fits]


def why_skipped(evidence: Evidence, default: str) -> str:
    """Why nothing ran: the first variant's reason for not running, else `default`."""
    return next(iter(evidence.unavailable.values()), default)


def growths(fits: Mapping[str, Fit | None], var: str = "n") -> dict[str, str]:
    """Each variant's class as the table shows it (`growth`)."""
    return {k: growth(f, var) for k, f in fits.items()}


def class_cell(classes: Mapping[str, str], labels: Iterable[str]) -> str:
    """The table's class cell: "plain n, libs n²" over `labels`; "—" when none."""
    return ", ".join(f"{k} {classes[k]}" for k in labels) or "—"


def first_superlinear(fits: Mapping[str, Fit | None], labels: Iterable[str]) -> str | None:
    """The first of `labels` whose fit is `superlinear`: the variant a pathology names."""
    return next((k for k in labels if superlinear(fits[k])), None)



def fit_of(evidence: Evidence, label: str, *metrics: str) -> Fit | None:
    """The first of `metrics` fitted for `label` (e.g. page_faults, else minor_faults)."""
    fits = evidence.fits.get(label, {})
    for m in metrics:
        if m in fits:
            return fits[m]
    return None


def per_unit(fit: Fit | None) -> float | None:
    """Cost of one more unit of n: b of the linear candidate a + b·n.

    Read from the fit's own `n` candidate so that a constant start-up cost (a)
    never leaks into the per-unit cost, whatever class won.
    """
    if fit is None:
        return None
    for c in fit.candidates:
        if c.cls == "n" and c.score != float("inf"):
            return max(c.b, 0.0)
    return None


def growth(fit: Fit | None, var: str = "n") -> str:
    """The class to show: the verdict when confident, else the best guess marked as one.

    An inconclusive fit reads "n²? (k=1.9)": the best-scoring class with a
    question mark and the fitted power-law exponent, never a pair of classes
    (two guesses side by side read as nonsense when they are far apart, as
    "1 or n³" was). Classes are written as every report writes them, by their
    label (`Registry.relabel`); `var` renames n, e.g. to i for a launch index.
    """
    if fit is None:
        return "—"
    if fit.confident:
        text = REGISTRY.relabel(fit.cls, var)
    else:
        text = f"{REGISTRY.relabel(fit.best, var)}?" if fit.best else "?"
        # k of a + b·n^k is arbitrary when b is ~0, so a flat guess shows no k.
        if fit.exponent is not None and fit.best != "1":
            text += f" (k={fit.exponent:.2g})"
        elif not fit.best:
            text = "inconclusive"
    return text


# The power-law exponent's 95% interval must clear these for an inconclusive fit
# to count as superlinear / growing: the fitter may not yet tell n² from n³, or
# n from n log n, but an exponent whose whole interval is above 1.5 is not linear.
SUPERLINEAR_K = 1.5
GROWING_K = 0.5


def _superlinear_class(name: str) -> bool:
    growth = REGISTRY.get(name)
    return growth is not None and growth.superlinear


def _growing_class(name: str) -> bool:
    growth = REGISTRY.get(name)
    return growth is not None and growth.growing


def superlinear(fit: Fit | None) -> bool:
    """Confidently n² or worse, or inconclusive with the exponent's interval above 1.5."""
    if fit is None:
        return False
    if fit.confident:
        return _superlinear_class(fit.cls)
    ci = fit.exponent_ci
    return _superlinear_class(fit.best) and ci is not None and ci[0] >= SUPERLINEAR_K


def grows(fit: Fit | None) -> bool:
    """Confidently above constant, or inconclusive with the exponent's interval above 0.5."""
    if fit is None:
        return False
    if fit.confident:
        return _growing_class(fit.cls)
    ci = fit.exponent_ci
    return _growing_class(fit.best) and ci is not None and ci[0] >= GROWING_K


def looks_superlinear(fit: Fit | None) -> bool:
    """The class shown for `fit` is n² or worse, with or without a question mark."""
    return fit is not None and _superlinear_class(fit.cls if fit.confident else fit.best)


def looks_growing(fit: Fit | None) -> bool:
    """The class shown for `fit` grows with n at all, with or without a question mark."""
    return fit is not None and _growing_class(fit.cls if fit.confident else fit.best)


def doubts(fits: Mapping[str, Fit | None], *, flat: bool = False, var: str = "n") -> str:
    """Why a class shown in the table was not taken at its word: a sentence to end a finding.

    A verdict must agree with the class column: when a fit's best guess is n²
    or worse (with `flat`: when it grows at all, for probes where any growth is
    the pathology) but `superlinear` (`grows`) rejected it, this says so with
    the exponent's 95% interval, and what would decide it. "" when nothing
    shown contradicts the verdict.
    """
    parts = []
    undecided = False  # an interval that straddles the bar: more data can decide
    for label, fit in fits.items():
        if flat:
            if fit is None or not looks_growing(fit) or grows(fit):
                continue
            bar = GROWING_K
        else:
            if fit is None or not looks_superlinear(fit) or superlinear(fit):
                continue
            bar = SUPERLINEAR_K
        lean = growth(replace(fit, exponent=None), var).rstrip("?")
        ci, k = fit.exponent_ci, fit.exponent
        if ci is None or k is None:
            undecided = True
            parts.append(f"{label} leans to {lean}, but its exponent could not be pinned down")
        elif ci[1] < bar:
            parts.append(
                f"{label} leans to {lean}, but its exponent k={k:.2g} (95% interval "
                f"{ci[0]:.2g}–{ci[1]:.2g}) stays below {bar}"
            )
        else:
            undecided = True
            parts.append(
                f"{label} leans to {lean}, but its exponent k={k:.2g} has a 95% interval "
                f"of {ci[0]:.2g}–{ci[1]:.2g}, which reaches below {bar}"
            )
    if not parts:
        return ""
    what = "growing" if flat else "super-linear"
    advice = (
        "; a full run (without --quick, or with a larger --budget) can decide" if undecided else ""
    )
    return f". Not judged {what}: {'; '.join(parts)}{advice}"


def counted_per_unit(details: Mapping[str, Any]) -> float | None:
    """Page faults per unit of n from the runner's counted runs (`Variant.count_sizes`):
    the rise between the smallest and the largest counted size over their difference;
    None when nothing was counted."""
    sizes, faults = details.get("count_sizes"), details.get("count_faults")
    if not (isinstance(sizes, list) and isinstance(faults, list)
            and len(sizes) == len(faults) >= 2 and sizes[-1] > sizes[0]):
        return None
    return (float(faults[-1]) - float(faults[0])) / (float(sizes[-1]) - float(sizes[0]))


def counted_first(counted: str, timed: str = "") -> str:
    """A table cell led by what decided the verdict: "<counted> (counted)", then the timing
    beside it as "; timed: <timed>" (left out when empty or "—"). A judge whose count
    decided passes `timed` only where it cannot contradict the verdict, and otherwise
    says the timing in its finding (the table's class is the verdict's)."""
    tail = f"; timed: {timed}" if timed and timed != "—" else ""
    return f"{counted} (counted){tail}"


def fmt_s(v: float | None) -> str:
    """Seconds in the unit that reads best (3 significant digits)."""
    if v is None:
        return "—"
    a = abs(v)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if a >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v / 1e-9:.3g} ns"



def ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None when either is unknown or b is not positive."""
    if a is None or b is None or b <= 0:
        return None
    return a / b
