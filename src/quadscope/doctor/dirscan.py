"""Probe `dirscan`: summing the sizes in a directory against the number of files.

Workload: for each size n a setup step fills a fresh directory with n names:
64 distinct files of assorted sizes (ftruncate, so nothing is written) and
hard links to them for the rest, because creating an inode can cost ~0.5 ms on
a VM's disk (10⁵ files would take a minute) while a link costs ~20 µs. The
setup prints what one file and one link cost to create. The swept helper opens
the directory, readdir()s every entry, fstatat()s it and adds up st_size —
what `du -s` or a build tool's up-to-date check does. The directories live in
the temp directory, whose file system is reported. The cost per file is the
slope of cpu_s (user + sys).

Sizes: n = 1,000 … 50,000 files (500 … 10,000 with --quick).

Pathological: the scan grows faster than n (a directory format without an
index, or a file system that re-reads the directory per lookup). Slow: more
than 20 µs per file to scan, where a local file system with a warm cache takes
~1-5 µs; or more than 200 µs to create one file (local disks take ~10-50 µs),
which every tool that writes many small files pays.
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
    Variant,
    fit_of,
    fmt_s,
    growth,
    per_unit,
    superlinear,
)

HELPER = "qs-doctor-dirscan"
SIZES_FULL = (1_000, 3_000, 10_000, 25_000, 50_000)
SIZES_QUICK = (500, 1_000, 2_500, 5_000, 10_000)
SLOW_S_PER_FILE = 20e-6
SLOW_CREATE_US = 200.0

SOURCE = r"""
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double qs_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* usage: qs-doctor-dirscan create DIR N | scan DIR */
int main(int argc, char **argv) {
    if (argc >= 4 && strcmp(argv[1], "create") == 0) {
        long n = atol(argv[3]), distinct = n < 64 ? n : 64;
        char path[4096], target[4096];
        if (mkdir(argv[2], 0755) && access(argv[2], F_OK)) { perror(argv[2]); return 1; }
        double t0 = qs_now();
        for (long i = 0; i < distinct; i++) {
            snprintf(path, sizeof path, "%s/file-%08ld.dat", argv[2], i);
            int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0) { perror(path); return 1; }
            if (ftruncate(fd, (off_t)((i * 2654435761u) % 65536))) { perror(path); return 1; }
            close(fd);
        }
        double t1 = qs_now();
        for (long i = distinct; i < n; i++) {
            snprintf(target, sizeof target, "%s/file-%08ld.dat", argv[2], i % distinct);
            snprintf(path, sizeof path, "%s/file-%08ld.dat", argv[2], i);
            if (link(target, path)) { perror(path); return 1; }
        }
        double t2 = qs_now();
        printf("{\"files\": %ld, \"create_us_per_file\": %.3f, \"link_us_per_name\": %.3f}\n",
               n, distinct ? (t1 - t0) * 1e6 / distinct : 0.0,
               n > distinct ? (t2 - t1) * 1e6 / (n - distinct) : 0.0);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "scan") == 0) {
        DIR *d = opendir(argv[2]);
        if (!d) { perror(argv[2]); return 1; }
        int dfd = dirfd(d);
        long long total = 0;
        long files = 0;
        struct dirent *e;
        struct stat st;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                total += st.st_size;
                files++;
            }
        }
        closedir(d);
        printf("{\"files\": %ld, \"bytes\": %lld}\n", files, total);
        return 0;
    }
    fprintf(stderr, "usage: %s create DIR N | scan DIR\n", argv[0]);
    return 2;
}
"""


@dataclass(frozen=True, slots=True)
class DirscanProbe:
    name: str = "dirscan"
    describe: str = "readdir + stat of every file, against the number of files"
    weight: float = 1.5

    def plan(self, quick: bool, machine: Mapping[str, Any]) -> ProbePlan:
        sizes = SIZES_QUICK if quick else SIZES_FULL
        variant = Variant(
            label="scan",
            argv=(f"{{bin}}/{HELPER}", "scan", "{tmp}/d{n}"),
            helpers=(HELPER,),
            sizes=sizes,
            repeat=3 if quick else 5,
            metrics=("cpu_s",),
            setup=((f"{{bin}}/{HELPER}", "create", "{tmp}/d{n}", "{n}"),),
        )
        return ProbePlan((Helper(HELPER, SOURCE),), (variant,))

    def judge(self, evidence: Evidence) -> ProbeResult:
        wall = fit_of(evidence, "scan", "cpu_s", "wall_s")
        per_file = per_unit(wall)
        fs = str(evidence.facts.get("tmp_fs") or "unknown")
        where = str(evidence.facts.get("tmp_dir") or "the temp directory")
        setup = evidence.details.get("scan", {})
        create_us = setup.get("create_us_per_file")
        create_us = float(create_us) if isinstance(create_us, int | float) else None
        numbers: dict[str, float] = {}
        if per_file is not None:
            numbers["us_per_file"] = per_file * 1e6
        if create_us is not None:
            numbers["create_us_per_file"] = create_us
        details: dict[str, Any] = {
            "s_per_file": per_file,
            "fs": fs,
            "dir": where,
            "class": growth(wall),
            "setup": dict(setup),
            "numbers": numbers,
        }
        measured = f"readdir+fstatat of n files in {where} ({fs})"
        if wall is None:
            reason = evidence.unavailable.get("scan", "the scan did not run")
            return ProbeResult(self.name, measured, "—", "—", "skipped", reason, details)
        cls = growth(wall)
        cost = f"{fmt_s(per_file)} per file"
        if create_us is not None:
            cost += f" (creating one: {fmt_s(create_us * 1e-6)})"
        if superlinear(wall):
            return ProbeResult(
                self.name,
                measured,
                cls,
                cost,
                "pathological",
                f"scanning a directory grows as {cls} in its number of files on {fs}: "
                "lookups are not indexed; enable dir_index (ext4: `tune2fs -O dir_index` "
                "then `e2fsck -D`) or split large directories into subdirectories",
                details,
            )
        if per_file is not None and per_file > SLOW_S_PER_FILE:
            return ProbeResult(
                self.name,
                measured,
                cls,
                cost,
                "slow",
                f"each file costs {fmt_s(per_file)} to stat on {fs} (a local disk takes "
                "~1-5 µs): keep build trees and caches on a local file system",
                details,
            )
        if create_us is not None and create_us > SLOW_CREATE_US:
            return ProbeResult(
                self.name,
                measured,
                cls,
                cost,
                "slow",
                f"scanning is linear at {fmt_s(per_file)} per file, but creating a file "
                f"costs {fmt_s(create_us * 1e-6)} on {fs} in {where} (a local disk takes "
                "~10-50 µs): put scratch and build directories on tmpfs (/dev/shm) or "
                "faster storage",
                details,
            )
        return ProbeResult(
            self.name,
            measured,
            cls,
            cost,
            "ok",
            f"scanning scales linearly at {fmt_s(per_file)} per file on {fs}; nothing to do",
            details,
        )


PROBE = DirscanProbe()
