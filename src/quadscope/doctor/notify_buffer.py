"""Probe `notify-buffer`: a fresh zeroed buffer per event against one reused buffer.

Workload: a helper handles a fixed number of events (400; 200 with --quick).
For each event the `fresh` loop mmaps a B-byte anonymous buffer, zeroes it
and munmaps it — so every page is a new demand-zero fault — while the `reuse`
loop zeroes one buffer mapped once. Both write every byte; the difference is
the page faults (and the TLB shootdowns of munmap). n is B in KiB, and the
per-event cost is the slope of cpu_s (user + sys) and of minor_faults against
B, divided
by the number of events. Sizes stay below 2 MiB so transparent huge pages
cannot turn 512 faults into one.

Sizes: B = 16 KiB … 1 MiB.

Pathological: either loop grows faster than B. Slow: decided from a count
where one was taken (`Variant.count_sizes`: each variant run once at the
smallest and the largest B before its sweep, its minor faults kept): a fresh
buffer taking SLOW_FAULTS_PER_MIB or more page faults per event per MiB (one
per 4 KiB page is 256), the timing beside it; without a count, the fresh buffer
costing 2× or more the reused one per byte — the pattern to fix in event loops
that allocate per notification. Where counted, the table leads with the count
("faults per event: fresh n (counted)", the faults per event per MiB as the cost),
the timing after it; `numbers` carries `<variant>_faults_per_event_at_1MiB_counted`.
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
    counted_per_unit,
    doubts,
    first_superlinear,
    fit_of,
    fmt_s,
    growths,
    per_unit,
    ran,
    ratio,
    why_skipped,
)
from quadscope.doctor.details import NotifyBufferDetails

EVENTS_FULL = 400
EVENTS_QUICK = 200
SIZES_KIB_FULL = (16, 64, 128, 256, 512, 1024)
SIZES_KIB_QUICK = (16, 64, 256, 1024)
SLOW_RATIO = 2.0
# Counted page faults per event per MiB of buffer (`Variant.count_sizes`) from which a
# fresh buffer is slow: one per 8 KiB; a fresh mapping faults once per 4 KiB page (256).
SLOW_FAULTS_PER_MIB = 128.0
VARIANTS = ("fresh", "reuse")

SOURCE = r"""
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* usage: qs-doctor-notify KIB fresh|reuse EVENTS */
int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: %s KIB fresh|reuse EVENTS\n", argv[0]); return 2; }
    size_t bytes = (size_t)atol(argv[1]) * 1024;
    long events = atol(argv[3]);
    int fresh = strcmp(argv[2], "fresh") == 0;
    volatile unsigned char sink = 0;
    char *buf = NULL;
    if (!fresh) {
        buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buf == MAP_FAILED) { perror("mmap"); return 1; }
    }
    for (long e = 0; e < events; e++) {
        if (fresh) {
            buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (buf == MAP_FAILED) { perror("mmap"); return 1; }
        }
        memset(buf, 0, bytes);
        buf[e % bytes] = (char)e;  /* the "event" */
        sink += (unsigned char)buf[(e * 7) % bytes];
        if (fresh) munmap(buf, bytes);
    }
    return (int)(sink & 0);
}
"""


HELPER = Helper("qs-doctor-notify", SOURCE)


@dataclass(frozen=True, slots=True)
class NotifyBufferProbe:
    name: str = "notify-buffer"
    describe: str = "event loop: fresh zeroed B-byte buffer per event vs one reused buffer"
    weight: float = 1.0
    events_full: int = EVENTS_FULL
    events_quick: int = EVENTS_QUICK

    def plan(self, quick: bool, machine: Mapping[str, Any]) -> ProbePlan:
        sizes = SIZES_KIB_QUICK if quick else SIZES_KIB_FULL
        events = self.events_quick if quick else self.events_full
        return HELPER.plan(
            HELPER.variant(v, "{n}", v, str(events), sizes=sizes, repeat=3 if quick else 5,
                           count_sizes=(sizes[0], sizes[-1]))
            for v in VARIANTS
        )

    def judge(self, evidence: Evidence) -> ProbeResult:
        events = int(evidence.facts.get("events", 0)) or (
            self.events_quick if evidence.facts.get("quick") else self.events_full
        )
        walls = cost_fits(evidence, VARIANTS)
        # per KiB of buffer, per event
        per_kib = {v: _div(per_unit(walls[v]), events) for v in VARIANTS}
        faults_kib = {
            v: _div(per_unit(fit_of(evidence, v, "page_faults", "minor_faults")), events)
            for v in VARIANTS
        }
        at_mib = {v: None if c is None else c * 1024 for v, c in per_kib.items()}
        faults_mib = {v: None if c is None else c * 1024 for v, c in faults_kib.items()}
        x = ratio(per_kib["fresh"], per_kib["reuse"])
        counted = {v: None if (c := counted_per_unit(evidence.details.get(v, {}))) is None
                   else c * 1024 / events for v in VARIANTS}
        classes = growths(walls)
        details = NotifyBufferDetails(
            events=events,
            s_per_event_at_1MiB=at_mib,
            faults_per_event_at_1MiB=faults_mib,
            fresh_over_reuse=x,
            classes=classes,
            numbers={
                f"{v}_us_per_event_at_1MiB": c * 1e6 for v, c in at_mib.items() if c is not None
            } | {f"{v}_faults_per_event_at_1MiB_counted": c
                 for v, c in counted.items() if c is not None},
        )
        measured = f"{events} events, each zeroing a B-byte buffer: fresh mmap vs reused"
        timed = ran(evidence, VARIANTS)
        parts = []
        for v in timed:
            f = faults_mib[v]
            ftxt = "" if f is None else f", {f:.0f} fault{'s' if round(f) != 1 else ''}"
            parts.append(f"{v} {fmt_s(at_mib[v])}{ftxt}")
        cost = "; ".join(parts) + " per event at 1 MiB" if parts else "—"
        row = Row(self.name, measured, class_cell(classes, timed), cost, details)
        bad = first_superlinear(walls, timed)
        if bad is not None:
            return row.pathological(
                f"zeroing a {bad} buffer grows as {classes[bad]} in its size: "
                "page-fault or memset cost rises with the buffer; check transparent huge "
                f"pages ({evidence.facts.get('thp') or 'unknown'}) and memory cgroup limits"
            )
        fresh_faults = counted["fresh"]
        if fresh_faults is not None:  # the count decides: the table leads with it
            timed_cost = "; ".join(f"{v} {fmt_s(at_mib[v])}" for v in timed)
            row = _counted_row(row, fresh_faults, counted["reuse"],
                               f"{timed_cost} per event at 1 MiB" if timed else "")
            reuse = "" if counted["reuse"] is None else f" against {counted['reuse']:.0f} reused"
            timing = ("" if x is None else
                      f"; timed, a fresh buffer costs {x:.1f}× a reused one here "
                      f"({fmt_s(at_mib['fresh'])} vs {fmt_s(at_mib['reuse'])} per event at 1 MiB)")
            if fresh_faults >= SLOW_FAULTS_PER_MIB:
                return row.slow(
                    f"a freshly mapped buffer takes a page fault per page on every event "
                    f"(counted, {fresh_faults:.0f} faults per event per MiB{reuse}){timing}: "
                    "keep one buffer per event loop and reuse it")
            return row.ok(
                f"a fresh buffer per event takes few page faults here (counted, "
                f"{fresh_faults:.0f} per event per MiB{reuse}: huge pages or pre-faulting "
                f"at work){timing}; nothing to do")
        if not timed:
            return ProbeResult.skipped(self.name, measured,
                                       why_skipped(evidence, "the helper did not run"), details)
        unsure = doubts({v: walls[v] for v in timed})
        if x is not None and x >= SLOW_RATIO:
            return row.slow(
                f"a freshly mapped buffer per event costs {x:.1f}× a reused one here "
                f"({fmt_s(at_mib['fresh'])} vs {fmt_s(at_mib['reuse'])} per event at 1 MiB, "
                "one page fault per 4 KiB): keep one buffer per event loop and reuse it" + unsure
            )
        xt = "" if x is None else f" ({x:.1f}× the reused one)"
        return row.ok(
            f"a fresh buffer per event costs little more than a reused one here{xt}; "
            f"nothing to do{unsure}"
        )


def _counted_row(timed: Row, fresh: float, reuse: float | None, timed_cost: str) -> Row:
    """The row whose class and cost cells the counted faults decide: "faults per event:
    fresh n (counted)" (a fault per page or so: they grow with the buffer; "1" when few),
    the counts per event per MiB in the cost, the timing after each."""
    grows = "n" if fresh >= SLOW_FAULTS_PER_MIB else "1"
    both = f"fresh {fresh:.0f}" + ("" if reuse is None else f", reuse {reuse:.0f}")
    return replace(timed,
                   cls=counted_first(f"faults per event: fresh {grows}", timed.cls),
                   cost=counted_first(f"{both} faults per event per MiB", timed_cost))


def _div(v: float | None, d: int) -> float | None:
    return None if v is None or d <= 0 else v / d


PROBE = NotifyBufferProbe()
