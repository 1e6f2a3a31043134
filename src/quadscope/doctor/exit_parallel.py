"""Probe `exit-parallel`: create hundreds of processes, then kill them all at once.

Workload: a helper forks n children one by one (each signals "ready" on a pipe
before the next fork), then SIGKILLs them all and reaps them with waitpid. It
prints one JSON line with its own timings: creation and destruction per
process (µs) and the longest stall (ms) — the longest wait for the next child
to be reaped, counted from the kill. Three kinds of children: `plain`; `libs`,
forked after the helper dlopen()ed every common shared library it can find
(each child inherits all their mappings, so fork copies and exit tears down
many more VMAs); `mem`, where each child maps and touches 2 MiB before saying
ready (exit frees the pages). The sweep fits wall_s against n for the class;
one direct run at the largest n gives the helper's printed numbers (the
executor discards stdout).

Sizes: n = 40 … 320 (32 … 256 with --quick), no warm-up run.

Pathological: any kind's total cost grows faster than n (exit or fork
contending on a global lock). Slow: a stall of 50 ms or more while reaping —
long enough to freeze a service that kills a process tree.
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
    ratio,
    why_skipped,
)
from quadscope.doctor.details import ExitParallelDetails

# ~0.15-1.1 ms to create a plain child and ~2.6 ms a 2 MiB one on a 2-core VM, so
# these keep a sweep of all three kinds near 15 s (~5 s with --quick, measured).
SIZES_FULL = (40, 80, 160, 240, 320)
SIZES_QUICK = (32, 64, 128, 256)
KINDS = ("plain", "libs", "mem")
SLOW_STALL_MS = 50.0

# sonames, not paths: dlopen searches the usual places; those absent are skipped
# and the helper reports how many loaded.
_LIBS: tuple[str, ...] = (
    "libm.so.6",
    "libz.so.1",
    "libbz2.so.1.0",
    "liblzma.so.5",
    "libzstd.so.1",
    "libexpat.so.1",
    "libffi.so.8",
    "libgmp.so.10",
    "libsqlite3.so.0",
    "libssl.so.3",
    "libcrypto.so.3",
    "libstdc++.so.6",
    "libgcc_s.so.1",
    "libuuid.so.1",
    "libcrypt.so.1",
    "libresolv.so.2",
    "libreadline.so.8",
    "libncursesw.so.6",
    "libtinfo.so.6",
    "libcurl.so.4",
    "libxml2.so.2",
    "libgnutls.so.30",
    "libidn2.so.0",
    "libunistring.so.2",
    "libp11-kit.so.0",
    "libtasn1.so.6",
    "libnettle.so.8",
    "libhogweed.so.6",
    "libselinux.so.1",
    "libpcre2-8.so.0",
    "libblkid.so.1",
    "libmount.so.1",
    "libcap.so.2",
    "libacl.so.1",
    "libattr.so.1",
    "libkrb5.so.3",
    "libgssapi_krb5.so.2",
    "libk5crypto.so.3",
    "libcom_err.so.2",
    "libnghttp2.so.14",
    "libssh2.so.1",
    "libpsl.so.5",
    "libsasl2.so.2",
    "libbrotlidec.so.1",
    "libjpeg.so.62",
    "libpng16.so.16",
    "libfreetype.so.6",
    "libgomp.so.1",
    "libquadmath.so.0",
    "libgfortran.so.5",
    "libopenblas.so.0",
    "libsystemd.so.0",
    "libudev.so.1",
    "libdb-5.3.so",
    "libgdbm.so.6",
    "libmpfr.so.6",
    "libmpc.so.3",
    "libisl.so.23",
    "libelf.so.1",
    "libdw.so.1",
)

SOURCE = (
    r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *qs_libs[] = { @LIBS@ NULL };

static double qs_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int qs_count_maps(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    int c, n = 0;
    if (!f) return -1;
    while ((c = fgetc(f)) != EOF) if (c == '\n') n++;
    fclose(f);
    return n;
}

/* usage: qs-doctor-exitpar N plain|libs|mem */
int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s N plain|libs|mem\n", argv[0]); return 2; }
    int n = atoi(argv[1]);
    const char *kind = argv[2];
    int libs = 0, mem = strcmp(kind, "mem") == 0;
    size_t mem_bytes = 2u << 20;
    if (strcmp(kind, "libs") == 0)
        for (int i = 0; qs_libs[i]; i++)
            if (dlopen(qs_libs[i], RTLD_NOW | RTLD_LOCAL)) libs++;
    int maps = qs_count_maps();
    pid_t *pids = calloc((size_t)n, sizeof *pids);
    int ready[2];
    if (!pids || pipe(ready)) { perror("setup"); return 1; }
    double t0 = qs_now();
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            for (int j = 0; j < i; j++) kill(pids[j], SIGKILL);
            while (wait(NULL) > 0) {}
            return 1;
        }
        if (pid == 0) {
            if (mem) {
                char *p = mmap(NULL, mem_bytes, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (p != MAP_FAILED) memset(p, 1, mem_bytes);
            }
            (void)!write(ready[1], "r", 1);
            for (;;) pause();
        }
        pids[i] = pid;
        char c;
        while (read(ready[0], &c, 1) < 0 && errno == EINTR) {}
    }
    double t1 = qs_now();
    for (int i = 0; i < n; i++) kill(pids[i], SIGKILL);
    double t2 = qs_now(), last = t2, stall = 0;
    for (int i = 0; i < n; i++) {
        while (waitpid(-1, NULL, 0) < 0 && errno == EINTR) {}
        double t = qs_now();
        if (t - last > stall) stall = t - last;
        last = t;
    }
    double t3 = qs_now();
    printf("{\"n\": %d, \"kind\": \"%s\", \"libs_loaded\": %d, \"maps\": %d, "
           "\"create_us_per_proc\": %.3f, \"kill_us_per_proc\": %.3f, "
           "\"destroy_us_per_proc\": %.3f, \"max_stall_ms\": %.3f}\n",
           n, kind, libs, maps, (t1 - t0) * 1e6 / n, (t2 - t1) * 1e6 / n,
           (t3 - t1) * 1e6 / n, stall * 1e3);
    return 0;
}
"""
).replace("@LIBS@", " ".join(f'"{lib}",' for lib in _LIBS))


HELPER = Helper("qs-doctor-exitpar", SOURCE)


@dataclass(frozen=True, slots=True)
class ExitParallelProbe:
    name: str = "exit-parallel"
    describe: str = "fork hundreds of processes, kill them all at once, time creation and exit"
    weight: float = 2.0

    def plan(self, quick: bool, machine: Mapping[str, Any]) -> ProbePlan:
        sizes = SIZES_QUICK if quick else SIZES_FULL
        return HELPER.plan(
            HELPER.variant(kind, "{n}", kind, sizes=sizes, repeat=2 if quick else 3, warmup=0,
                           metrics=("wall_s", "cpu_s"),
                           detail=HELPER.argv(str(max(sizes)), kind), detail_n=max(sizes))
            for kind in KINDS
        )

    def judge(self, evidence: Evidence) -> ProbeResult:
        walls = cost_fits(evidence, KINDS)
        nums = {k: dict(evidence.details.get(k, {})) for k in KINDS}
        ran = [k for k in KINDS if k in evidence.fits or nums[k]]
        numbers: dict[str, float] = {}
        for k in KINDS:
            for key in ("create_us_per_proc", "destroy_us_per_proc", "max_stall_ms"):
                if isinstance(nums[k].get(key), int | float):
                    numbers[f"{k}_{key}"] = float(nums[k][key])
        classes = growths(walls)
        details = ExitParallelDetails(helper=nums, classes=classes, numbers=numbers)
        n_max = max((int(v.get("n", 0)) for v in nums.values()), default=0)
        measured = f"fork n children, SIGKILL all, reap (n ≤ {n_max or '?'}; plain/libs/mem)"
        if not ran:
            return ProbeResult.skipped(self.name, measured,
                                       why_skipped(evidence, "the helper did not run"), details)

        def us(k: str, key: str) -> float | None:
            v = numbers.get(f"{k}_{key}")
            return None if v is None else v * 1e-6

        cost = "; ".join(
            f"{k} +{fmt_s(us(k, 'create_us_per_proc'))}/−{fmt_s(us(k, 'destroy_us_per_proc'))}"
            for k in ran
        ) + " per process"
        row = Row(self.name, measured, class_cell(classes, ran), cost, details)
        bad = first_superlinear(walls, ran)
        if bad is not None:
            return row.pathological(
                f"creating and killing {bad} processes grows as {growth(walls[bad])} in their "
                "number: exit or fork contends on a shared lock here; kill large process "
                "trees in batches and check the kernel for known exit-path regressions"
            )
        unsure = doubts({k: walls[k] for k in ran})
        stalls = {k: numbers.get(f"{k}_max_stall_ms") for k in ran}
        worst = max(
            (k for k in ran if stalls[k] is not None), key=lambda k: stalls[k] or 0.0, default=None
        )
        if worst is not None and (stalls[worst] or 0.0) >= SLOW_STALL_MS:
            return row.slow(
                f"killing {nums[worst].get('n', 'many')} {worst} processes at once stalled "
                f"the reaper for {stalls[worst]:.0f} ms here: stop big process trees in "
                "batches (or with a cgroup kill) rather than with one signal to all" + unsure
            )
        libs_x = ratio(us("libs", "destroy_us_per_proc"), us("plain", "destroy_us_per_proc"))
        mem_x = ratio(us("mem", "destroy_us_per_proc"), us("plain", "destroy_us_per_proc"))
        extra = []
        if libs_x is not None:
            extra.append(
                f"children with {nums['libs'].get('libs_loaded', '?')} libraries die "
                f"{libs_x:.1f}× slower"
            )
        if mem_x is not None:
            extra.append(f"with 2 MiB each {mem_x:.1f}× slower")
        tail = f" ({'; '.join(extra)})" if extra else ""
        stall_txt = f"; longest stall {stalls[worst]:.1f} ms" if worst is not None else ""
        return row.ok(
            f"no kind's creation and mass exit grows as n² or worse in the number of "
            f"processes here{tail}{stall_txt}; nothing to do{unsure}"
        )


PROBE = ExitParallelProbe()
