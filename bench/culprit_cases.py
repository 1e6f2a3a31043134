"""The programs `bench/culprits.py --cases` profiles as a user would, each with its known culprit.

Contract: `CASES` is a tuple of `Case`s; `case.prepare(folder)` writes and
builds the program there and returns the `quadscope run` arguments after
`--` (with `--shell` first for a pipeline) and the environment it needs;
`case.user` are the names the user's function may carry (an inlined helper
is correctly named by the function it was inlined into), `case.kernel` marks
the doctor's kernel cases, whose growing work is the kernel's page faults
done for that function. A case whose tool is missing (rustc, g++, py-spy)
says so from `case.missing()` and is reported, never silently dropped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

PY = "/root/.pyenv/versions/3.11.7/bin/python3"  # the real interpreter, not pyenv's shim
PY312 = "/root/.pyenv/versions/3.12.1/bin/python3"  # perf trampolines (-X perf)
REPO = Path(__file__).resolve().parent.parent

CSVJOIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) void append_field(char *buf, const char *field) {
    strcat(buf, field);
    strcat(buf, ",");
}
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    char *buf = calloc(n * 4 + 16, 1);
    for (long i = 0; i < n; i++) append_field(buf, "ab");
    printf("%zu\n", strlen(buf));
    return 0;
}
"""

# append_field is static and small: gcc -O2 inlines it into main.
CSVJOIN_INLINED = CSVJOIN.replace("__attribute__((noinline)) void", "static void")

CPP_LOG = r"""
#include <cstdio>
#include <cstdlib>
#include <vector>
struct Log {
    std::vector<long> items;
    void add(long x) { items.insert(items.begin(), x); }  // inlined: O(n) memmove each
};
__attribute__((noinline)) long build_log(long n) {
    Log log;
    for (long i = 0; i < n; i++) log.add(i);
    return log.items.front();
}
int main(int argc, char **argv) { std::printf("%ld\n", build_log(std::atol(argv[1]))); }
"""

RUST_JOIN = r"""
#[inline(never)]
fn join_fields(n: usize) -> String {
    let mut s = String::new();
    for _ in 0..n {
        s.insert_str(0, "ab,");  // shifts the whole string each time
    }
    s
}
fn main() {
    let n: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    println!("{}", join_fields(n).len());
}
"""

INSORT = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) void insert_line(long *a, long len, long v) {
    long i = len;
    while (i > 0 && a[i - 1] > v) { a[i] = a[i - 1]; i--; }
    a[i] = v;
}
int main(void) {
    long cap = 1 << 20, len = 0, v;
    long *a = malloc(cap * sizeof *a);
    while (len < cap && scanf("%ld", &v) == 1) insert_line(a, len++, -v);
    printf("%ld\n", len);
    return 0;
}
"""

USERS_PY = """\
import sys

def remember_user(seen, user):
    if user not in seen:
        seen.append(user)

def main():
    n = int(sys.argv[1])
    seen = []
    for i in range(n):
        remember_user(seen, f"u{i}")
    print(len(seen))

main()
"""

# list.insert(0, x) shifts the whole list in C (list_insert): the growth is below the
# Python frame, where py-spy alone never looks.
FRONT_PY = """\
import sys

def remember_user(log, user):
    log.insert(0, user)

def main():
    n = int(sys.argv[1])
    log = []
    for i in range(n):
        remember_user(log, i)
    print(len(log))

main()
"""

TEXTKIT_PY = """\
def make_words(n):
    return [f"w{i}" for i in range(n)]

def unique_words_slow(words):
    out = []
    for w in words:
        if w not in out:
            out.append(w)
    return out
"""


def _cc(folder: Path, name: str, source: str, flags: tuple[str, ...],
        compiler: str = "gcc", ext: str = "c") -> str:
    src = folder / f"{name}.{ext}"
    src.write_text(source)
    exe = folder / name
    subprocess.run([compiler, *flags, "-o", str(exe), str(src)], check=True,
                   capture_output=True, timeout=120)
    return str(exe)


Prepared = tuple[tuple[str, ...], dict[str, str]]


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    kind: str
    sizes: str
    user: tuple[str, ...]  # names the user's function may be shown by
    build: Callable[[Path], Prepared]
    kernel: bool = False
    needs: tuple[str, ...] = ()  # programs that must be on PATH
    extra: tuple[str, ...] = field(default=())  # more `run` options

    def missing(self) -> str | None:
        gone = [t for t in self.needs if shutil.which(t) is None
                and not Path(t).exists()]
        return f"{', '.join(gone)} not installed" if gone else None

    def prepare(self, folder: Path) -> Prepared:
        return self.build(folder)


def _c(source: str, flags: tuple[str, ...]) -> Callable[[Path], Prepared]:
    def build(folder: Path) -> Prepared:
        return (_cc(folder, "prog", source, flags), "{n}"), {}
    return build


def _cpp(folder: Path) -> Prepared:
    return (_cc(folder, "logbuild", CPP_LOG, ("-O2", "-g"), "g++", "cpp"), "{n}"), {}


def _rust(folder: Path) -> Prepared:
    src = folder / "joinfields.rs"
    src.write_text(RUST_JOIN)
    exe = folder / "joinfields"
    subprocess.run(["rustc", "-O", "-g", "-o", str(exe), str(src)], check=True,
                   capture_output=True, timeout=300)
    return (str(exe), "{n}"), {}


def _script(folder: Path) -> Prepared:
    (folder / "users.py").write_text(USERS_PY)
    return (PY, str(folder / "users.py"), "{n}"), {}


def _front(python: str) -> Callable[[Path], Prepared]:
    def build(folder: Path) -> Prepared:
        (folder / "front.py").write_text(FRONT_PY)
        return (python, str(folder / "front.py"), "{n}"), {}
    return build


def _pyfunc(folder: Path) -> Prepared:
    pkg = folder / "textkit"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "core.py").write_text(TEXTKIT_PY)
    return (("python:textkit.core:unique_words_slow:make_words", "{n}"),
            {"PYTHONPATH": f"{folder}{os.pathsep}{REPO / 'src'}"})


def _pipeline(folder: Path) -> Prepared:
    exe = _cc(folder, "insort", INSORT, ("-O2", "-g"))
    return ("--shell", f"seq {{n}} | {exe} | cat"), {}


def _doctor(helper: str) -> Callable[[Path], Prepared]:
    def build(folder: Path) -> Prepared:
        if helper == "notify":
            from quadscope.doctor.notify_buffer import SOURCE
            return (_cc(folder, "qs-doctor-notify", SOURCE, ("-O2", "-g")), "{n}", "fresh",
                    "200"), {}
        from quadscope.doctor.clock import SOURCE as CLOCK
        return (_cc(folder, "qs-doctor-clock", CLOCK, ("-O2", "-g")), "{n}", "vsyscall"), {}
    return build


def _workload(name: str) -> Callable[[Path], Prepared]:
    def build(folder: Path) -> Prepared:
        from quadscope.workloads import WORKLOADS
        from quadscope.workloads import build as build_workload
        w = WORKLOADS[name]
        return tuple(w.argv(build_workload(name))), {}
    return build


FP = ("-O2", "-g", "-fno-omit-frame-pointer")
PLAIN = ("-O2", "-g")
CASES: tuple[Case, ...] = (
    Case("csvjoin-fp", "C, frame pointers", "2000..32000", ("append_field",), _c(CSVJOIN, FP)),
    Case("csvjoin", "C, -O2 -g (no frame pointers)", "2000..32000", ("append_field",),
         _c(CSVJOIN, PLAIN)),
    Case("csvjoin-inlined", "C, helper inlined into main", "2000..32000",
         ("main", "append_field"), _c(CSVJOIN_INLINED, PLAIN)),
    Case("csvjoin-O0", "C, -O0 -g", "2000..32000", ("append_field",),
         _c(CSVJOIN, ("-O0", "-g"))),
    Case("logbuild", "C++, vector::insert inlined", "2000..32000", ("build_log",), _cpp,
         needs=("g++",)),
    Case("joinfields", "Rust, -O -g", "2000..32000", ("join_fields",), _rust,
         needs=("rustc",)),
    Case("users.py", "Python script", "1000..8000", ("remember_user",), _script,
         needs=(PY,)),
    Case("front.py", "Python 3.11 script, list.insert (py-spy + perf)", "5000..80000",
         ("remember_user",), _front(PY), needs=(PY,)),
    Case("front.py-3.12", "Python 3.12 script, list.insert (-X perf)", "5000..80000",
         ("remember_user",), _front(PY312), needs=(PY312,)),
    Case("textkit", "python: function target", "1000..8000", ("unique_words_slow",), _pyfunc),
    Case("pipeline", "shell pipeline (seq, insort, cat)", "2000..16000", ("insert_line",),
         _pipeline),
    Case("insertion_sort", "C, accuracy suite workload", "1000..16000", ("insertion_sort",),
         _workload("insertion_sort")),
    Case("string_search", "C, accuracy suite workload", "1000..16000", ("naive_search",),
         _workload("string_search")),
    Case("notify-fresh", "doctor: fresh zeroed buffer per event", "16..1024", ("main",),
         _doctor("notify"), kernel=True),
    Case("vsyscall", "doctor: time() through the vsyscall page", "20000..320000", ("main",),
         _doctor("clock"), kernel=True),
)

__all__ = ["CASES", "PY", "PY312", "REPO", "Case"]
