"""Probe `dirscan`: summing the sizes in a directory against the number of files.

Workload: the swept helper opens a directory, readdir()s its entries (all but
"." and ".."), fstatat()s each and adds up st_size — what `du -s` (without
recursing) or a build tool's up-to-date check does; with a limit k it stops
after the first k entries. The cost per file is the slope of cpu_s (user +
sys); wall_s is fitted too, so a file system that makes stat wait (a network
mount, a cold disk) shows as wall time far above the CPU time.

Two ways to get directories:
- by default, a setup step fills a fresh directory in the temp directory with
  n names per size: 64 distinct files of assorted sizes (ftruncate, so nothing
  is written) and hard links to them for the rest, because creating an inode
  can cost ~0.5 ms on a VM's disk (10⁵ files would take a minute) while a link
  costs ~20 µs. It prints what one file and one link cost to create: reported
  as a note, never judged — creating is not scanning.
- with `target` (`quadscope doctor --dir PATH`), the user's directory is
  scanned as it is: n is a prefix of its listing (the first k entries in
  readdir order), and nothing is ever written there. `target_entries` (counted
  by the caller, so `plan` stays pure) sets the sizes.

Sizes: n = 1,000 … 50,000 files (500 … 10,000 with --quick); for --dir, five
prefixes of the listing from 5% to all of it, at most 100,000 entries (20,000
with --quick), and at least 50 entries.

Pathological: the scan grows faster than n (a directory format without an
index, or a file system that re-reads the directory per lookup). Slow: more
than 20 µs per file to scan, in CPU or in waiting (wall time), where a local
file system with a warm cache takes ~1-5 µs.
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
    doubts,
    fit_of,
    fmt_s,
    growth,
    per_unit,
    ratio,
    superlinear,
)
from quadscope.doctor.details import DirScanDetails

SIZES_FULL = (1_000, 3_000, 10_000, 25_000, 50_000)
SIZES_QUICK = (500, 1_000, 2_500, 5_000, 10_000)
SLOW_S_PER_FILE = 20e-6
# Wall time this many times the CPU time per file means stat waits (I/O, network).
WAIT_RATIO = 3.0
MIN_ENTRIES = 50
MAX_ENTRIES_FULL = 100_000
MAX_ENTRIES_QUICK = 20_000
PREFIX_FRACTIONS = (0.05, 0.1, 0.25, 0.5, 1.0)

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

/* usage: qs-doctor-dirscan create DIR N | scan DIR [LIMIT] */
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
        long limit = argc >= 4 ? atol(argv[3]) : -1;
        DIR *d = opendir(argv[2]);
        if (!d) { perror(argv[2]); return 1; }
        int dfd = dirfd(d);
        long long total = 0;
        long files = 0;
        struct dirent *e;
        struct stat st;
        long seen = 0;
        while ((limit < 0 || seen < limit) && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            seen++;
            if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                total += st.st_size;
                files++;
            }
        }
        closedir(d);
        printf("{\"files\": %ld, \"bytes\": %lld}\n", files, total);
        return 0;
    }
    fprintf(stderr, "usage: %s create DIR N | scan DIR [LIMIT]\n", argv[0]);
    return 2;
}
"""


HELPER = Helper("qs-doctor-dirscan", SOURCE)


def prefix_sizes(entries: int, quick: bool) -> tuple[int, ...]:
    """Prefix lengths of a listing of `entries` names: 5% … 100%, capped per mode."""
    top = min(entries, MAX_ENTRIES_QUICK if quick else MAX_ENTRIES_FULL)
    return tuple(sorted({max(1, round(top * f)) for f in PREFIX_FRACTIONS}))


@dataclass(frozen=True, slots=True)
class DirscanProbe:
    name: str = "dirscan"
    describe: str = "readdir + stat of every file, against the number of files"
    weight: float = 1.5
    target: str = ""  # a user's directory to scan as it is; "" = fill temp directories
    target_entries: int = 0
    target_fs: str = ""

    def plan(self, quick: bool, machine: Mapping[str, Any]) -> ProbePlan:
        repeat = 3 if quick else 5
        metrics = ("cpu_s", "wall_s")
        if not self.target:
            return HELPER.plan([HELPER.variant(
                "scan", "scan", "{tmp}/d{n}", sizes=SIZES_QUICK if quick else SIZES_FULL,
                repeat=repeat, metrics=metrics,
                setup=(HELPER.argv("create", "{tmp}/d{n}", "{n}"),),
            )])
        if self.target_entries < MIN_ENTRIES:
            reason = (
                f"{self.target} holds {self.target_entries} entries; the scan needs at "
                f"least {MIN_ENTRIES} to show how its cost grows"
            )
            return HELPER.plan([], {"scan": reason})
        # read only: no setup, so nothing is ever created in the user's directory
        return HELPER.plan([HELPER.variant(
            "scan", "scan", self.target, "{n}", sizes=prefix_sizes(self.target_entries, quick),
            repeat=repeat, metrics=metrics,
        )])

    def judge(self, evidence: Evidence) -> ProbeResult:
        cpu = fit_of(evidence, "scan", "cpu_s", "wall_s")
        per_file = per_unit(cpu)
        wall_per_file = per_unit(fit_of(evidence, "scan", "wall_s"))
        if self.target:
            fs = self.target_fs or "unknown"
            where = self.target
            measured = f"readdir+fstatat of the first n of {self.target_entries} entries of {where} ({fs})"
        else:
            fs = str(evidence.facts.get("tmp_fs") or "unknown")
            where = str(evidence.facts.get("tmp_dir") or "the temp directory")
            measured = f"readdir+fstatat of n files in {where} ({fs})"
        setup = evidence.details.get("scan", {})
        create_us = setup.get("create_us_per_file")
        create_us = float(create_us) if isinstance(create_us, int | float) else None
        numbers: dict[str, float] = {}
        if per_file is not None:
            numbers["us_per_file"] = per_file * 1e6
        if wall_per_file is not None:
            numbers["wall_us_per_file"] = wall_per_file * 1e6
        if create_us is not None:
            numbers["create_us_per_file"] = create_us
        # Filling the test directory is not what this probe judges: a side note only.
        create_note = (
            ""
            if create_us is None
            else f". Aside, not judged: creating one file to fill the test directory took "
            f"{fmt_s(create_us * 1e-6)} in {where}"
        )
        details = DirScanDetails(
            s_per_file=per_file,
            wall_s_per_file=wall_per_file,
            fs=fs,
            dir=where,
            cls=growth(cpu),
            setup=dict(setup),
            create_note=create_note.removeprefix(". "),
            numbers=numbers,
        )
        if cpu is None:
            reason = evidence.unavailable.get("scan", "the scan did not run")
            return ProbeResult.skipped(self.name, measured, reason, details)
        cls = growth(cpu)
        cost = f"{fmt_s(per_file)} per file"
        waits = (
            wall_per_file is not None
            and per_file is not None
            and wall_per_file > SLOW_S_PER_FILE
            and wall_per_file > WAIT_RATIO * per_file
        )
        if waits:
            cost += f" ({fmt_s(wall_per_file)} wall)"
        row = Row(self.name, measured, cls, cost, details)
        unsure = doubts({"scan": cpu})
        if superlinear(cpu):
            return row.pathological(
                f"scanning a directory grows as {cls} in its number of files on {fs}: "
                "lookups are not indexed; enable dir_index (ext4: `tune2fs -O dir_index` "
                "then `e2fsck -D`) or split large directories into subdirectories"
                + create_note
            )
        if per_file is not None and per_file > SLOW_S_PER_FILE:
            return row.slow(
                f"each file costs {fmt_s(per_file)} of CPU to stat on {fs} in {where} (a "
                "local file system with a warm cache takes ~1-5 µs): keep build trees and "
                "caches on a local file system" + unsure + create_note
            )
        if waits:
            return row.slow(
                f"each file waits {fmt_s(wall_per_file)} to be stat'ed on {fs} in {where}, "
                f"{ratio(wall_per_file, per_file) or 0:.0f}× its CPU time: the file system "
                "makes every stat wait (network or cold disk); keep trees that tools scan "
                "often on a local file system" + unsure + create_note
            )
        return row.ok(
            f"scanning costs {fmt_s(per_file)} per file on {fs} in {where} and does not "
            f"grow as n² or worse in the number of files; nothing to do" + unsure + create_note
        )


PROBE = DirscanProbe()
