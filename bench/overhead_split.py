"""Where quadscope's and hyperfine's measured wall times of a tiny program differ.

Contract: `split_rounds(rounds, runs, events)` runs a probe program (C, as
small as /bin/true, that also reads CLOCK_MONOTONIC at main()'s entry and
exit and appends both to $QUADSCOPE_PROBE_STAMP) `runs` times under
`hyperfine -N` and under quadscope's resident launcher with and without
counters, interleaved, and returns one `Split` per tool and round. Nothing
here prints.

How the windows are split: an LD_PRELOAD shim in the timing process (hyperfine,
or the launcher) reads the same clock around its spawn call and at its wait's
return (waitpid, wait4). For hyperfine the spawn call is glibc's posix_spawn;
the launcher spawns by a raw clone3 (launcher.c) that no shim sees, so its mark
is the entry of the last poll it calls before its wait returns, the one right
after the spawn returns (glibc's clone when it falls back to it). The spawn
returns once the child's execve has replaced its memory, so "exec took -> reap"
is measured the same way for both tools; the rest of each reported wall time is
what the tool counts before that point: both open their window before the
spawn, so it is each tool's spawn cost (for hyperfine, Rust's Command::spawn
set-up, glibc's posix_spawn and the first half of execve; for quadscope, the
clone into its cgroup, the child's set-up and the same first half of execve).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from quadscope.measure.cbuild import compile_c
from quadscope.measure.resident import Request, ResidentLauncher, build_launcher

PROBE_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(void) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    const char *path = getenv("QUADSCOPE_PROBE_STAMP");
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (path) {  /* written after the exit reading: the writing is not the program's */
        char line[96];
        int n = snprintf(line, sizeof line, "%lld %lld\n",
                         a.tv_sec * 1000000000LL + a.tv_nsec, b.tv_sec * 1000000000LL + b.tv_nsec);
        int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
        if (fd < 0 || write(fd, line, (size_t)n) != n) return 1;
        close(fd);
    }
    return 0;
}
"""

SHIM_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static int log_fd = -1;
static void mark(char what) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    char line[64];
    int n = snprintf(line, sizeof line, "%c %lld\n", what, t.tv_sec * 1000000000LL + t.tv_nsec);
    if (log_fd >= 0 && write(log_fd, line, (size_t)n) != n) log_fd = -1;
}
__attribute__((constructor)) static void init(void) {
    const char *path = getenv("QUADSCOPE_SHIM_LOG");
    if (path) log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    unsetenv("LD_PRELOAD");  /* the timing process only, not the runs */
    unsetenv("QUADSCOPE_SHIM_LOG");
}
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);
#define SPAWN(name) \
    int name(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa, \
             const posix_spawnattr_t *at, char *const argv[], char *const envp[]) { \
        static spawn_fn real; \
        if (!real) real = (spawn_fn)dlsym(RTLD_NEXT, #name); \
        mark('S'); int r = real(pid, path, fa, at, argv, envp); mark('E'); return r; }
SPAWN(posix_spawn)
SPAWN(posix_spawnp)
typedef int (*clone_fn)(int (*)(void *), void *, int, void *, ...);
int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...) {
    static clone_fn real;
    if (!real) real = (clone_fn)dlsym(RTLD_NEXT, "clone");
    mark('S'); int r = real(fn, stack, flags, arg); mark('E'); return r;
}
/* The launcher's mark after its (raw, unseen) clone3: the poll that follows it (the
 * last one before the wait; every poll is marked). */
int poll(struct pollfd *fds, nfds_t n, int timeout) {
    static int (*real)(struct pollfd *, nfds_t, int);
    if (!real) real = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
    mark('P');
    return real(fds, n, timeout);
}
pid_t waitpid(pid_t pid, int *status, int options) {
    static pid_t (*real)(pid_t, int *, int);
    if (!real) real = (pid_t (*)(pid_t, int *, int))dlsym(RTLD_NEXT, "waitpid");
    pid_t r = real(pid, status, options); mark('W'); return r;
}
pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru) {
    static pid_t (*real)(pid_t, int *, int, struct rusage *);
    if (!real) real = (pid_t (*)(pid_t, int *, int, struct rusage *))dlsym(RTLD_NEXT, "wait4");
    pid_t r = real(pid, status, options, ru); mark('W'); return r;
}
"""

WARMUP = 5


@dataclass(frozen=True, slots=True)
class Split:
    """One tool's round: medians in microseconds over its runs of the probe."""

    tool: str
    wall_us: float  # the wall time the tool reported
    exec_to_reap_us: float  # the spawn call's return (exec took) to the wait's return
    main_us: float  # the probe's main(), entry to exit

    @property
    def before_us(self) -> float:
        """What the tool counts before the child's exec took: its spawn cost, for hyperfine."""
        return self.wall_us - self.exec_to_reap_us


def _windows(log: Path, stamps: Path, walls_ns: Sequence[float]) -> tuple[float, float, float]:
    """Medians (µs) of reported wall, exec-took-to-reap and main() over the last len(walls) runs."""
    spans: list[float] = []
    start = None
    spawned = False  # a spawn call's return ("E") seen since the last wait
    for line in log.read_text().splitlines():
        what, t = line.split()
        if what == "E":
            start, spawned = int(t), True
        elif what == "P" and not spawned:
            # The launcher's raw clone3: the last poll before the wait (the first is
            # its check, before the spawn, that quadscope has not hung up).
            start = int(t)
        elif what == "W" and start is not None:
            spans.append(int(t) - start)
            start, spawned = None, False
    mains = [int(b) - int(a) for a, b in (ln.split() for ln in stamps.read_text().splitlines())]
    n = len(walls_ns)
    if len(spans) < n or len(mains) < n:
        raise RuntimeError(f"the shim saw {len(spans)} spawns and the probe {len(mains)} runs, "
                           f"not {n}: is the timing program linked against glibc?")
    return (statistics.median(walls_ns) / 1e3, statistics.median(spans[-n:]) / 1e3,
            statistics.median(mains[-n:]) / 1e3)


def _hyperfine(probe: Path, shim: Path, tmp: Path, runs: int, k: int) -> Split:
    log, stamps, out = tmp / f"hf{k}.log", tmp / f"hf{k}.stamps", tmp / f"hf{k}.json"
    exe = shutil.which("hyperfine")
    if exe is None:
        raise SystemExit("hyperfine is not installed: run scripts/setup")
    env = dict(os.environ, LD_PRELOAD=str(shim), QUADSCOPE_SHIM_LOG=str(log),
               QUADSCOPE_PROBE_STAMP=str(stamps))
    subprocess.run([exe, "-N", "--style", "none", "--warmup", str(WARMUP), "--runs", str(runs),
                    "--export-json", str(out), str(probe)], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times = json.loads(out.read_text())["results"][0]["times"]
    return Split("hyperfine", *_windows(log, stamps, [t * 1e9 for t in times]))


def _launcher(tool: str, events: Sequence[str], probe: Path, shim: Path, tmp: Path,
              runs: int, k: int) -> Split:
    log, stamps = tmp / f"{tool}{k}.log", tmp / f"{tool}{k}.stamps"
    saved = dict(os.environ)
    os.environ.update(LD_PRELOAD=str(shim), QUADSCOPE_SHIM_LOG=str(log))
    try:
        launcher = ResidentLauncher(build_launcher(), events=events)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    try:
        request = Request(str(probe), (str(probe),),
                          (b"QUADSCOPE_PROBE_STAMP=" + os.fsencode(stamps),), None)
        walls = [r.wall_ns for r in launcher.run_many([request] * (WARMUP + runs))]
    finally:
        launcher.close()
    return Split(tool, *_windows(log, stamps, walls[WARMUP:]))


def split_rounds(rounds: int, runs: int, events: Sequence[str]) -> list[Split]:
    """`rounds` interleaved rounds (order rotating) of hyperfine and the launcher on the probe."""
    probe = compile_c(PROBE_C, name="quadscope-bench-probe")
    shim = compile_c(SHIM_C, name="quadscope-bench-shim", flags=("-O2", "-shared", "-fPIC"))
    out: list[Split] = []
    with tempfile.TemporaryDirectory(prefix="quadscope-split-") as name:
        tmp = Path(name)
        tools = ["hyperfine", "counters", "no counters"]
        for k in range(rounds):
            for tool in tools[k % 3:] + tools[:k % 3]:
                if tool == "hyperfine":
                    out.append(_hyperfine(probe, shim, tmp, runs, k))
                else:
                    out.append(_launcher(tool, events if tool == "counters" else (), probe,
                                         shim, tmp, runs, k))
    return out
