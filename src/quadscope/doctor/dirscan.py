"""Probe `dirscan`: summing the sizes in a directory against the number of files.

Workload: for each size n a setup step fills a fresh directory with n files of
assorted sizes (ftruncate, so nothing is written); the swept helper opens the
directory, readdir()s every entry, fstatat()s it and adds up st_size — what
`du -s` or a build tool's up-to-date check does. The directories live in the
temp directory, whose file system is reported.

Sizes: n = 1,000 … 50,000 files (500 … 10,000 with --quick).

Pathological: the scan grows faster than n (a directory format without an
index, or a file system that re-reads the directory per lookup). Slow: more
than 20 µs per file, where a local file system with a warm cache takes ~1-2 µs.
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

SOURCE = r"""
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* usage: qs-doctor-dirscan create DIR N | scan DIR */
int main(int argc, char **argv) {
    if (argc >= 4 && strcmp(argv[1], "create") == 0) {
        long n = atol(argv[3]);
        char path[4096];
        if (mkdir(argv[2], 0755) && access(argv[2], F_OK)) { perror(argv[2]); return 1; }
        for (long i = 0; i < n; i++) {
            snprintf(path, sizeof path, "%s/file-%08ld.dat", argv[2], i);
            int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0) { perror(path); return 1; }
            if (ftruncate(fd, (off_t)((i * 2654435761u) % 65536))) { perror(path); return 1; }
            close(fd);
        }
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
            setup=((f"{{bin}}/{HELPER}", "create", "{tmp}/d{n}", "{n}"),),
        )
        return ProbePlan((Helper(HELPER, SOURCE),), (variant,))

    def judge(self, evidence: Evidence) -> ProbeResult:
        wall = fit_of(evidence, "scan", "wall_s")
        per_file = per_unit(wall)
        fs = str(evidence.facts.get("tmp_fs") or "unknown")
        where = str(evidence.facts.get("tmp_dir") or "the temp directory")
        details: dict[str, Any] = {
            "s_per_file": per_file,
            "fs": fs,
            "dir": where,
            "class": growth(wall),
            "numbers": {} if per_file is None else {"us_per_file": per_file * 1e6},
        }
        measured = f"readdir+fstatat of n files in {where} ({fs})"
        if wall is None:
            reason = evidence.unavailable.get("scan", "the scan did not run")
            return ProbeResult(self.name, measured, "—", "—", "skipped", reason, details)
        cls = growth(wall)
        cost = f"{fmt_s(per_file)} per file"
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
                "~1-2 µs): keep build trees and caches on a local file system",
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
