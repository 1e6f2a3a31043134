"""Runs a killed quadscope left with its launcher: the manifest, the rescue file, ingestion."""

from __future__ import annotations

import os
import platform
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import measurement
from quadscope.errors import ToolMissingError
from quadscope.measure.resident import (
    MANIFEST_KEEP,
    MANIFEST_SUFFIX,
    RESCUE_RING,
    RESCUE_SUFFIX,
    Request,
    ResidentLauncher,
    build_launcher,
    manifest_header,
    manifest_lines,
    split_replies,
)
from quadscope.model import Owner, Run, Sweep
from quadscope.run.plan import PlannedRun
from quadscope.run.rescue import ingest, rescue_tag, rescue_tags, store_key
from quadscope.store import SqliteStore

REPLY = b"done 1000000 0 0 0 500 100 1500 60 0 1 0 0\n"
WITH_TAIL = b"done 2000000 0 256 0 500 100 1500 60 0 1 0 5\noops\n"


def _dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_split_replies_reads_tails_and_leaves_out_a_torn_last_reply() -> None:
    replies = split_replies(REPLY + WITH_TAIL + b"done 3000000 0 0 0 5", ())
    assert [r.wall_ns for r in replies] == [1000000, 2000000]
    assert replies[1].stderr_tail == "oops\n" and replies[1].status == 256


def test_a_tag_with_a_newline_is_refused() -> None:
    with pytest.raises(ValueError, match="newline"):
        manifest_lines([(1, "a\nb")])


def _files(directory: Path, quadscope_pid: int, tags: list[str], replies: bytes, total: int,
           stem: str = "1-x") -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{stem}{MANIFEST_SUFFIX}").write_bytes(
        manifest_header(quadscope_pid, _dead_pid(), ())
        + manifest_lines(list(enumerate(tags, total - len(tags) + 1))))
    (directory / f"{stem}{RESCUE_SUFFIX}").write_bytes(b"rescue %d\n" % total + replies)


def _store(path: Path, stored: int) -> SqliteStore:
    store = SqliteStore(path)
    sweep = store.create_sweep(Sweep(id=0, name="s", mode="sizes", command=("p", "{n}"),
                                     sizes=(10,), repeat=5))
    for seq in range(stored):
        store.add_run(Run(sweep.id, seq, "A", 10, seq, False, 0.0, measurement(0.5)))
    return store


def _tags(location: Path, seqs: range, made: float = 0.0) -> list[str]:
    sweep = Sweep(id=1, name="s", mode="sizes", command=("p", "{n}"), created_at=made)
    return [rescue_tag(store_key(str(location)), sweep, seq, PlannedRun("A", 10, seq), 123.0)
            for seq in seqs]


@pytest.mark.slow
def test_ingest_stores_the_runs_the_store_lacks_and_removes_the_files(tmp_path: Path) -> None:
    """Replies 3..5 of 5 are rescued; runs 0..3 are stored already: runs 4 and 5 are added,
    each in its place, with what its reply measured."""
    db, rescue = tmp_path / "r.db", tmp_path / "rescue"
    _files(rescue, _dead_pid(), _tags(db, range(2, 5)), REPLY + REPLY + WITH_TAIL, 5)
    with _store(db, 3) as store:
        assert ingest(store, rescue) == 2
        runs = store.runs(1)
    assert [r.seq for r in runs] == [0, 1, 2, 3, 4]
    assert runs[3].measurement.wall_s == pytest.approx(0.001)
    assert runs[4].measurement.stderr_tail == "oops\n" and runs[4].measurement.exit_code == 1
    assert (runs[4].repeat, runs[4].started_at) == (4, 123.0)
    assert not list(rescue.iterdir())


@pytest.mark.slow
def test_ingest_leaves_what_is_not_its_own(tmp_path: Path) -> None:
    """Another store's runs wait for that store; a live quadscope's runs are its own."""
    db, rescue = tmp_path / "r.db", tmp_path / "rescue"
    _store(tmp_path / "other.db", 0).close()
    _files(rescue, _dead_pid(), _tags(tmp_path / "other.db", range(0, 2)), REPLY * 2, 2, "1-a")
    _files(rescue, os.getpid(), _tags(db, range(0, 2)), REPLY * 2, 2, "1-b")
    with _store(db, 0) as store:
        assert ingest(store, rescue) == 0
        assert store.runs(1) == []
    assert len(list(rescue.iterdir())) == 4


@pytest.mark.slow
def test_the_runs_of_a_store_file_removed_since_go_with_their_files(tmp_path: Path) -> None:
    """A killed sweep into a temporary store (a test's, a CI job's) left its launcher's files
    in ~/.cache/quadscope/rescue for good: 25 manifests of /tmp stores long gone."""
    db, rescue = tmp_path / "r.db", tmp_path / "rescue"
    _files(rescue, _dead_pid(), _tags(tmp_path / "gone.db", range(0, 2)), REPLY * 2, 2, "1-a")
    _files(rescue, _dead_pid(), _tags(tmp_path / "gone.db", range(0, 1)) + _tags(db, range(0, 1)),
           REPLY * 2, 2, "1-b")
    with _store(db, 0) as store:
        assert ingest(store, rescue) == 1  # its own run of the mixed launcher is stored
        assert [r.seq for r in store.runs(1)] == [0]
    assert list(rescue.iterdir()) == []


@pytest.mark.slow
def test_damaged_files_are_skipped_and_stale_manifests_removed(tmp_path: Path) -> None:
    db, rescue = tmp_path / "r.db", tmp_path / "rescue"
    rescue.mkdir()
    (rescue / f"1-c{MANIFEST_SUFFIX}").write_bytes(b"not a manifest\n")
    (rescue / f"1-c{RESCUE_SUFFIX}").write_bytes(b"rescue 1\n" + REPLY)
    (rescue / f"1-d{MANIFEST_SUFFIX}").write_bytes(manifest_header(_dead_pid(), _dead_pid(), ()))
    # A launcher killed while writing its rescue leaves a .tmp, never renamed: it goes too.
    (rescue / f"1-d{RESCUE_SUFFIX}.tmp").write_bytes(b"rescue 1\n" + REPLY[:5])
    with _store(db, 0) as store:
        assert ingest(store, rescue) == 0
    assert sorted(p.name for p in rescue.iterdir()) == [f"1-c{MANIFEST_SUFFIX}",
                                                          f"1-c{RESCUE_SUFFIX}"]


@pytest.fixture(scope="module")
def launcher_path() -> str:
    try:
        return build_launcher()
    except ToolMissingError as e:
        pytest.skip(f"no C launcher to test: {e}")


@pytest.mark.slow
def test_a_launcher_closed_with_its_goodbye_leaves_nothing(launcher_path: str,
                                                         tmp_path: Path) -> None:
    """300 tagged runs: the manifest keeps the last ones and goes, with no rescue, at close."""
    rescue = tmp_path / "rescue"
    launcher = ResidentLauncher(launcher_path, rescue_dir=rescue)
    request = Request("/bin/true", ("/bin/true",), (), 10.0)
    tags = [f"t{k}" for k in range(300)]
    assert len(list(launcher.run_many([request] * 300, tags))) == 300
    (manifest,) = rescue.glob(f"*{MANIFEST_SUFFIX}")
    lines = manifest.read_text().splitlines()
    assert MANIFEST_KEEP <= len(lines) - 1 <= 2 * MANIFEST_KEEP
    assert lines[-1] == "300 t299" and lines[1] == f"{301 - len(lines) + 1} t{300 - len(lines) + 1}"
    launcher.close()
    assert not list(rescue.iterdir())


@pytest.mark.slow
def test_a_launcher_left_without_a_goodbye_keeps_its_logged_replies(launcher_path: str,
                                                                   tmp_path: Path) -> None:
    """Its request pipe closed without "bye" (quadscope died): the two logs stay, numbered
    from their first reply, and hold at least the last RESCUE_RING replies."""
    rescue = tmp_path / "rescue"
    launcher = ResidentLauncher(launcher_path, rescue_dir=rescue)
    request = Request("/bin/sh", ("/bin/sh", "-c", "echo err >&2"), (), 10.0)
    assert len(list(launcher.run_many([request] * 200, [f"t{k}" for k in range(200)]))) == 200
    launcher._busy = True  # as if in a batch: close() says no goodbye
    launcher.close()
    heads, numbered = [], {}
    for log in sorted(rescue.glob(f"*{RESCUE_SUFFIX}.[01]")):
        head, _, rest = log.read_bytes().partition(b"\n")
        heads.append(head)
        first = int(head.split()[1])
        numbered.update(enumerate(split_replies(rest, ()), first))
    assert heads == [b"replies 1", b"replies %d" % (RESCUE_RING + 1)]
    assert sorted(numbered) == list(range(1, 201))
    assert all(r.stderr_tail == "err\n" for r in numbered.values())


@pytest.mark.slow
def test_a_sigkilled_launcher_has_logged_every_reply_it_sent(launcher_path: str,
                                                             tmp_path: Path) -> None:
    """SIGKILL of the launcher itself (as with quadscope's whole process group): every reply
    it sent is in its logs already, and the next opening stores each run once."""
    db, rescue = tmp_path / "r.db", tmp_path / "rescue"
    with _store(db, 0) as store:
        sweep = store.get_sweep(1)
        launcher = ResidentLauncher(launcher_path, rescue_dir=rescue)
        request = Request("/bin/true", ("/bin/true",), (), 10.0)
        tags = [rescue_tag(store_key(str(db)), sweep, seq, PlannedRun("A", 10, seq), 1.0)
                for seq in range(300)]
        replies = launcher.run_many([request] * 300, tags)
        taken = [next(replies) for _ in range(250)]
        os.kill(launcher._pid, signal.SIGKILL)
        os.waitpid(launcher._pid, 0)
        assert all(r.status == 0 for r in taken)
        for seq in range(200):  # quadscope stored these; the 50 after it had not yet
            store.add_run(Run(1, seq, "A", 10, seq, False, 0.0, measurement(0.5)))
        logged = {}
        for log in rescue.glob(f"*{RESCUE_SUFFIX}.[01]"):
            head, _, rest = log.read_bytes().partition(b"\n")
            logged.update(enumerate(split_replies(rest, ()), int(head.split()[1])))
        assert max(logged) >= 250 and min(logged) <= max(logged) - RESCUE_RING + 1
        assert sorted(logged) == list(range(min(logged), max(logged) + 1))
        # The next quadscope finds the one that wrote the manifest dead, as it would be.
        (manifest,) = rescue.glob(f"*{MANIFEST_SUFFIX}")
        head, _, rest = manifest.read_bytes().partition(b"\n")
        manifest.write_bytes(manifest_header(_dead_pid(), launcher._pid, ()) + rest)
        assert ingest(store, rescue) >= 50
        assert [r.seq for r in store.runs(1)] == list(range(max(logged)))
        assert not list(rescue.iterdir())
    launcher._req_w = None  # already dead: nothing to close


@pytest.mark.slow
def test_an_unwritable_rescue_directory_never_fails_the_runs(launcher_path: str,
                                                            tmp_path: Path) -> None:
    """The rescue is a bonus: where its directory cannot be made, runs go on without it."""
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    launcher = ResidentLauncher(launcher_path, rescue_dir=blocked / "rescue")
    request = Request("/bin/true", ("/bin/true",), (), 10.0)
    assert [r.status for r in launcher.run_many([request] * 3, ["a", "b", "c"])] == [0, 0, 0]
    launcher.close()


@pytest.mark.slow
def test_a_store_made_anew_gets_none_of_the_old_sweeps_runs(tmp_path: Path) -> None:
    """The rescue names its sweep by id and creation time: a store deleted and made again
    after the kill, whose sweep 1 is another, is left as it is, and nothing fails."""
    db, rescue = tmp_path / "r.db", tmp_path / "rescue"
    _files(rescue, _dead_pid(), _tags(db, range(0, 2), made=12345.0), REPLY * 2, 2)
    with _store(db, 0) as store:
        assert store.get_sweep(1).created_at != 12345.0
        assert ingest(store, rescue) == 0
        assert store.runs(1) == []


@pytest.mark.slow
def test_the_manifest_keeps_each_tags_own_index_across_untagged_runs(
        launcher_path: str, tmp_path: Path) -> None:
    """Untagged runs between batches leave gaps in the numbering; trimmed, the manifest
    still pairs each tag with its own request."""
    rescue = tmp_path / "rescue"
    launcher = ResidentLauncher(launcher_path, rescue_dir=rescue)
    request = Request("/bin/true", ("/bin/true",), (), 10.0)
    assert len(list(launcher.run_many([request] * 200, [f"t{k}" for k in range(1, 201)]))) == 200
    launcher.run(request)
    launcher.run(request)
    assert len(list(launcher.run_many([request] * 60, [f"t{k}" for k in range(203, 263)]))) == 60
    (manifest,) = rescue.glob(f"*{MANIFEST_SUFFIX}")
    lines = manifest.read_text().splitlines()[1:]
    assert all(line == f"{i} t{i}" for line in lines for i in [int(line.split()[0])])
    assert lines[-1] == "262 t262"
    launcher.close()


class _RacedStore:
    """A store another quadscope races: when the first rescued run is added, the other
    process stores that same run (and commits) first."""

    def __init__(self, store: SqliteStore, path: Path) -> None:
        self._store, self._path, self._raced = store, path, False

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)

    def add_run(self, run: Run) -> None:
        if not self._raced:
            self._raced = True
            with SqliteStore(self._path) as other:
                other.add_run(run)
        self._store.add_run(run)


@pytest.mark.slow
def test_two_quadscopes_ingesting_one_rescue_store_each_run_once(tmp_path: Path) -> None:
    """The run the other process stored first is refused at the commit, inside ingest:
    the command goes on, the files stay until an ingest finds every run stored."""
    db, rescue = tmp_path / "r.db", tmp_path / "rescue"
    _files(rescue, _dead_pid(), _tags(db, range(0, 2)), REPLY * 2, 2)
    with _store(db, 0) as store:
        raced = _RacedStore(store, db)
        ingest(raced, rescue)  # type: ignore[arg-type]
        assert [r.seq for r in store.runs(1)] == [0, 1]
        assert len(list(rescue.iterdir())) == 2
        assert ingest(store, rescue) == 0
        assert [r.seq for r in store.runs(1)] == [0, 1]
    assert not list(rescue.iterdir())


@pytest.mark.slow
def test_runs_of_a_sweep_another_live_process_runs_wait_for_it(tmp_path: Path) -> None:
    """A live `--resume` owns its sweep's next seqs: rescued runs of that sweep wait (the
    files stay) until it has ended, and are then stored where its runs left room."""
    db, rescue = tmp_path / "r.db", tmp_path / "rescue"
    _files(rescue, _dead_pid(), _tags(db, range(2, 4)), REPLY * 2, 4)
    resumer = subprocess.Popen(["sleep", "30"])
    try:
        with _store(db, 2) as store:
            owner = Owner(pid=resumer.pid, host=platform.node(), boot_id="", start_ticks=0,
                          since=0.0)
            assert store.claim(1, owner, lambda o: True) is None
            assert ingest(store, rescue) == 0
            assert len(list(rescue.iterdir())) == 2 and [r.seq for r in store.runs(1)] == [0, 1]
            resumer.kill()
            resumer.wait(timeout=10)
            assert ingest(store, rescue) == 2
            assert [r.seq for r in store.runs(1)] == [0, 1, 2, 3]
            # Ingest let go of the sweep: a later run or resume can claim it.
            assert store.claim(1, owner, lambda o: True) is None
        assert not list(rescue.iterdir())
    finally:
        resumer.kill()
        resumer.wait(timeout=10)


def test_a_batchs_tags_are_each_runs_tag() -> None:
    """rescue_tags builds the sweep's part once; each line is exactly rescue_tag's."""
    sweep = Sweep(id=7, name="s\n\"x", mode="sizes", command=("p", "{n}"), created_at=12.5)
    planned = [PlannedRun("A", 10, 0, warmup=True), PlannedRun("B", 2**40, 3),
               PlannedRun("A", 1, 1), PlannedRun("A", 4, 0, axes=(("m", 8), ("k", 2)))]
    key = store_key("/tmp/a \"b\".db")
    assert rescue_tags(key, sweep, 5, planned, 99.25) == [
        rescue_tag(key, sweep, 5 + k, p, 99.25) for k, p in enumerate(planned)]


@pytest.mark.slow
def test_reply_logs_with_no_manifest_of_a_dead_quadscope_are_removed(tmp_path: Path) -> None:
    """Without their manifest no reply names a run; such logs stayed in the folder for good."""
    db, rescue = tmp_path / "r.db", tmp_path / "rescue"
    rescue.mkdir()
    dead, old = _dead_pid(), time.time() - 60
    for name in (f"{dead}-a{RESCUE_SUFFIX}.0", f"{dead}-a{RESCUE_SUFFIX}.tmp",
                 f"{os.getpid()}-b{RESCUE_SUFFIX}.0", f"{dead}-c{RESCUE_SUFFIX}.0"):
        (rescue / name).write_bytes(b"rescue 1\n" + REPLY)
        if "-c" not in name:
            os.utime(rescue / name, (old, old))  # -c: written a moment ago, left to settle
    with _store(db, 0) as store:
        assert ingest(store, rescue) == 0
    assert sorted(p.name for p in rescue.iterdir()) == sorted(
        [f"{os.getpid()}-b{RESCUE_SUFFIX}.0", f"{dead}-c{RESCUE_SUFFIX}.0"])  # pids sort either way
