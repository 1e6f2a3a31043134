"""Runs a killed quadscope had finished but not yet read: stored at the next start.

Contract: `rescue_tag(store_key(location), sweep, seq, planned, at)` is the
one-line tag the runner gives each job of a batch; the launcher's manifest keeps it
(`measure.resident`). `ingest(store)` finds, in the rescue directory, the
replies a launcher logged for a quadscope that died before storing them (launcher.c's
"Rescue": each reply is written to the launcher's log before it is sent), pairs each
with its tag, and stores as runs those that belong to `store` and are not stored yet;
it returns how many it stored, and removes the files it used up and the manifests of
launchers that ended with nothing left to rescue. Files for another store are left
for that store's next opening (runs for a SQLite file that no longer exists are
dropped: nothing could store them, and their files stayed for good; so are reply logs
with no manifest, whose runs no tag names), and so are runs of a sweep another live
process runs (a `--resume` of it: its next seqs are its own), and the files of a
launcher still running SETTLE_S after its quadscope died; a sweep is claimed while its runs are
stored, as a run claims it. A damaged file is skipped, never fatal: rescue is a bonus
on top of what the store already holds.

Why: a batch's runs go back to back (issue 11's per-run cost), and quadscope
reads their replies every LOOK_S or so; a SIGKILL in between (of quadscope, or of
its whole process group with the launcher: a CI job cancelled, `timeout -s KILL`,
the OOM killer) would lose the runs that had ended since the last look. The runs'
numbers (`seq`) were fixed when the batch was handed out, so a rescued run takes
exactly the place it would have had. `started_at` is the batch's start (for the
record only).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from quadscope.errors import ProgramError, QuadscopeError
from quadscope.measure.host import is_alive, pid_runs, this_process
from quadscope.measure.launcher import Job, ProcessExecutor
from quadscope.measure.resident import (
    MANIFEST_SUFFIX,
    RESCUE_SUFFIX,
    Reply,
    default_rescue_dir,
    rescue_logs,
    split_replies,
)
from quadscope.model import Run, Sweep, read_axes
from quadscope.run.plan import PlannedRun
from quadscope.store import Store

# How long the next quadscope waits for a launcher whose quadscope just died to end (it
# kills the run in flight and everything the run started; a reply it writes meanwhile
# goes to its log first).
SETTLE_S = 5.0


def store_key(location: str) -> str:
    """A store's location as tags name it: a SQLite file's real path, a URL as it is."""
    return location if "://" in location else os.path.realpath(location)


def rescue_tag(key: str, sweep: Sweep, seq: int, planned: PlannedRun, at: float) -> str:
    """Which run a request is, as one JSON line (see the module docstring); `key` is
    `store_key(store.location)`, and the sweep is named by its id and creation time."""
    tag = {"store": key, "sweep": sweep.id, "made": sweep.created_at, "seq": seq,
           "variant": planned.variant, "size_n": planned.size_n,
           "repeat": planned.repeat, "warmup": planned.warmup, "at": at}
    if planned.axes:  # several sizes: the run's other axes, so a rescued run keeps them
        tag["axes"] = dict(planned.axes)
    return json.dumps(tag, separators=(",", ":"))


def rescue_tags(key: str, sweep: Sweep, first_seq: int, planned: Sequence[PlannedRun],
                at: float) -> list[str]:
    """`rescue_tag` of each planned run, numbered from `first_seq`: the same lines, the
    sweep's part encoded once (a batch may hold a whole plan: this is on every run's path)."""
    head = json.dumps({"store": key, "sweep": sweep.id, "made": sweep.created_at},
                      separators=(",", ":"))[:-1]
    at_text = json.dumps(at)
    variants = {v: json.dumps(v) for v in {p.variant for p in planned}}
    return [f'{head},"seq":{first_seq + k},"variant":{variants[p.variant]},'
            f'"size_n":{p.size_n},"repeat":{p.repeat},"warmup":{"true" if p.warmup else "false"},'
            f'"at":{at_text}{_axes_text(p)}}}'
            for k, p in enumerate(planned)]


def _axes_text(planned: PlannedRun) -> str:
    """The tag's `axes` member for a run of several sizes (as `rescue_tag` writes it), else ''."""
    if not planned.axes:
        return ""
    return ',"axes":' + json.dumps(dict(planned.axes), separators=(",", ":"))


def _launcher_runs(pid: int) -> bool:
    """Whether `pid` is still a running launcher (a reused pid is another program's)."""
    try:
        name = Path(f"/proc/{pid}/comm").read_text().strip()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        return pid_runs(pid)
    return name.startswith("quadscope-launc") and pid_runs(pid)  # comm: 15 characters


def _settling(launcher_pid: int) -> bool:
    """True when the launcher still runs SETTLE_S on: its quadscope died a moment ago and
    it is killing the run in flight (its whole cgroup) before it exits."""
    deadline = time.monotonic() + SETTLE_S
    while _launcher_runs(launcher_pid):
        if time.monotonic() > deadline:
            return True
        time.sleep(0.02)
    return False


def _manifest(path: Path) -> tuple[tuple[int, int, tuple[str, ...]], dict[int, dict[str, Any]]]:
    """((quadscope pid, launcher pid, events), tags by request index) of one manifest."""
    lines = path.read_bytes().decode("utf-8", "replace").splitlines()
    head = lines[0].split() if lines else []
    if len(head) != 5 or head[:2] != ["manifest", "1"]:
        raise ValueError(f"{path} is not a rescue manifest")
    events = () if head[4] == "-" else tuple(head[4].split(","))
    tags: dict[int, dict[str, Any]] = {}
    for line in lines[1:]:
        index, _, tag = line.partition(" ")
        with contextlib.suppress(ValueError):  # a torn last line
            tags[int(index)] = json.loads(tag)
    return (int(head[2]), int(head[3]), events), tags


def _logged(path: Path, events: tuple[str, ...]) -> dict[int, Reply]:
    """The whole replies in one reply log, by their number (launcher.c's "Rescue").

    "replies FIRST" heads a log; "rescue N" heads the single file older launchers
    wrote at exit, whose last reply is the N-th.
    """
    data = path.read_bytes()
    head, _, rest = data.partition(b"\n")
    word, _, count = head.decode("ascii", "replace").partition(" ")
    if word not in ("replies", "rescue") or not count.isdigit():
        raise ValueError(f"{path} is not a reply log")
    replies = split_replies(rest, events)
    first = int(count) if word == "replies" else int(count) - len(replies) + 1
    return {first + k: reply for k, reply in enumerate(replies)}


def _rescued(paths: list[Path], events: tuple[str, ...],
             tags: dict[int, dict[str, Any]]) -> Iterator[tuple[dict[str, Any], Run]]:
    """(tag, run) for each whole reply in the logs at `paths` that has a tag."""
    replies: dict[int, Reply] = {}
    for path in paths:
        with contextlib.suppress(ValueError):  # a log cut short at its head: the other holds
            replies.update(_logged(path, events))
    for index, reply in sorted(replies.items()):
        tag = tags.get(index)
        if tag is None:
            continue
        try:
            measurement = ProcessExecutor.measurement_of(Job(("?",), None), reply)
        except ProgramError:
            continue  # the program could not be run: the sweep stopped there
        yield tag, Run(sweep_id=int(tag["sweep"]), seq=int(tag["seq"]), variant=tag["variant"],
                       size_n=int(tag["size_n"]), repeat=int(tag["repeat"]),
                       warmup=bool(tag["warmup"]), started_at=float(tag["at"]),
                       measurement=measurement, axes=read_axes(tag.get("axes")))


def _store_new(store: Store, runs: list[tuple[float, Run]]) -> tuple[int, int]:
    """Add the runs whose sweep (id and creation time) is in `store` and lacks their seq:
    (how many were stored, how many wait because another live process runs their sweep)."""
    stored = waiting = 0
    me = this_process()
    taken: dict[int, set[int] | None] = {}  # None: not this store's sweep
    busy: set[int] = set()  # sweeps another live process runs: their runs wait
    claimed: list[int] = []
    try:
        for made, run in sorted(runs, key=lambda mr: (mr[1].sweep_id, mr[1].seq)):
            sweep_id = run.sweep_id
            if sweep_id not in taken:
                taken[sweep_id] = None
                try:
                    same = store.get_sweep(sweep_id).created_at == made
                except QuadscopeError:
                    same = False  # no such sweep here (the store was made anew)
                if same and store.claim(sweep_id, me, is_alive) is not None:
                    busy.add(sweep_id)  # a live `--resume` of it owns its next seqs
                elif same:
                    claimed.append(sweep_id)
                    taken[sweep_id] = {r.seq for r in store.runs(sweep_id)}
            seqs = taken[sweep_id]
            if sweep_id in busy:
                waiting += 1
            if seqs is None or run.seq in seqs:
                continue
            store.add_run(run)
            seqs.add(run.seq)
            stored += 1
        if stored:
            # Committed here, not at the command's end: another quadscope that ingested the
            # same rescue at the same moment makes the commit refuse its runs (StoreError,
            # which `ingest` catches and the next ingest finds stored), not fail the command.
            store.next_seq(runs[0][1].sweep_id)
    finally:
        for sweep_id in claimed:
            # A store that cannot let go now (locked, full) must not hide why we are here;
            # the claim is this process's and ends with it (`host.is_alive`).
            with contextlib.suppress(QuadscopeError):
                store.release(sweep_id, me)
    return stored, waiting


def _may_open(key: object) -> bool:
    """Whether the store a tag names could still be opened: a URL, or a file that exists.

    A SQLite file removed since (a test's or CI job's temporary store) never opens again:
    its runs are dropped with the files, which once stayed in the rescue folder for good.
    """
    return isinstance(key, str) and ("://" in key or os.path.exists(key))


def _drop_unpaired(directory: Path) -> None:
    """Remove reply logs with no manifest beside them whose quadscope is dead and which no
    one wrote for SETTLE_S: without their tags they name no run (a launcher whose manifest
    could not be made, or was removed), and they stayed for good."""
    try:
        logs = list(directory.glob(f"*{RESCUE_SUFFIX}*"))
    except OSError:
        return
    for log in logs:
        stem, _, _ = log.name.partition(RESCUE_SUFFIX)
        owner = stem.split("-", 1)[0]
        if (directory / f"{stem}{MANIFEST_SUFFIX}").exists() or not owner.isdigit():
            continue
        with contextlib.suppress(OSError):
            if not pid_runs(int(owner)) and time.time() - log.stat().st_mtime > SETTLE_S:
                log.unlink()


def ingest(store: Store, directory: Path | None = None) -> int:
    """Store the rescued runs that belong to `store`; see the module docstring."""
    directory = directory or default_rescue_dir()
    try:
        manifests = sorted(directory.glob(f"*{MANIFEST_SUFFIX}"))
    except OSError:
        return 0
    stored = 0
    key = store_key(store.location)
    _drop_unpaired(directory)
    for manifest in manifests:
        stem = str(manifest)[: -len(MANIFEST_SUFFIX)]
        rescue = Path(stem + RESCUE_SUFFIX)
        logs = [rescue, *rescue_logs(rescue)]  # the first: an older launcher's single file
        try:
            (quadscope_pid, launcher_pid, events), tags = _manifest(manifest)
            if pid_runs(quadscope_pid):
                continue  # its quadscope still runs: its runs are its own to store
            if _settling(launcher_pid):
                continue  # its launcher is still at it after SETTLE_S: left for next time
            found = [log for log in logs if log.exists()]
            if not found:
                # Its launcher ended with nothing to rescue (or an older one was killed
                # while writing its rescue: a .tmp, never renamed).
                Path(f"{rescue}.tmp").unlink(missing_ok=True)
                manifest.unlink()
                continue
            ours, foreign = [], 0
            for tag, run in _rescued(found, events, tags):
                if tag.get("store") == key:  # tags hold store_key already
                    ours.append((float(tag.get("made", 0.0)), run))
                elif _may_open(tag.get("store")):
                    foreign += 1
            added, waiting = _store_new(store, ours)
            stored += added
            if not foreign and not waiting:
                for path in (*found, manifest):
                    path.unlink(missing_ok=True)
        except (OSError, ValueError, KeyError, TypeError, RuntimeError, QuadscopeError):
            continue  # damaged, or the store refused: left alone
    return stored


__all__ = ["ingest", "rescue_tag", "rescue_tags", "store_key"]
