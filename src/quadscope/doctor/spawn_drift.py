"""Probe `spawn-drift`: the k-th launch of a program that probes for a free name.

Workload: a helper creates one file in a scratch directory and exits. The
`probe` variant looks for the first free name among `name.0`, `name.1`, … with
open(O_CREAT|O_EXCL), so its k-th launch makes k failed attempts first (the
pattern of log rotation, `file (1).txt`, numbered core dumps); the `fixed`
variant names its file by time and pid and never collides. Both run in
accumulate mode (`mode="accumulate"`, `runs=K`), one launch after another in
the same directory, and cpu_s (user + sys, immune to other tenants) is
fitted against the launch index i.

Sizes: K = 1000 launches (400 with --quick).

Pathological: the probing program's cost grows with i. Decided from a count
where one was taken (`Variant.count`: each variant's system calls counted under
strace in one launch before its sweep and one after, `doctor.counts`): the
names a launch found taken (its failed O_EXCL creates) at launch 1 and at the
last launch; growing by at least GROWS_PER_LAUNCH per launch is the pathology,
whatever the timing reads (a busy machine's timing read "pathological" and
"ok … no growth visible" minutes apart; the count is 0 and K every time). The
timing stays beside it: the cost of one extra existing name, fitted on cpu_s.
Without a count (no strace) the timing decides, as before: any class above
constant. The fixed program growing too means file creation itself slows as
the directory fills (the file system, not the naming): a timing-only cause,
judged only when nothing was counted, else said as an aside.

Table: where the count decided, the class cell is the count's ("names probed at
launch i: probe i, fixed 0 (counted)") and the cost the names probed per launch,
the timing after each ("timed: …") only where every timed class agrees with its
count (i for a growing count, flat for a flat one); otherwise the finding says
the timed classes as not judged, so the row never shows a class against its verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from quadscope.doctor.base import (
    Evidence,
    Helper,
    ProbePlan,
    ProbeResult,
    Row,
    class_cell,
    cost_fits,
    counted_first,
    doubts,
    fmt_s,
    grows,
    growth,
    growths,
    looks_growing,
    per_unit,
)
from quadscope.doctor.details import SpawnDriftDetails
from quadscope.model import Fit

SOURCE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* usage: qs-doctor-drift probe|fixed DIR */
int main(int argc, char **argv) {
    char path[4096];
    if (argc < 3) { fprintf(stderr, "usage: %s probe|fixed DIR\n", argv[0]); return 2; }
    if (strcmp(argv[1], "probe") == 0) {
        for (long k = 0;; k++) {
            snprintf(path, sizeof path, "%s/name.%ld", argv[2], k);
            int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
            if (fd >= 0) { close(fd); return 0; }
            if (errno != EEXIST) { perror(path); return 1; }
        }
    }
    if (strcmp(argv[1], "fixed") == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(path, sizeof path, "%s/name.%lld.%09ld.%d", argv[2],
                 (long long)ts.tv_sec, ts.tv_nsec, (int)getpid());
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0) { perror(path); return 1; }
        close(fd);
        return 0;
    }
    fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 2;
}
"""

HELPER = Helper("qs-doctor-drift", SOURCE)
LAUNCHES_FULL = 1000
LAUNCHES_QUICK = 400
VARIANTS = ("probe", "fixed")
GROWS_PER_LAUNCH = 0.5  # names probed per launch: the probing helper's is 1, the fixed one's 0


@dataclass(frozen=True, slots=True)
class Counted:
    """A variant's names probed (failed creates) at its first and last counted launch."""

    first_launch: int
    last_launch: int
    first: int
    last: int

    @property
    def per_launch(self) -> float:
        return (self.last - self.first) / max(self.last_launch - self.first_launch, 1)

    @property
    def grows(self) -> bool:
        return self.per_launch >= GROWS_PER_LAUNCH

    def shown(self) -> str:
        """Names probed at launch i, as the table's class: "i" (one more per launch),
        "2·i", or the flat count ("0", "0–3")."""
        if self.grows:
            per = self.per_launch
            return "i" if round(per, 1) == 1.0 else f"{per:.2g}·i"
        return str(self.last) if self.first == self.last else f"{self.first}–{self.last}"

    def text(self) -> str:
        return (f"{self.first} name{'s' if self.first != 1 else ''} probed at launch "
                f"{self.first_launch}, {self.last} at launch {self.last_launch}")


def counted(details: Mapping[str, Any]) -> Counted | None:
    """The count the runner took for a variant (`Variant.count`), None when none was."""
    launches, creates = details.get("count_launches"), details.get("failed_creates")
    if not (isinstance(launches, list) and isinstance(creates, list)
            and len(launches) == 2 and len(creates) == 2):
        return None
    return Counted(int(launches[0]), int(launches[1]), int(creates[0]), int(creates[1]))


@dataclass(frozen=True, slots=True)
class SpawnDriftProbe:
    name: str = "spawn-drift"
    describe: str = "k-th launch of a program that probes name.0, name.1, … for a free name"
    weight: float = 2.0

    def plan(self, quick: bool, machine: Mapping[str, Any]) -> ProbePlan:
        runs = LAUNCHES_QUICK if quick else LAUNCHES_FULL
        return HELPER.plan(
            HELPER.variant(v, v, "{tmp}", mode="accumulate", runs=runs, repeat=1, warmup=0,
                           metrics=("cpu_s",), count=True)
            for v in VARIANTS
        )

    def judge(self, evidence: Evidence) -> ProbeResult:
        fits = cost_fits(evidence, VARIANTS)
        probe, fixed = fits["probe"], fits["fixed"]
        per_name = per_unit(probe)
        fixed_per = per_unit(fixed)
        launches = probe.n_points if probe is not None else 0
        counts = {v: counted(evidence.details.get(v, {})) for v in VARIANTS}
        numbers = {} if per_name is None else {"probe_us_per_existing_name": per_name * 1e6}
        numbers.update({f"{v}_names_probed_per_launch": c.per_launch
                        for v, c in counts.items() if c is not None})
        classes = growths(fits, "i")
        details = SpawnDriftDetails(
            s_per_existing_name=per_name,
            fixed_s_per_launch_index=fixed_per,
            classes=classes,
            numbers=numbers,
        )
        measured = "launch i of a name-probing program vs a time+pid-naming one"
        if launches:
            measured += f" ({launches} launches)"
        if "probe" not in evidence.fits:
            reason = evidence.unavailable.get("probe", "the probing program did not run")
            return ProbeResult.skipped(self.name, measured, reason, details)
        row = Row(self.name, measured, class_cell(classes, VARIANTS),
                  f"{fmt_s(per_name)} per existing name", details)
        fs = evidence.facts.get("tmp_fs") or "this file system"
        if counts["probe"] is not None:
            return _from_count(row, counts, per_name, fits, fs)
        if grows(probe):
            at = fmt_s(per_name * 1e4) if per_name is not None else "—"
            also = (
                f"; even time+pid naming slows by {fmt_s(fixed_per)} per file present on {fs}"
                if grows(fixed)
                else ""
            )
            return row.pathological(
                f"a program that probes name.0, name.1, … for a free name pays "
                f"{fmt_s(per_name)} more on every launch ({at} per launch once 10⁴ files "
                f"exist): name files by time and pid, or use mkstemp/O_TMPFILE{also}"
                + doubts({"fixed": fixed}, flat=True, var="i")
            )
        if grows(fixed):
            return row.pathological(
                f"even a program that never collides gets slower as its directory fills "
                f"({classes['fixed']} in files present, "
                f"{fmt_s(fixed_per)} per file): file creation on {fs} scales with directory "
                "size; keep such directories small or use a hashed layout"
            )
        return row.ok(
            "no launch-to-launch growth was visible within this many launches: probing "
            "for a free name is cheap on this file system at this scale"
            + doubts(fits, flat=True, var="i")
        )


def _from_count(timed: Row, counts: Mapping[str, Counted | None], per_name: float | None,
                fits: Mapping[str, Fit | None], fs: str) -> ProbeResult:
    """The verdict from the names each launch probed (the count), timing beside it.

    The table's class and cost lead with the count ("names probed at launch i:
    probe i, fixed 0"); the timed classes follow only where each agrees with its
    count (a growing count timed as i, a flat one timed flat), else the finding
    says them as timing not judged, so the class shown is the verdict's."""
    probe_count, fixed_count = counts["probe"], counts["fixed"]
    assert probe_count is not None
    fixed = fits["fixed"]
    aside = (f". Aside, timing alone (not judged): even time+pid naming grew as "
             f"{growth(fixed, 'i')} in files present on {fs}"
             if grows(fixed) and (fixed_count is None or not fixed_count.grows) else "")
    counted = {v: c for v, c in counts.items() if c is not None}
    agrees = all(_agrees(fits[v], c) for v, c in counted.items())
    timed_cls = ", ".join(f"{v} {growth(fits[v], 'i')}" for v in VARIANTS
                          if fits[v] is not None and not (aside and v == "fixed"))
    shown = ", ".join(f"{v} {c.shown()}" for v, c in counted.items())
    more = ", ".join(f"{v} +{c.per_launch:.2g}" for v, c in counted.items())
    row = replace(
        timed,
        cls=counted_first(f"names probed at launch i: {shown}", timed_cls if agrees else ""),
        cost=counted_first(f"{more} names probed per launch",
                           f"{fmt_s(per_name)} per existing name"
                           if per_name is not None and per_name > 0 else ""),
    )
    timing = (f"; timed, each name probed costs {fmt_s(per_name)} here"
              if per_name is not None and per_name > 0
              else "; timed, no cost per name stood out of the noise")
    if not agrees and timed_cls:
        timing += f" (CPU time per launch, not judged: {timed_cls})"
    if probe_count.grows:
        return row.pathological(
            f"a program that probes name.0, name.1, … for a free name does more work on "
            f"every launch: counted, {probe_count.text()} ({probe_count.per_launch:.2g} "
            f"more per launch){timing}: name files by time and pid, or use "
            f"mkstemp/O_TMPFILE{aside}")
    if fixed_count is not None and fixed_count.grows:
        return row.pathological(
            f"even time+pid naming collides more on every launch: counted, "
            f"{fixed_count.text()}: the clock or pid repeats here; add a random suffix")
    return row.ok(
        f"counted, the probing program found a free name at once on every launch "
        f"({probe_count.text()}): nothing accumulates here{timing}{aside}")


def _agrees(fit: Fit | None, count: Counted) -> bool:
    """The timed class says what the count does: linear in i where the count grows (one
    name more per launch), not growing where it is flat; no fit says nothing against it."""
    if fit is None:
        return True
    if count.grows:
        return fit.confident and fit.cls == "n"
    return not looks_growing(fit)


PROBE = SpawnDriftProbe()
