"""One process runs a sweep at a time: a live owner refuses a resume by name, a dead one is taken over.

Every test runs on both back ends (SQLite and a throwaway PostgreSQL server).
"""

from __future__ import annotations

import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bad_inputs import fake_measurement, run_argv
from quadscope.errors import SweepBusyError, UnknownRunError
from quadscope.measure.clock import FakeClock
from quadscope.measure.host import is_alive, this_process
from quadscope.measure.launcher import FakeExecutor
from quadscope.model import Owner, Run, Sweep
from quadscope.run.runner import STALE_AFTER_S, resume_sweep
from quadscope.store import Store, open_store

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def store(store_location: Path | str) -> Iterator[Store]:
    with open_store(store_location) as s:
        yield s


def _sweeps(location: Path | str) -> list[tuple[Sweep, int]]:
    try:
        with open_store(location, readonly=True) as s:
            return s.list_sweeps()
    except UnknownRunError:  # not created yet
        return []


def _interrupted(store: Store, owner: Owner | None) -> Sweep:
    sweep = store.create_sweep(Sweep(id=0, name="s", mode="sizes", command=("p", "{n}"),
                                     sizes=(1, 2, 3, 4), repeat=1, warmup=0), owner=owner)
    return sweep


def test_claim_is_refused_while_the_holder_lives(store: Store) -> None:
    """claim returns the live holder and leaves its claim in place."""
    holder = Owner(pid=4242, host="elsewhere", since=1.0)
    sweep = _interrupted(store, holder)
    assert store.claim(sweep.id, this_process(), alive=lambda o: True) == holder
    assert store.claim(sweep.id, this_process(), alive=lambda o: True) == holder


def test_claim_takes_over_from_a_dead_holder(store: Store) -> None:
    """A holder `alive` says is gone loses the sweep to the claimant."""
    sweep = _interrupted(store, Owner(pid=4242, host="elsewhere"))
    me = this_process()
    assert store.claim(sweep.id, me, alive=lambda o: False) is None
    assert store.claim(sweep.id, Owner(pid=1, host="x"), alive=lambda o: o == me) == me


def test_resume_of_a_live_sweep_names_the_process(store: Store, clock: FakeClock) -> None:
    """Resuming a sweep another live process runs is SweepBusyError with its pid and host; nothing runs."""
    sweep = _interrupted(store, Owner(pid=4242, host="buildbox", since=0.0))
    executor = FakeExecutor(lambda argv: fake_measurement(0.01), clock)
    with pytest.raises(SweepBusyError, match=r"sweep \d+ is being run by process 4242 on host "
                                             r"buildbox .*another host"):
        resume_sweep(sweep, executor=executor, clock=clock, store=store, alive=lambda o: True)
    assert executor.calls == () and store.runs(sweep.id) == []


def test_a_holder_on_another_host_counts_as_alive_until_stale(store: Store, clock: FakeClock) -> None:
    """A remote holder refuses a resume while it claimed or stored within STALE_AFTER_S; then not."""
    sweep = _interrupted(store, Owner(pid=4242, host="farm-7", since=clock.time()))
    store.add_run(Run(sweep.id, 0, "A", 1, 0, False, clock.time() + 100.0, fake_measurement(0.01)))
    executor = FakeExecutor(lambda argv: fake_measurement(0.01), clock)
    clock.advance(STALE_AFTER_S)  # within STALE_AFTER_S of the stored run
    with pytest.raises(SweepBusyError, match=r"counts as running until it has stored nothing "
                                             r"for 6 h: resume it there once it has ended"):
        resume_sweep(sweep, executor=executor, clock=clock, store=store)
    clock.advance(200.0)
    done = resume_sweep(sweep, executor=executor, clock=clock, store=store)
    assert done.status == "complete" and [r.seq for r in store.runs(sweep.id)] == [0, 1, 2, 3]


def test_resume_of_a_sweep_whose_process_died(store: Store, clock: FakeClock) -> None:
    """A sweep left 'running' by a dead process (a pid that does not exist) is resumed to the end."""
    dead = Owner(pid=2**22 + 12345, host=platform.node(), start_ticks=1)
    assert not is_alive(dead)
    sweep = _interrupted(store, dead)
    done = resume_sweep(sweep, executor=FakeExecutor(lambda argv: fake_measurement(0.01), clock), clock=clock,
                        store=store)
    assert done.status == "complete"
    assert [r.seq for r in store.runs(sweep.id)] == [0, 1, 2, 3]
    assert store.claim(sweep.id, Owner(pid=1, host="x"), alive=lambda o: True) is None


@pytest.mark.slow
def test_a_killed_owner_not_yet_reaped_is_gone() -> None:
    """kill -9 in a container whose init reaps nothing leaves a zombie: not the owner, so
    `--resume` goes on (it refused, naming the dead pid, before)."""
    child = subprocess.Popen(["sleep", "30"])
    try:
        me = this_process()
        owner = Owner(pid=child.pid, host=me.host, boot_id=me.boot_id,
                      start_ticks=int(Path(f"/proc/{child.pid}/stat").read_text()
                                      .rsplit(")", 1)[1].split()[19]))
        assert is_alive(owner)
        child.kill()
        deadline = time.monotonic() + 10
        while "Z" not in Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[:1]:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert not is_alive(owner)
    finally:
        child.kill()
        child.wait()


def test_a_reused_pid_is_not_the_owner() -> None:
    """This process's pid with another start time is a different, dead process."""
    me = this_process()
    assert is_alive(me)
    assert not is_alive(Owner(pid=me.pid, host=me.host, boot_id=me.boot_id,
                              start_ticks=me.start_ticks + 1))


@pytest.mark.integration
def test_a_second_resume_is_refused_until_the_first_process_is_killed(
        tmp_path: Path, store_location: Path | str) -> None:
    """While one `quadscope run` sweeps, `--resume` is exit 10 naming its pid; after kill -9 it resumes."""
    db, stop = store_location, tmp_path / "stop"
    env = {**os.environ, "PYTHONPATH": str(SRC), "XDG_CACHE_HOME": str(tmp_path)}
    # Each run waits until `stop` exists, so the first process is surely mid-sweep; a run
    # left behind by the kill ends as soon as `stop` is made (bounded: 600 polls).
    waits = f"i=0; while [ ! -e {stop} ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; : {{n}}"
    child = subprocess.Popen(
        [sys.executable, "-m", "quadscope", "run", "--db", str(db), "--no-perf", "--sizes",
         "1,2,3,4", "--repeat", "1", "--warmup", "0", "--meter", "time", "--shell", "--", waits],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not _sweeps(db):
            time.sleep(0.05)
        code, _, err = run_argv(["run", "--db", str(db), "--resume", "1"])
        assert code == 10, err
        assert f"being run by process {child.pid} on host {platform.node()}" in err
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    stop.touch()
    with open_store(db) as store:
        assert store.list_sweeps()[0][0].status == "running"  # killed: it could not say otherwise
    _, _, err = run_argv(["run", "--db", str(db), "--no-perf", "--resume", "1"])
    assert "being run" not in err and "Traceback" not in err, err
    with open_store(db) as store:
        [(sweep, count)] = store.list_sweeps()
        assert (sweep.status, count) == ("complete", 4)
        assert sorted(r.size_n for r in store.runs(sweep.id)) == [1, 2, 3, 4]


def test_list_shows_a_running_sweep_whose_process_is_gone_as_died(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep left "running" by a killed process: `list` says it died and how to resume it;
    one whose process lives stays "running"; another machine's cannot be told, so it stays."""
    db = tmp_path / "l.db"
    dead = Owner(pid=2**22 + 7, host=platform.node(), start_ticks=1)  # no such process
    elsewhere = Owner(pid=1, host="another-machine")
    with open_store(str(db)) as s:
        for name, owner in (("gone", dead), ("live", this_process()), ("far", elsewhere)):
            s.create_sweep(Sweep(id=0, name=name, mode="sizes", command=("p", "{n}")), owner)
        s.create_sweep(Sweep(id=0, name="unclaimed", mode="sizes", command=("p", "{n}")))
    monkeypatch.setenv("COLUMNS", "120")  # every column shown, whatever the terminal
    code, out, err = run_argv(["list", "--db", str(db)])
    assert code == 0, err
    status = {line.split("│")[2].strip(): line.split("│")[5].strip()
              for line in out.splitlines() if line.count("│") >= 7 and "id" not in line}
    assert status == {"gone": "died", "live": "running", "far": "running",
                      "unclaimed": "died"}
    assert ("sweeps 1, 4 stopped before their end; their finished runs are kept: continue one "
            "with `quadscope run --resume ID`") in " ".join(out.split())
