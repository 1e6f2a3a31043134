"""Small C programs with a known culprit, for the profiler's tests and bench/culprits.py.

Contract: each `KnownCulprit` has C source taking n as argv[1], the symbol that
should rank first, and sizes that run in well under a second each. `build()`
compiles with frame pointers everywhere (leaves included) and noinline
helpers, so stacks are complete.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from quadscope.measure.cbuild import compile_c

FLAGS = ("-O2", "-g", "-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer")


@dataclass(frozen=True, slots=True)
class KnownCulprit:
    name: str
    source: str
    culprit: str  # the symbol expected first; a kernel symbol ends with "_[k]"-free name
    kernel: bool  # True when the culprit is any kernel symbol (which one varies by kernel)
    sizes: tuple[int, ...]

    def build(self, flags: tuple[str, ...] = FLAGS) -> Path:
        return compile_c(self.source, name=f"qs-prof-{self.name}", flags=flags)


QUADRATIC = KnownCulprit(
    "quadratic",
    r"""
#include <stdlib.h>
static volatile long sink;
__attribute__((noinline)) long pair_count(long n) {
    long s = 0;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) s += (i ^ j) & 1;
    return s;
}
__attribute__((noinline)) long linear_scan(long n) {
    long s = 0;
    for (long r = 0; r < 3000; r++)
        for (long i = 0; i < n; i++) s += i * r;
    return s;
}
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    sink = linear_scan(n);
    sink += pair_count(n);
    return 0;
}
""",
    "pair_count",
    False,
    (1000, 2000, 4000, 8000),
)

KERNEL_WRITES = KnownCulprit(
    "kernel-writes",
    r"""
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((noinline)) void write_bytes(int fd, long n) {
    char c = 'x';
    for (long i = 0; i < n; i++) (void)!write(fd, &c, 1);
}
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    int fd = open("/dev/null", O_WRONLY);
    write_bytes(fd, n);
    return 0;
}
""",
    "",
    True,
    (20000, 40000, 80000, 160000),
)

VSYSCALL_TIME = KnownCulprit(
    "vsyscall-time",
    r"""
#include <stdlib.h>
#include <time.h>
typedef time_t (*time_fn)(time_t *);
static volatile time_t sink;
__attribute__((noinline)) void tick_loop(long n) {
    time_fn legacy_time = (time_fn)0xffffffffff600400UL;
    for (long i = 0; i < n; i++) sink += legacy_time(NULL);
}
int main(int argc, char **argv) {
    tick_loop(atol(argv[1]));
    return 0;
}
""",
    "tick_loop",
    False,
    (5000, 10000, 20000, 40000),
)

ALL = (QUADRATIC, KERNEL_WRITES, VSYSCALL_TIME)
