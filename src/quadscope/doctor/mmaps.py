"""Probe `mmap`: placing n small anonymous mappings, three ways, against a quadratic reference.

Workload: a helper makes n one-page anonymous mappings and exits (so exit's
teardown of n VMAs is in the cost too). Protections alternate between
read-only and read-write so neighbours cannot merge into one VMA and the
kernel really tracks n areas. Costs are slopes of cpu_s (user + sys). Ways:
`default` (mmap(NULL, …): the kernel picks the address), `hint` (an address
hint walking down from the top, one page of gap each), `noreplace`
(MAP_FIXED_NOREPLACE at a cursor walking down, stepping past any EEXIST), and
`firstfit`, a user-space first-fit allocator that scans its sorted list of
regions from the top for the highest hole — quadratic by construction, the
reference that shows what n² looks like at these sizes.

Sizes: n = 2,000 … 30,000 (500 … 8,000 with --quick); vm.max_map_count
(65,530 by default) bounds n.

Pathological: a kernel way grows as n² or worse (placement scans a list, as
kernels before 3.x could). If the reference itself is not recognised as
superlinear the finding says the sizes were too small to tell.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from quadscope.doctor.base import (
    Evidence,
    Helper,
    ProbePlan,
    ProbeResult,
    Row,
    class_cell,
    cost_fits,
    doubts,
    first_superlinear,
    fmt_s,
    growth,
    growths,
    per_unit,
    ran,
    superlinear,
    why_skipped,
)
from quadscope.doctor.details import MmapDetails

KERNEL_WAYS = ("default", "hint", "noreplace")
WAYS = (*KERNEL_WAYS, "firstfit")
SIZES_FULL = (2_000, 4_000, 8_000, 16_000, 30_000)
SIZES_QUICK = (500, 1_000, 2_000, 4_000, 8_000)

SOURCE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static int qs_prot(long i) { return (i & 1) ? PROT_READ : PROT_READ | PROT_WRITE; }

/* usage: qs-doctor-mmap N default|hint|noreplace|firstfit */
int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s N WAY\n", argv[0]); return 2; }
    long n = atol(argv[1]);
    const char *way = argv[2];
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (strcmp(way, "default") == 0) {
        for (long i = 0; i < n; i++)
            if (mmap(NULL, pg, qs_prot(i), MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED) {
                perror("mmap"); return 1;
            }
        return 0;
    }
    /* Start well below where the kernel put a fresh mapping, away from the stack. */
    char *probe = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (probe == MAP_FAILED) { perror("mmap"); return 1; }
    uintptr_t top = ((uintptr_t)probe - (1u << 30)) & ~(pg - 1);
    if (strcmp(way, "hint") == 0) {
        for (long i = 0; i < n; i++) {
            void *want = (void *)(top - (uintptr_t)i * 2 * pg);
            if (mmap(want, pg, qs_prot(i), MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED) {
                perror("mmap"); return 1;
            }
        }
        return 0;
    }
    if (strcmp(way, "noreplace") == 0) {
        uintptr_t cur = top;
        for (long i = 0; i < n; i++) {
            for (;;) {
                void *p = mmap((void *)cur, pg, qs_prot(i),
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
                if (p == (void *)cur) break;
                if (p != MAP_FAILED) {  /* an old kernel took it as a hint */
                    fprintf(stderr, "MAP_FIXED_NOREPLACE is not supported by this kernel\n");
                    return 77;
                }
                if (errno != EEXIST) { perror("mmap"); return 1; }
                cur -= pg;
            }
            cur -= 2 * pg;
        }
        return 0;
    }
    if (strcmp(way, "firstfit") == 0) {
        /* regions sorted from the top down, packed: the highest hole is always
           below the last one, so every allocation scans all before it. */
        uintptr_t *lo = malloc(sizeof *lo * (size_t)n), *hi = malloc(sizeof *hi * (size_t)n);
        long count = 0;
        volatile uintptr_t sink = 0;
        if (!lo || !hi) return 1;
        for (long i = 0; i < n; i++) {
            uintptr_t above = top, at = 0;
            long j = 0;
            for (; j < count; j++) {
                if (above - hi[j] >= pg) { at = above - pg; break; }
                above = lo[j];
            }
            if (j == count) at = above - pg;
            /* insert at j keeping the order (j == count here: append) */
            for (long k = count; k > j; k--) { lo[k] = lo[k - 1]; hi[k] = hi[k - 1]; }
            lo[j] = at;
            hi[j] = at + pg;
            count++;
            sink += at;
        }
        return (int)(sink & 0);
    }
    fprintf(stderr, "unknown way %s\n", way);
    return 2;
}
"""


HELPER = Helper("qs-doctor-mmap", SOURCE)


@dataclass(frozen=True, slots=True)
class MmapProbe:
    name: str = "mmap"
    describe: str = "n small anonymous mappings: default, hinted, MAP_FIXED_NOREPLACE"
    weight: float = 1.0

    def plan(self, quick: bool, machine: Mapping[str, Any]) -> ProbePlan:
        sizes = SIZES_QUICK if quick else SIZES_FULL
        return HELPER.plan(
            HELPER.variant(way, "{n}", way, sizes=sizes, repeat=3 if quick else 5,
                           metrics=("cpu_s",))
            for way in WAYS
        )

    def judge(self, evidence: Evidence) -> ProbeResult:
        walls = cost_fits(evidence, WAYS)
        per_map = {w: per_unit(walls[w]) for w in WAYS}
        kernel = ran(evidence, KERNEL_WAYS)
        classes = growths(walls)
        details = MmapDetails(
            s_per_mapping=per_map,
            classes=classes,
            numbers={
                f"{w}_us_per_mapping": v * 1e6
                for w, v in per_map.items()
                if v is not None and w in KERNEL_WAYS
            },
        )
        measured = "n one-page anonymous mappings (default / hint / noreplace; first-fit ref)"
        if not kernel:
            return ProbeResult.skipped(self.name, measured,
                                       why_skipped(evidence, "the helper did not run"), details)
        row = Row(self.name, measured, class_cell(classes, ran(evidence, WAYS)),
                  "; ".join(f"{w} {fmt_s(per_map[w])}" for w in kernel) + " per mapping",
                  details)
        ref_ok = superlinear(walls["firstfit"])
        caveat = (
            f" (the first-fit reference grows as {growth(walls['firstfit'])}, as a list "
            "scan must)"
            if ref_ok
            else " (the first-fit reference was not recognised as quadratic at these sizes, "
            "so a mild superlinear cost could go unseen)"
        )
        bad = first_superlinear(walls, kernel)
        if bad is not None:
            return row.pathological(
                f"placing n mappings the {bad} way grows as {growth(walls[bad])}, like the "
                "first-fit scan: each mmap searches a list of every mapping; programs with "
                "many mappings (allocators, JITs, GC heaps) should map fewer, larger areas"
            )
        if any(w in evidence.unavailable for w in KERNEL_WAYS):
            missing = [w for w in KERNEL_WAYS if w in evidence.unavailable]
            caveat += f"; not measured: {', '.join(missing)}"
        return row.ok(
            f"the kernel places mappings in about {fmt_s(per_map['default'])} each, "
            f"with no n² growth in how many exist{caveat}; nothing to do"
            + doubts({w: walls[w] for w in kernel})
        )


PROBE = MmapProbe()
