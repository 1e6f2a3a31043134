"""The resident C launcher (launcher.c) and its line protocol, seen from Python.

Contract: `ResidentLauncher(path, events=, cpus=, tail_bytes=, rescue_dir=)` starts one
launcher process that spawns every run given to it, one at a time, until
`close()` (or garbage collection) closes its request pipe and reaps it.
`run(request) -> Reply` runs one and waits for it; `run_many(requests) ->
Iterator[Reply]` hands the launcher a whole batch (written ahead into its
request pipe, up to 32 KiB and MAX_AHEAD_RUNS runs ahead of the replies taken)
and yields each reply in order, while
quadscope sleeps between looks at the reply pipe instead of waking at the end
of every run (below). A `Request(path, argv, env, timeout_s)` is one run
(`env`: "NAME=VALUE" entries added to the environment the launcher inherited
when it started). `events` are perf event names (`counters.EVENT_CODES`) opened
on every child; `cpus` pins every child to those CPUs; each reply carries the
last `tail_bytes` of what its run wrote to stderr. `cleanup` says what the
launcher kills after each run: "cgroup" (every process in the run's cgroup,
whatever it did; also what a SIGKILLed launcher left, at the next launcher's
start), "subreaper" (every process the run started, setsid ones included) or
"group" (the run's process group). An exception while waiting (Ctrl-C, a
SIGTERM turned into KeyboardInterrupt) closes the launcher, which kills the
run in flight and everything it started; so does quadscope's death.
`run_many` first yields the replies of the runs that had ended (Ctrl-C keeps
every finished run), then re-raises. `run_chunks(requests, tags)` is `run_many`
a look at a time: it yields a list of every reply come at each look, so the
caller stores a list at once (one transaction), and its resuming the generator
acknowledges that list; until then no further request is written, so the list
is still in the launcher's log (below), and closing the generator at a yield
closes the launcher without goodbye, keeping its logs for the rescue.
`logging` says whether this launcher keeps the rescue. `encode_request` and `parse_reply` are
the protocol, pure, so it is tested without a process; launcher.c's header
comment is the protocol's reference.

Rescue (`rescue_dir`): as `run_many(requests, tags)` (or `run(request, tag)`) hands
requests to the launcher it appends to the launcher's manifest (`<token>.manifest` in
`rescue_dir`, one write per look) a line "INDEX TAG" per request, INDEX
counting the requests sent since the launcher started (from 1, as the
launcher counts its replies) and TAG saying which run it is (the runner's
JSON); the manifest keeps the last MANIFEST_KEEP or more. The launcher writes
each reply, before it sends it, to one of its two logs (`rescue_logs(stem)`:
`<token>.rescue.0` and `.1`, in turn, together holding at least its last
RESCUE_RING replies; launcher.c's "Rescue"), so a run is on disk the moment
it is reaped, even when quadscope's whole process group is SIGKILLed. On
quadscope's goodbye (`close()` sends "bye" once every reply is taken) the
launcher removes its logs, and `close()` the manifest; otherwise they stay,
and `run.rescue` pairs the logged replies with their tags and stores those
the store lacks.

Why resident: a process per run (a launcher or `perf stat`) costs milliseconds
of harness time; one long-lived launcher costs a pipe round trip per run, and a
batch not even that. In a batch the launcher goes from one run to the next
without waiting for quadscope, and quadscope looks at the reply pipe only about
as often as half of the batch's remaining runs are expected to take (at most
every LOOK_S, and on every reply once runs are slow), so it neither wakes in
the middle of every run nor keeps a CPU busy while runs are measured.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import tempfile
import time
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from quadscope.errors import ToolMissingError
from quadscope.measure.counters import EVENT_CODES

# The reply's fields before the counts, in launcher.c's order (parse_reply unpacks them).
_DONE_FIELDS = ("wall_ns", "timed_out", "status", "errno", "utime_us", "stime_us",
                "ru_maxrss", "ru_minflt", "ru_majflt", "ru_nvcsw", "ru_nivcsw")
_MAX_CACHED_REQUESTS = 4096  # distinct (command, size) requests kept encoded
LOOK_S = 0.05  # a batch's longest sleep between looks at the reply pipe (each look: one commit)
SLOW_RUN_S = 0.02  # runs at least this long are taken in as each one ends
_AHEAD_BYTES = 32 * 1024  # requests written ahead: within a pipe's 64 KiB, never blocking
MAX_AHEAD_RUNS = 64  # and runs: what the launcher may get ahead of quadscope
MANIFEST_KEEP = 2 * MAX_AHEAD_RUNS  # tags kept in the rescue manifest, at least


class Reply(NamedTuple):
    """One run as the launcher saw it.

    `rusage` holds struct rusage fields by name (times in seconds, ru_maxrss in
    KiB); `counts` each event's count or None; `open_errnos` the errno of each
    event that could not be opened (absent when it opened); `stderr_tail` the
    end of what the run wrote to stderr. A named tuple, not a frozen dataclass:
    one is made for every run, and a tuple is made in a third of the time.
    """

    wall_ns: int
    timed_out: bool
    status: int
    errno: int
    rusage: Mapping[str, float]
    counts: Mapping[str, int | None]
    open_errnos: Mapping[str, int]
    stderr_tail: str = ""


def encode_request(path: str, argv: Sequence[str], env: Sequence[bytes],
                   timeout_s: float | None) -> bytes:
    """One `run` request: the header line, then PATH, ARGV and ENV as NUL-terminated strings."""
    strings = [os.fsencode(path), *(os.fsencode(a) for a in argv), *env]
    if any(b"\0" in s for s in strings):
        raise ValueError("a command argument or environment entry holds a NUL byte")
    body = b"".join(s + b"\0" for s in strings)
    timeout_ns = -1 if timeout_s is None else max(0, int(timeout_s * 1e9))
    return b"run %d %d %d %d\n" % (timeout_ns, len(argv), len(env), len(body)) + body


def parse_reply(line: str, events: Sequence[str], stderr_tail: str = "") -> Reply:
    """A `done` line (its stderr tail's length last) for a launcher counting `events`."""
    return _reply_of(line.split(), line, events, stderr_tail)


def _reply_of(parts: list[str], line: str, events: Sequence[str], stderr_tail: str) -> Reply:
    """`parse_reply` of a line already split into `parts`."""
    if not parts or parts[0] != "done" or len(parts) != 2 + len(_DONE_FIELDS) + len(events):
        raise RuntimeError(f"the quadscope launcher replied {line!r}")
    # Unpacked by hand, not a dict of every field: this runs once per run of every sweep.
    (wall_ns, timed_out, status, errno, utime_us, stime_us, maxrss, minflt, majflt, nvcsw,
     nivcsw) = map(int, parts[1:1 + len(_DONE_FIELDS)])
    counts: dict[str, int | None] = {}
    errnos: dict[str, int] = {}
    for event, token in zip(events, parts[1 + len(_DONE_FIELDS):-1], strict=True):
        if token.isdigit():
            counts[event] = int(token)
        elif token.startswith("!") and token[1:].isdigit():
            counts[event], errnos[event] = None, int(token[1:])
        elif token == "-":
            counts[event] = None
        else:
            raise RuntimeError(f"the quadscope launcher replied {line!r}")
    rusage = {"ru_maxrss": float(maxrss), "ru_minflt": float(minflt),
              "ru_majflt": float(majflt), "ru_nvcsw": float(nvcsw), "ru_nivcsw": float(nivcsw),
              "ru_utime": utime_us / 1e6, "ru_stime": stime_us / 1e6}
    return Reply(wall_ns, bool(timed_out), status, errno, rusage, counts, errnos, stderr_tail)


def default_rescue_dir() -> Path:
    """Where launchers keep rescued replies: `$XDG_CACHE_HOME/quadscope/rescue`."""
    from quadscope.measure.cbuild import cache_dir

    return cache_dir().parent / "rescue"  # beside bin/, under $QUADSCOPE_CACHE too


MANIFEST_SUFFIX = ".manifest"
RESCUE_SUFFIX = ".rescue"
RESCUE_RING = 128  # replies a launcher's log holds before the other takes over (launcher.c)


def rescue_logs(rescue: str | Path) -> tuple[Path, Path]:
    """The two reply logs of the launcher started with `-r rescue` (launcher.c's "Rescue")."""
    return Path(f"{rescue}.0"), Path(f"{rescue}.1")


def manifest_header(quadscope_pid: int, launcher_pid: int, events: Sequence[str]) -> bytes:
    """A manifest's first line: who wrote it, and the events its replies count."""
    return f"manifest 1 {quadscope_pid} {launcher_pid} {','.join(events) or '-'}\n".encode()


def manifest_lines(tagged: Sequence[tuple[int, str]]) -> bytes:
    """"INDEX TAG" lines, one per (index, tag); a tag is one line."""
    if any("\n" in t for _, t in tagged):
        raise ValueError("a rescue tag holds a newline")
    return "".join(f"{i} {t}\n" for i, t in tagged).encode()


def next_reply(buf: bytes, events: Sequence[str]) -> tuple[Reply | None, bytes]:
    """(the first whole reply in `buf`, what follows it), or (None, buf) when none is whole."""
    replies, end = _replies_in(buf, events, limit=1)
    return (replies[0], buf[end:]) if replies else (None, buf)


def split_replies(data: bytes, events: Sequence[str]) -> list[Reply]:
    """The whole replies in `data`, in order; a reply cut short at the end is left out."""
    return _replies_in(data, events)[0]


def _replies_in(buf: bytes, events: Sequence[str],
                limit: int | None = None) -> tuple[list[Reply], int]:
    """The whole replies at the start of `buf` (at most `limit`), and where they end."""
    replies: list[Reply] = []
    pos = 0
    while limit is None or len(replies) < limit:
        nl = buf.find(b"\n", pos)
        if nl < 0:
            break
        line = buf[pos:nl].decode("utf-8", "replace")
        parts = line.split()
        tail_len = int(parts[-1]) if len(parts) > 1 and parts[0] == "done" else 0
        end = nl + 1 + tail_len
        if len(buf) < end:
            break
        tail = buf[nl + 1:end].decode("utf-8", "replace") if tail_len else ""
        replies.append(_reply_of(parts, line, events, tail))
        pos = end
    return replies, pos


def launcher_source() -> str:
    return resources.files("quadscope.measure").joinpath("launcher.c").read_text()


def build_launcher() -> str:
    """Path of the launcher, compiled at first use; ToolMissingError without a C compiler."""
    from quadscope.measure.cbuild import compile_c

    return str(compile_c(launcher_source(), name="quadscope-launcher", flags=("-O2",)))


@dataclass(frozen=True, slots=True)
class Request:
    """One run for the launcher: what `encode_request` takes."""

    path: str
    argv: tuple[str, ...]
    env: tuple[bytes, ...]
    timeout_s: float | None


@dataclass(slots=True)
class _Feed:
    """A batch's requests still to send, what has gone and come back: `run_many`'s and
    `run_chunks`'s state."""

    todo: Iterator[Request]
    tagged: Iterator[str] | None  # their tags, when the manifest is kept
    ahead: bytes = b""  # encoded requests not yet written
    sent: int = 0
    taken: int = 0  # replies the caller has (run_chunks: acknowledged)
    started: float = 0.0  # time.monotonic() when the batch began

    @property
    def done(self) -> bool:
        """Nothing under way: every request sent and every reply taken."""
        return self.taken == self.sent and not self.ahead


class ResidentLauncher:
    """One running launcher (see the module docstring); not thread-safe, one run at a time."""

    def __init__(self, path: str, *, events: Sequence[str] = (),
                 cpus: Sequence[int] = (), tail_bytes: int = 2000,
                 rescue_dir: Path | None = None) -> None:
        self.events = tuple(events)
        self._manifest: int | None = None
        self._sent_total = 0  # requests sent since the launcher started: the manifest's INDEX
        args = [path, "-t", str(tail_bytes)]
        if cpus:
            args += ["-c", ",".join(str(c) for c in cpus)]
        stem = None
        if rescue_dir is not None:
            try:
                rescue_dir.mkdir(parents=True, exist_ok=True)
            except OSError:
                rescue_dir = None  # nowhere to keep a rescue: runs go on without one
        if rescue_dir is not None:
            stem = rescue_dir / f"{os.getpid()}-{secrets.token_hex(6)}"
            args += ["-r", f"{stem}{RESCUE_SUFFIX}"]
        args += [f"{EVENT_CODES[e][0]}:{EVENT_CODES[e][1]}" for e in self.events]
        # Lives as long as the launcher: each run's stderr, emptied by it after the run.
        stderr = tempfile.TemporaryFile(prefix="quadscope-stderr-")  # noqa: SIM115
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        actions = [(os.POSIX_SPAWN_DUP2, req_r, 0), (os.POSIX_SPAWN_DUP2, rep_w, 1),
                   (os.POSIX_SPAWN_DUP2, stderr.fileno(), 3)]
        try:
            self._pid = os.posix_spawn(path, args, os.environ, file_actions=actions)
        except OSError as e:
            for fd in (req_w, rep_r):
                os.close(fd)
            raise ToolMissingError(f"the quadscope launcher could not start: {e.strerror}") from e
        finally:
            os.close(req_r)
            os.close(rep_w)
            stderr.close()  # the launcher holds its own copy
        self._req_w: int | None = req_w
        self._rep_r = rep_r
        self._buf = b""
        self._busy = False  # a batch is under way: its replies are not another's
        self._encoded: dict[Request, bytes] = {}
        hello = self._read_line().split()
        if hello[:1] != ["hello"] or len(hello) != 2:
            self.close()
            raise RuntimeError(f"the quadscope launcher greeted with {' '.join(hello)!r}")
        self.cleanup = hello[1]
        if stem is not None:
            self._stem = stem
            self._manifest_head = manifest_header(os.getpid(), self._pid, self.events)
            self._noted: list[tuple[int, str]] = []  # (INDEX, TAG), the last ones
            try:
                self._manifest = os.open(f"{stem}{MANIFEST_SUFFIX}", os.O_WRONLY | os.O_APPEND
                                         | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
                os.write(self._manifest, self._manifest_head)
            except OSError:
                self._drop_manifest()

    def _encode(self, r: Request) -> bytes:
        # A sweep sends each size's request many times: encoded once (a few µs a run).
        encoded = self._encoded.get(r)
        if encoded is None:
            if len(self._encoded) >= _MAX_CACHED_REQUESTS:
                self._encoded.clear()
            encoded = self._encoded[r] = encode_request(r.path, r.argv, r.env, r.timeout_s)
        return encoded

    def run(self, r: Request, tag: str = "") -> Reply:
        """Spawn one run, wait for it, and return what the launcher measured.

        `tag` (when not "") goes to the rescue manifest, as a batch's tags do.
        """
        assert self._req_w is not None, "run() after close()"
        assert not self._busy, "run() while a batch is under way"
        request = memoryview(self._encode(r))
        if tag:
            self._note([tag])
        try:
            self._sent_total += 1
            while request:
                request = request[os.write(self._req_w, request):]
            reply = None
            while reply is None:
                reply = self._take_reply()
                if reply is None:
                    self._read_more()
            return reply
        except BaseException:
            self.close()  # EOF mid-run: the launcher kills the run and all it started
            raise

    def run_many(self, requests: Iterable[Request],
                 tags: Sequence[str] = ()) -> Generator[Reply, None, None]:
        """Run a batch back to back; yield each reply in order (see the module docstring).

        `tags` (one per request, or none) go to the rescue manifest as their requests
        are handed to the launcher. Closing the generator once every reply is taken
        leaves the launcher running for the next batch; closing it (or an exception)
        earlier closes the launcher.
        """
        feed = self._begin("run_many", requests, tags)
        try:
            while True:
                self._feed(feed)
                reply = self._take_reply()
                if reply is not None:
                    feed.taken += 1
                    yield reply
                elif not self._more(feed):
                    return
        except BaseException as e:
            drained = self._cut_short(feed, e)
            error = e
        finally:
            self._busy = False
        # Ctrl-C (or an error) in the middle: the runs that had ended are kept.
        yield from drained
        raise error

    @property
    def logging(self) -> bool:
        """Whether tagged runs are rescued: each reply is in the launcher's log, with its
        request's tag in the manifest, before quadscope sees it (module docstring)."""
        return self._manifest is not None

    def run_chunks(self, requests: Iterable[Request],
                   tags: Sequence[str] = ()) -> Generator[list[Reply], None, None]:
        """Run a batch back to back; yield its replies in order, at each look every one come.

        As `run_many`, but a list of replies a look: the caller stores a list at once.
        Resuming the generator acknowledges the list it yielded; until then its replies
        are still among the last MAX_AHEAD_RUNS the launcher logged (no request is
        written meanwhile), so its tagged runs are rescued if quadscope dies. Closing
        the generator at a yield (the list not acknowledged: the caller could not store
        it) closes the launcher without goodbye, so its logs stay for `run.rescue`.
        Ctrl-C (or an error) while runs are under way yields what had ended, then re-raises.
        """
        feed = self._begin("run_chunks", requests, tags)
        try:
            while True:
                self._feed(feed)
                replies = self._take_replies()
                if replies:
                    yield replies
                    feed.taken += len(replies)
                elif not self._more(feed):
                    return
        except BaseException as e:
            drained = self._cut_short(feed, e)
            error = e
        finally:
            self._busy = False
        yield drained  # Ctrl-C (or an error) in the middle: the runs that had ended are kept
        raise error

    def _begin(self, what: str, requests: Iterable[Request], tags: Sequence[str]) -> _Feed:
        """A batch's state, the launcher marked busy with it."""
        assert self._req_w is not None, f"{what}() after close()"
        assert not self._busy, f"{what}() while another batch is under way"
        self._busy = True
        return _Feed(iter(requests), iter(tags) if self._manifest is not None and tags else None,
                     started=time.monotonic())

    def _more(self, feed: _Feed) -> bool:
        """False once the batch is done; else wait until a look at the replies is worth it."""
        if feed.done:
            return False
        self._wait(feed.sent - feed.taken, feed.taken, time.monotonic() - feed.started,
                   bool(feed.ahead))
        return True

    def _cut_short(self, feed: _Feed, error: BaseException) -> list[Reply]:
        """The replies of the runs that had ended when `error` cut the batch short, the
        launcher closed. Re-raises `error` when nothing was under way (the launcher stays
        for the next batch), when no run had ended, or when the caller closed the batch."""
        if feed.done:
            raise error
        drained = self._abort() if self._req_w is not None else []
        if not drained or isinstance(error, GeneratorExit):
            raise error
        return drained

    def _feed(self, feed: _Feed) -> None:
        """Write requests ahead (tags noted first), within _AHEAD_BYTES and MAX_AHEAD_RUNS."""
        added = feed.sent
        new: list[str] = []
        while len(feed.ahead) < _AHEAD_BYTES and feed.sent - feed.taken < MAX_AHEAD_RUNS:
            nxt = next(feed.todo, None)
            if nxt is None:
                break
            feed.ahead += self._encode(nxt)
            feed.sent += 1
            if feed.tagged is not None:
                new.append(next(feed.tagged, ""))
        if new:
            self._note(new)  # before the requests go: their replies may come at once
        self._sent_total += feed.sent - added
        if feed.ahead:
            feed.ahead = feed.ahead[self._write_ahead(feed.ahead):]

    def _take_replies(self) -> list[Reply]:
        """Every whole reply in the buffer, taken out of it."""
        replies, end = _replies_in(self._buf, self.events)
        self._buf = self._buf[end:]
        return replies

    def _note(self, tags: list[str]) -> None:
        """Tags of the requests about to be sent, in the manifest (module docstring).

        It keeps the last MANIFEST_KEEP or more: every reply quadscope has not stored
        is among the last MAX_AHEAD_RUNS + 1 sent. Past twice that, it is rewritten.
        """
        if self._manifest is None:
            return  # dropped (see _drop_manifest)
        first = self._sent_total + 1
        new = list(enumerate(tags, first))
        self._noted.extend(new)
        try:
            if len(self._noted) > 2 * MANIFEST_KEEP:
                del self._noted[:-MANIFEST_KEEP]
                os.ftruncate(self._manifest, 0)  # O_APPEND: the next write goes at 0
                os.write(self._manifest, self._manifest_head + manifest_lines(self._noted))
            else:
                os.write(self._manifest, manifest_lines(new))
        except OSError:  # a full disk: the runs go on, without a rescue
            self._drop_manifest()

    def _drop_manifest(self) -> None:
        """Go on without a rescue: the manifest could not be written."""
        if self._manifest is not None:
            os.close(self._manifest)
            self._manifest = None
        self._noted = []

    @property
    def closed(self) -> bool:
        """True once closed: by `close()`, or by a run or batch that was cut short."""
        return self._req_w is None

    def _write_ahead(self, data: bytes) -> int:
        """Write what the request pipe takes now, without blocking: the bytes written."""
        assert self._req_w is not None
        os.set_blocking(self._req_w, False)
        try:
            return os.write(self._req_w, data)
        except BlockingIOError:
            return 0
        finally:
            os.set_blocking(self._req_w, True)

    def _wait(self, outstanding: int, taken: int, elapsed_s: float, writing: bool) -> None:
        """Wait until a look at the reply pipe is worth it (module docstring), and look.

        While requests are still to be written, the request pipe having room wakes
        us too (a request larger than the pipe goes in pieces as the launcher reads).
        Reads only what is there: never blocks once woken.
        """
        assert self._req_w is not None
        mean_s = elapsed_s / taken if taken else None
        poller = select.poll()
        poller.register(self._rep_r, select.POLLIN)
        if writing:
            poller.register(self._req_w, select.POLLOUT)
            poller.poll(LOOK_S * 1000)
        elif outstanding <= 1 or mean_s is None or mean_s >= SLOW_RUN_S:
            poller.poll()  # the next reply wakes us
        else:
            time.sleep(min(LOOK_S, 0.5 * outstanding * mean_s))
        if any(fd == self._rep_r for fd, _ in poller.poll(0)):
            self._read_more()

    def _abort(self) -> list[Reply]:
        """Close the launcher (killing the run in flight) and return the replies it had sent."""
        assert self._req_w is not None
        os.close(self._req_w)
        self._req_w = None
        replies = []
        try:
            with contextlib.suppress(OSError, RuntimeError, ValueError):
                while True:
                    reply = self._take_reply()
                    if reply is not None:
                        replies.append(reply)
                        continue
                    chunk = os.read(self._rep_r, 65536)
                    if not chunk:
                        break
                    self._buf += chunk
        finally:
            self._finish()
        return replies

    def _take_reply(self) -> Reply | None:
        """The next whole reply in the buffer, taken out of it, or None."""
        reply, self._buf = next_reply(self._buf, self.events)
        return reply

    def _read_more(self) -> None:
        chunk = os.read(self._rep_r, 65536)
        if not chunk:
            raise RuntimeError("the quadscope launcher stopped early"
                               + (f": {self._buf!r}" if self._buf else ""))
        self._buf += chunk

    def _read_line(self) -> str:
        while b"\n" not in self._buf:
            self._read_more()
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode()

    def close(self) -> None:
        """End the launcher: goodbye and EOF on its request pipe (aborting a run in
        flight), then reap it."""
        if getattr(self, "_req_w", None) is None:
            return  # closed already, or the launcher never started
        assert self._req_w is not None
        if not self._busy:  # every reply taken: nothing for the launcher to rescue
            with contextlib.suppress(OSError):
                os.write(self._req_w, b"bye\n")
        os.close(self._req_w)
        self._req_w = None
        self._finish()

    def _finish(self) -> None:
        os.close(self._rep_r)
        # Already reaped when the host program reaps every child (a SIGCHLD handler).
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self._pid, 0)
        if self._manifest is not None:
            os.close(self._manifest)
            self._manifest = None
            logs = rescue_logs(f"{self._stem}{RESCUE_SUFFIX}")
            # Kept only when the launcher left replies that tagged runs may be among.
            if not self._noted or not any(log.exists() for log in logs):
                for path in (Path(f"{self._stem}{MANIFEST_SUFFIX}"), *logs):
                    path.unlink(missing_ok=True)

    def __del__(self) -> None:
        self.close()
