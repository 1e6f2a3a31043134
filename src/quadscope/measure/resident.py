"""The resident C launcher (launcher.c) and its line protocol, seen from Python.

Contract: `ResidentLauncher(path, events=, cpus=)` starts one launcher process
that spawns every run given to `run(path, argv, env, timeout_s) -> Reply`, one
at a time (`env`: "NAME=VALUE" entries added to the environment the launcher
inherited when it started), until `close()` (or garbage collection) closes its request pipe and
reaps it. `events` are perf event names (`meters.EVENT_CODES`) opened on every
child; `cpus` pins every child to those CPUs. Each run's stderr goes to one
file the launcher truncates before the run; `stderr_tail(n)` is its last n
bytes after the run. `cleanup` says what the launcher kills after each run:
"cgroup" (every process in the run's cgroup, whatever it did; also what a
SIGKILLed launcher left, at the next launcher's start), "subreaper" (every
process the run started, setsid ones included) or "group" (the run's process
group). An exception while waiting for a run (Ctrl-C, a
SIGTERM turned into KeyboardInterrupt) closes the launcher, which kills the
run in flight and everything it started; so does quadscope's death.
`encode_request` and `parse_reply` are the protocol, pure, so it is tested
without a process; launcher.c's header comment is the protocol's reference.

Why resident: a process per run (a launcher or `perf stat`) costs milliseconds
of harness time; one long-lived launcher costs a pipe round trip per run.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

from quadscope.errors import ToolMissingError
from quadscope.measure.meters import EVENT_CODES

# The reply's fields before the counts, in launcher.c's order (parse_reply unpacks them).
_DONE_FIELDS = ("wall_ns", "timed_out", "status", "errno", "utime_us", "stime_us",
                "ru_maxrss", "ru_minflt", "ru_majflt", "ru_nvcsw", "ru_nivcsw")
_MAX_CACHED_REQUESTS = 4096  # distinct (command, size) requests kept encoded


@dataclass(frozen=True, slots=True)
class Reply:
    """One run as the launcher saw it.

    `rusage` holds struct rusage fields by name (times in seconds, ru_maxrss in
    KiB); `counts` each event's count or None; `open_errnos` the errno of each
    event that could not be opened (absent when it opened).
    """

    wall_ns: int
    timed_out: bool
    status: int
    errno: int
    rusage: Mapping[str, float]
    counts: Mapping[str, int | None]
    open_errnos: Mapping[str, int]


def encode_request(path: str, argv: Sequence[str], env: Sequence[bytes],
                   timeout_s: float | None) -> bytes:
    """One `run` request: the header line, then PATH, ARGV and ENV as NUL-terminated strings."""
    strings = [os.fsencode(path), *(os.fsencode(a) for a in argv), *env]
    if any(b"\0" in s for s in strings):
        raise ValueError("a command argument or environment entry holds a NUL byte")
    body = b"".join(s + b"\0" for s in strings)
    timeout_ns = -1 if timeout_s is None else max(0, int(timeout_s * 1e9))
    return b"run %d %d %d %d\n" % (timeout_ns, len(argv), len(env), len(body)) + body


def parse_reply(line: str, events: Sequence[str]) -> Reply:
    """A `done` line for a launcher counting `events` (see launcher.c)."""
    parts = line.split()
    if not parts or parts[0] != "done" or len(parts) != 1 + len(_DONE_FIELDS) + len(events):
        raise RuntimeError(f"the quadscope launcher replied {line!r}")
    # Unpacked by hand, not a dict of every field: this runs once per run of every sweep.
    (wall_ns, timed_out, status, errno, utime_us, stime_us, maxrss, minflt, majflt, nvcsw,
     nivcsw) = map(int, parts[1:1 + len(_DONE_FIELDS)])
    counts: dict[str, int | None] = {}
    errnos: dict[str, int] = {}
    for event, token in zip(events, parts[1 + len(_DONE_FIELDS):], strict=True):
        if token.startswith("!"):
            counts[event], errnos[event] = None, int(token[1:])
        else:
            counts[event] = None if token == "-" else int(token)
    rusage = {"ru_maxrss": float(maxrss), "ru_minflt": float(minflt),
              "ru_majflt": float(majflt), "ru_nvcsw": float(nvcsw), "ru_nivcsw": float(nivcsw),
              "ru_utime": utime_us / 1e6, "ru_stime": stime_us / 1e6}
    return Reply(wall_ns, bool(timed_out), status, errno, rusage, counts, errnos)


def launcher_source() -> str:
    return resources.files("quadscope.measure").joinpath("launcher.c").read_text()


def build_launcher() -> str:
    """Path of the launcher, compiled at first use; ToolMissingError without a C compiler."""
    from quadscope.measure.cbuild import compile_c

    return str(compile_c(launcher_source(), name="quadscope-launcher", flags=("-O2",)))


class ResidentLauncher:
    """One running launcher (see the module docstring); not thread-safe, one run at a time."""

    def __init__(self, path: str, *, events: Sequence[str] = (),
                 cpus: Sequence[int] = ()) -> None:
        self.events = tuple(events)
        args = [path]
        if cpus:
            args += ["-c", ",".join(str(c) for c in cpus)]
        args += [f"{EVENT_CODES[e][0]}:{EVENT_CODES[e][1]}" for e in self.events]
        # Lives as long as the launcher: each run's stderr, truncated by it before the run.
        self._stderr = tempfile.TemporaryFile(prefix="quadscope-stderr-")  # noqa: SIM115
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        try:
            self._pid = os.posix_spawn(path, args, os.environ, file_actions=[
                (os.POSIX_SPAWN_DUP2, req_r, 0),
                (os.POSIX_SPAWN_DUP2, rep_w, 1),
                (os.POSIX_SPAWN_DUP2, self._stderr.fileno(), 3),
            ])
        except OSError as e:
            for fd in (req_w, rep_r):
                os.close(fd)
            self._stderr.close()
            raise ToolMissingError(f"the quadscope launcher could not start: {e.strerror}") from e
        finally:
            os.close(req_r)
            os.close(rep_w)
        self._req_w: int | None = req_w
        self._rep_r = rep_r
        self._buf = b""
        self._requests: dict[tuple[str, tuple[str, ...], tuple[bytes, ...], float | None],
                             bytes] = {}
        hello = self._read_line().split()
        if hello[:1] != ["hello"] or len(hello) != 2:
            self.close()
            raise RuntimeError(f"the quadscope launcher greeted with {' '.join(hello)!r}")
        self.cleanup = hello[1]

    def run(self, path: str, argv: Sequence[str], env: Sequence[bytes],
            timeout_s: float | None) -> Reply:
        """Spawn one run, wait for it, and return what the launcher measured."""
        assert self._req_w is not None, "run() after close()"
        # A sweep sends each size's request many times: encoded once (a few µs a run).
        key = (path, tuple(argv), tuple(env), timeout_s)
        encoded = self._requests.get(key)
        if encoded is None:
            if len(self._requests) >= _MAX_CACHED_REQUESTS:
                self._requests.clear()
            encoded = self._requests[key] = encode_request(path, argv, env, timeout_s)
        request = memoryview(encoded)
        try:
            while request:
                request = request[os.write(self._req_w, request):]
            return parse_reply(self._read_line(), self.events)
        except BaseException:
            self.close()  # EOF mid-run: the launcher kills the run and all it started
            raise

    def stderr_tail(self, tail_bytes: int) -> str:
        """The last `tail_bytes` the latest run wrote to stderr."""
        size = os.fstat(self._stderr.fileno()).st_size
        if size == 0:
            return ""  # most runs write nothing: no read
        start = max(0, size - tail_bytes)
        return os.pread(self._stderr.fileno(), size - start, start).decode("utf-8", "replace")

    def _read_line(self) -> str:
        while b"\n" not in self._buf:
            chunk = os.read(self._rep_r, 4096)
            if not chunk:
                raise RuntimeError("the quadscope launcher stopped early"
                                   + (f": {self._buf!r}" if self._buf else ""))
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode()

    def close(self) -> None:
        """End the launcher: EOF on its request pipe (aborting a run in flight), then reap it."""
        if getattr(self, "_req_w", None) is None:
            return  # closed already, or the launcher never started
        assert self._req_w is not None
        os.close(self._req_w)
        self._req_w = None
        os.close(self._rep_r)
        # Already reaped when the host program reaps every child (a SIGCHLD handler).
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self._pid, 0)
        self._stderr.close()

    def __del__(self) -> None:
        self.close()

