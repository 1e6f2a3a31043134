"""Probe `clock`: what one `time()` costs, three ways.

Workload: a helper calls time() n times by one of three routes — `vdso`
(libc's time(), which glibc binds to the vDSO), `syscall` (syscall(SYS_time),
a real kernel entry) and `vsyscall` (a call to the legacy fixed address
0xffffffffff600400, what very old static binaries do). The vsyscall route runs
only when /proc/self/maps shows the page; the helper also catches SIGSEGV and
exits 77, so a missing page reads "not available" rather than a crash.

Sizes: per route, five sizes spread so the largest does tens of ms of calls.
Cost per call is the slope of cpu_s (user + sys: immune to other tenants)
against n (the linear candidate's b), and
faults per call the slope of perf's page_faults (emulated vsyscalls fault in
the page-fault handler before rusage counts anything, so only perf sees them;
without perf, minor_faults is used and the vsyscall faults read as zero).

Pathological: a route whose cost grows faster than n. Slow: the vDSO costs
more than half a real syscall (the vDSO is falling back to the kernel), or a
vsyscall call costs more than 10× a vDSO call (xonly/emulate mode traps every
call). Mode comes from /proc/self/maps and `vsyscall=` on the command line.
Where the vsyscall route's faults were counted (and the time did not already
decide), the table leads with the count ("vsyscall faults n (counted)", "vsyscall
1 fault per call (counted)"), the timing after it; `numbers` carries
`vsyscall_faults_per_call_counted`.
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
    ratio,
    why_skipped,
)
from quadscope.doctor.details import ClockDetails

EXIT_UNAVAILABLE = 77

SOURCE = r"""
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef time_t (*qs_time_fn)(time_t *);
static sigjmp_buf qs_env;
static void qs_on_fault(int sig) { (void)sig; siglongjmp(qs_env, 1); }

static int qs_vsyscall_mapped(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "[vsyscall]")) { found = 1; break; }
    fclose(f);
    return found;
}

/* usage: qs-doctor-clock N vdso|syscall|vsyscall */
int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s N vdso|syscall|vsyscall\n", argv[0]); return 2; }
    long n = atol(argv[1]);
    const char *way = argv[2];
    volatile long sink = 0;
    if (strcmp(way, "vdso") == 0) {
        for (long i = 0; i < n; i++) sink += (long)time(NULL);
    } else if (strcmp(way, "syscall") == 0) {
        for (long i = 0; i < n; i++) sink += syscall(SYS_time, NULL);
    } else if (strcmp(way, "vsyscall") == 0) {
        if (!qs_vsyscall_mapped()) {
            fprintf(stderr, "the vsyscall page is not mapped (vsyscall=none)\n");
            return 77;
        }
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = qs_on_fault;
        sigaction(SIGSEGV, &sa, NULL);
        sigaction(SIGBUS, &sa, NULL);
        if (sigsetjmp(qs_env, 1)) {
            fprintf(stderr, "calling the vsyscall page faulted (SIGSEGV): not available\n");
            return 77;
        }
        qs_time_fn fn = (qs_time_fn)0xffffffffff600400UL;
        for (long i = 0; i < n; i++) sink += (long)fn(NULL);
    } else {
        fprintf(stderr, "unknown way %s\n", way);
        return 2;
    }
    return (int)(sink & 0);
}
"""

HELPER = Helper("qs-doctor-clock", SOURCE)

# Sizes per route: the largest is tens of ms at the costs seen on a 2-core VM
# (measured: vDSO 3.4 ns, syscall 0.13 µs, xonly-emulated vsyscall 0.54 µs
# and one perf page fault per call).
_SIZES: dict[bool, dict[str, tuple[int, ...]]] = {
    False: {
        "vdso": (500_000, 1_000_000, 2_000_000, 4_000_000, 8_000_000),
        "syscall": (12_500, 25_000, 50_000, 100_000, 200_000),
        "vsyscall": (5_000, 10_000, 20_000, 40_000, 80_000),
    },
    True: {
        "vdso": (250_000, 500_000, 1_000_000, 2_000_000, 4_000_000),
        "syscall": (6_250, 12_500, 25_000, 50_000, 100_000),
        "vsyscall": (2_500, 5_000, 10_000, 20_000, 40_000),
    },
}
WAYS = ("vdso", "syscall", "vsyscall")
# The vsyscall route's page faults are counted at these two sizes before any sweep
# (`Variant.count_sizes`): an emulated call faults once, whatever the timing reads.
COUNT_SIZES = (1_000, 11_000)
FAULTS_PER_CALL = 0.5  # counted faults per call above this: each call traps


@dataclass(frozen=True, slots=True)
class ClockProbe:
    name: str = "clock"
    describe: str = "time() via the vDSO, a real syscall and the legacy vsyscall page"
    weight: float = 1.5

    def plan(self, quick: bool, machine: Mapping[str, Any]) -> ProbePlan:
        unavailable: dict[str, str] = {}
        ways = list(WAYS)
        if machine.get("vsyscall_mode", "") == "none":
            ways.remove("vsyscall")
            unavailable["vsyscall"] = "the vsyscall page is not mapped (vsyscall=none)"
        return HELPER.plan(
            (HELPER.variant(way, "{n}", way, sizes=_SIZES[quick][way], repeat=3 if quick else 5,
                            perf=True, count_sizes=COUNT_SIZES if way == "vsyscall" else ())
             for way in ways),
            unavailable,
        )

    def judge(self, evidence: Evidence) -> ProbeResult:
        mode = str(evidence.facts.get("vsyscall_mode", "")) or "unknown"
        param = str(evidence.facts.get("vsyscall_param", ""))
        mode_text = f"vsyscall={mode}" + (f" (boot: vsyscall={param})" if param else " (default)")
        walls = cost_fits(evidence, WAYS)
        cost_s = {w: per_unit(f) for w, f in walls.items()}
        faults = {w: per_unit(fit_of(evidence, w, "page_faults", "minor_faults")) for w in WAYS}
        classes = growths(walls)
        counted = counted_per_unit(evidence.details.get("vsyscall", {}))
        details = ClockDetails(
            vsyscall_mode=mode,
            vsyscall_param=param,
            ns_per_call={w: None if c is None else c * 1e9 for w, c in cost_s.items()},
            faults_per_call=faults,
            classes=classes,
            unavailable=dict(evidence.unavailable),
            numbers={f"{w}_ns_per_call": c * 1e9 for w, c in cost_s.items() if c is not None}
            | ({} if counted is None else {"vsyscall_faults_per_call_counted": counted}),
        )
        ran = [w for w in WAYS if w in evidence.fits]
        measured = f"time() ×n: {', '.join(ran) or 'nothing'}; {mode_text}"
        parts = []
        for w in WAYS:
            if w in ran:
                f = None if counted is not None and w == "vsyscall" else faults[w]
                ftxt = "" if f is None or f < 0.05 else f", {f:.2g} fault{'s' if f >= 1.5 else ''}"
                parts.append(f"{w} {fmt_s(cost_s[w])}{ftxt}")
            elif w in evidence.unavailable:
                parts.append(f"{w} n/a")
        cost = "; ".join(parts) + " per call" if parts else "—"
        if not ran and (counted is None or counted < FAULTS_PER_CALL):
            return ProbeResult.skipped(self.name, measured, why_skipped(evidence, "no route ran"),
                                       details)
        row = Row(self.name, measured, class_cell(classes, ran), cost, details)
        bad = first_superlinear(walls, ran)
        if bad is not None:
            return row.pathological(
                f"time() via {bad} gets slower per call the more it is called "
                f"({classes[bad]}): something in the kernel's time path is "
                "accumulating state; check `dmesg` and the clock source "
                f"({evidence.facts.get('clocksource') or 'unknown'})"
            )
        unsure = doubts({w: walls[w] for w in ran})
        vdso_vs_sys = ratio(cost_s["vdso"], cost_s["syscall"])
        if vdso_vs_sys is not None and vdso_vs_sys > 0.5:
            src = evidence.facts.get("clocksource") or "unknown"
            return row.slow(
                f"the vDSO time() costs {fmt_s(cost_s['vdso'])}, as much as a real syscall "
                f"({fmt_s(cost_s['syscall'])}): the clock source '{src}' is not usable "
                "from user space; switch it to tsc (clocksource=tsc on the kernel command "
                "line) if the hypervisor allows" + unsure
            )
        vsys_vs_vdso = ratio(cost_s["vsyscall"], cost_s["vdso"])
        if counted is not None:  # from here the count decides: the table leads with it
            row = _counted_row(row, counted, cost if ran else "")
        if counted is not None and counted >= FAULTS_PER_CALL:
            timed = (f"; timed, it costs {fmt_s(cost_s['vsyscall'])}"
                     + (f", {vsys_vs_vdso:.0f}× the vDSO" if vsys_vs_vdso is not None else "")
                     if cost_s["vsyscall"] is not None else "")
            return row.slow(
                f"a legacy vsyscall time() takes a page fault on every call and is emulated "
                f"by the kernel (vsyscall={mode}; counted, {_per_call(counted)})"
                f"{timed}: rebuild old static binaries against a current libc (which uses the "
                "vDSO); booting with vsyscall=emulate only helps kernels that still offer it"
            )
        if counted is None and "vsyscall" in ran and vsys_vs_vdso is not None \
                and vsys_vs_vdso > 10:
            f = faults["vsyscall"]
            trap = (
                f"each call takes a page fault ({f:.2g} per call) and is emulated by the kernel"
                if f is not None and f >= 0.5
                else "each call traps into the kernel to be emulated"
            )
            return row.slow(
                f"a legacy vsyscall time() costs {fmt_s(cost_s['vsyscall'])}, "
                f"{vsys_vs_vdso:.0f}× the vDSO, because with vsyscall={mode} {trap}: "
                "rebuild old static binaries against a current libc (which uses the vDSO); "
                "booting with vsyscall=emulate only helps kernels that still offer it" + unsure
            )
        note = (
            f"; the vsyscall route is not available here ({evidence.unavailable['vsyscall']})"
            if "vsyscall" in evidence.unavailable
            else ""
        )
        return row.ok(
            f"time() is cheap here: the vDSO costs {fmt_s(cost_s['vdso'])} per call"
            f"{note}; nothing to do{unsure}"
        )


def _counted_row(timed: Row, faults_per_call: float, timed_cost: str) -> Row:
    """The row whose class and cost cells the vsyscall route's counted faults decide:
    the count first ("vsyscall faults n (counted)", one per call; "1" when calls do
    not fault), the timing after it."""
    traps = faults_per_call >= FAULTS_PER_CALL
    return replace(timed,
                   cls=counted_first(f"vsyscall faults {'n' if traps else '1'}", timed.cls),
                   cost=counted_first(f"vsyscall {_per_call(faults_per_call)}", timed_cost))


def _per_call(faults: float) -> str:
    return f"{faults:.2g} fault{'s' if round(faults, 2) != 1 else ''} per call"


PROBE = ClockProbe()
