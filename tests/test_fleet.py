"""`--fleet`: outlier rules and stream storing on fakes; doctor and run on a real two-node Ray cluster.

The cluster is a head and a second worker node on this machine (told apart by
Ray node id and the custom resource `qs_second`), started once for the module
in fresh temp directories on a random port, and stopped by killing exactly the
processes whose command lines name those directories, and their children.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from quadscope.cli import build_parser, main
from quadscope.commands.run import build_spec
from quadscope.doctor.details import OtherDetails
from quadscope.doctor.records import DoctorReport, ProbeResult
from quadscope.errors import ToolMissingError, UsageError
from quadscope.fleet import check_resume_here
from quadscope.fleet.cluster import FleetNode, import_ray, nodes_from_ray
from quadscope.fleet.collect import store_doctor, stream_sweeps
from quadscope.fleet.outliers import FleetDoctor, Machine, judge, table
from quadscope.fleet.tasks import CopiedSweep, NodeDoctor, NodeEvent, NodeIdentity
from quadscope.host import Host
from quadscope.model import Measurement, Run, Sweep
from quadscope.render import get_renderer
from quadscope.store import SqliteStore

SRC = str(Path(__file__).parents[1] / "src")
RAY = str(Path(sys.executable).with_name("ray"))


# -- outliers (pure) ----------------------------------------------------------

def _machine(label: str, verdict: str, cost_ns: float, kernel: str = "6.12",
             vsyscall: str = "none") -> Machine:
    result = ProbeResult("clock", "time()", "1", "x", verdict, f"time() costs {cost_ns} ns.",
                         OtherDetails({"numbers": {"time_ns_per_call": cost_ns}}))
    report = DoctorReport((result,), {"kernel": kernel, "vsyscall_mode": vsyscall,
                                      "cpu": "same cpu"}, True, 30.0, 1.0)
    return Machine(label, report)


def test_verdict_outliers_are_named_with_what_they_share() -> None:
    """Machines whose verdict differs from a strict majority are a finding naming their kernel."""
    fleet = [_machine(f"m{i:02}", "ok", 20.0 + i % 3) for i in range(37)]
    fleet += [_machine(f"x{i}", "pathological", 3100.0, "6.1", "xonly") for i in range(3)]
    findings = judge(fleet)
    assert findings[0].machines == ("x0", "x1", "x2")
    assert findings[0].sentence.startswith(
        "3 of 40 machines: clock pathological where 37 are ok: time() costs 3100.0 ns")
    assert findings[0].sentence.endswith("(x0, x1, x2) — kernel 6.1 with vsyscall=xonly")
    number = findings[1]
    assert number.machines == ("x0", "x1", "x2")
    assert "time_ns_per_call up to 148× the fleet median" in number.sentence


def test_a_fleet_of_equals_has_no_outlier() -> None:
    """Small noise on identical machines (MAD near zero) is not a finding: the ratio gate holds."""
    fleet = [_machine(f"m{i}", "ok", 20.0 * (1 + 0.01 * i)) for i in range(10)]
    assert judge(fleet) == ()
    assert "*" not in table(fleet, judge(fleet))


def test_a_split_fleet_has_no_verdict_outlier() -> None:
    """Two halves with different verdicts have no majority to stand out from."""
    fleet = [_machine("a", "ok", 20.0), _machine("b", "slow", 20.0)]
    assert judge(fleet) == ()


def test_table_marks_outlying_cells() -> None:
    """The machine × probe table stars the outliers' cells only."""
    fleet = [_machine(f"m{i}", "ok", 20.0) for i in range(4)] + [_machine("z", "slow", 20.0)]
    lines = table(fleet, judge(fleet)).splitlines()
    assert lines[0].split() == ["machine", "kernel", "clock"]
    assert lines[-1].split() == ["z", "6.12", "slow*"]
    assert lines[1].split() == ["m0", "6.12", "ok"]


PROBES = ("clock", "spawn-size", "spawn-drift", "exit-parallel", "mmap", "notify-buffer",
          "dirscan")


def _wide_machine(label: str, verdict: str) -> Machine:
    results = tuple(ProbeResult(p, "1", "x", "y", verdict if p == "mmap" else "ok", f"{p} fine.")
                    for p in PROBES)
    return Machine(label, DoctorReport(results, {"kernel": "6.12.38+deb13-cloud-amd64",
                                                 "hostname": label[:14], "ray_node_id": "ab" * 8},
                                       True, 30.0, 1.0, summary_sweep_id=7))


def _wide_fleet() -> FleetDoctor:
    machines = tuple(_wide_machine(f"ip-10-0-12-{i:02}:0123abcd", "ok") for i in range(5))
    machines += (_wide_machine("ip-10-0-12-99:0123abcd", "pathological"),)
    return FleetDoctor("head:6379", machines, judge(machines))


def test_the_machine_by_probe_table_fits_80_columns() -> None:
    """All seven probes and long labels: short verdicts, numbered probes and a legend, <= 80 wide."""
    fleet = _wide_fleet()
    lines = table(fleet.machines, fleet.findings, 80).splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[0].split()[:3] == ["machine", "kernel", "p1"]
    assert lines[6].split()[-3:] == ["path*", "ok", "ok"]
    assert "p5 mmap" in " ".join(lines[7:]) and "path = pathological" in " ".join(lines[7:])
    assert table(fleet.machines, fleet.findings, 200).splitlines()[0].split()[2] == "clock"


def test_fleet_outputs_hold_the_table_and_findings() -> None:
    """JSON, Markdown, CSV and HTML of doctor --fleet: every machine, the outliers, the findings."""
    import csv
    import json

    fleet = _wide_fleet()
    doc = json.loads(get_renderer("json").render_fleet(fleet))  # type: ignore[attr-defined]
    assert (doc["kind"], doc["schema"], len(doc["machines"])) == ("doctor-fleet", 2, 6)
    assert doc["machines"][5]["outliers"] == ["mmap"]
    assert doc["machines"][5]["report"]["kind"] == "doctor"
    assert doc["findings"][0]["machines"] == ["ip-10-0-12-99:0123abcd"]
    markdown = get_renderer("markdown").render_fleet(fleet).decode()  # type: ignore[attr-defined]
    assert "| machine | kernel | clock | spawn-size |" in markdown
    assert r"| ip-10-0-12-99:0123abcd | 6.12.38\+deb13-cloud-amd64 | ok |" in markdown
    assert "**pathological**" in markdown
    assert markdown.splitlines()[-1].startswith("- 1 of 6 machines: mmap pathological")
    text = get_renderer("csv").render_fleet(fleet).decode()  # type: ignore[attr-defined]
    rows = list(csv.DictReader(text.splitlines()))
    assert len(rows) == 6 * 7
    assert [r["machine"] for r in rows if r["outlier"] == "1"] == ["ip-10-0-12-99:0123abcd"]
    page = get_renderer("html").render_fleet(fleet).decode()  # type: ignore[attr-defined]
    assert '<b class="out">pathological*</b>' in page and "<li>1 of 6 machines" in page


def test_doctor_fleet_refuses_an_output_without_a_fleet_form(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--png with --fleet: one sentence naming the outputs that work, before any connection."""
    code = main(["doctor", "--fleet", "127.0.0.1:1", "--png", str(tmp_path / "p")])
    err = capsys.readouterr().err.strip()
    assert code != 0 and len(err.splitlines()) == 1
    assert err == ("quadscope: --png has no fleet form; doctor --fleet writes --json, --csv, "
                   "--html or --markdown")


def test_a_fleet_sweep_resumes_only_on_its_machine() -> None:
    """--resume of a sweep a fleet node measured: refused elsewhere, allowed on that host."""
    sweep = Sweep(id=12, name="job@n7", mode="sizes", command=("p",), sizes=(1,),
                  host=Host(hostname="n7", ray_node_id="0123456789ab"))
    with pytest.raises(UsageError, match=r"^sweep 12 was measured on fleet node n7 \(Ray node "
                       r"01234567\); .* run `quadscope run --resume 12` on n7 with the same --db"):
        check_resume_here(sweep, "laptop")
    check_resume_here(sweep, "n7")
    check_resume_here(Sweep(id=3, name="", mode="sizes", command=("p",), sizes=(1,),
                            host=Host(hostname="elsewhere")), "laptop")


def test_a_fleet_node_s_sweeps_name_it_by_its_ray_node() -> None:
    """A node reads its host facts like `run`, with Ray's hostname and node id in them."""
    from quadscope.fleet.tasks import _node_machine
    from quadscope.run import session

    facts = session.read_host(_node_machine(NodeIdentity("ab" * 8, "n7", 1)), git=False)
    assert (facts.host.hostname, facts.host.ray_node_id) == ("n7", "ab" * 8)
    assert facts.host.kernel == session.Machine.real().host_info().kernel


# -- storing streams (fakes) --------------------------------------------------

def test_a_node_s_doctor_is_stored_under_the_driver_s_ids(tmp_path: Path) -> None:
    """store_doctor renumbers the summary and every probe's sweeps, and marks the machine."""
    from quadscope.doctor.clock import PROBE as CLOCK
    from quadscope.doctor.runner import run_doctor
    from quadscope.measure.clock import FakeClock
    from test_doctor_runner import MACHINE, Cost, tools_for

    clock = FakeClock()
    with SqliteStore(tmp_path / "node.db") as there:
        report = run_doctor([CLOCK], quick=True, budget_s=300.0, store=there, clock=clock,
                            tools=tools_for(Cost(), clock, tmp_path), machine=MACHINE)
        copied = tuple(CopiedSweep(s, tuple(there.runs(s.id)), {"doctor": blob})
                       for s, _ in there.list_sweeps() if (blob := there.get_blob(s.id, "doctor")))
    node = FleetNode("ab" * 8, "n7", "10.0.0.7", label="n7")
    with SqliteStore(tmp_path / "driver.db") as store:
        store.create_sweep(Sweep(id=0, name="earlier", mode="sizes", command=("p",), sizes=(1,)))
        got = store_doctor(store, node, NodeDoctor(NodeIdentity("ab" * 8, "n7", 1), report, copied))
        summary = store.get_sweep(str(got.summary_sweep_id))
        assert summary.name == "doctor@n7" and summary.host.ray_node_id == "ab" * 8
        (result,) = got.results
        assert result.ran is not None and report.results[0].ran is not None
        assert len(result.ran.sweeps) == len(report.results[0].ran.sweeps) == 3
        for sweep_id in result.ran.sweeps.values():
            host = store.get_sweep(str(sweep_id)).host
            assert (host.hostname, host.ray_node_id) == ("n7", "ab" * 8)
            blob = store.get_blob(sweep_id, "doctor")
            assert blob is not None and ProbeResult.from_dict(blob) == result
        assert result.ran.sweeps != report.results[0].ran.sweeps
        assert result.details == report.results[0].details


def _run(seq: int) -> Run:
    return Run(sweep_id=1, seq=seq, variant="A", size_n=seq + 1, repeat=0, warmup=False,
               started_at=0.0, measurement=Measurement(wall_s=0.01, exit_code=0))


class _NodeDied(Exception):
    pass


def _stream(node: NodeIdentity, runs: int, die: bool) -> Iterator[NodeEvent]:
    sweep = Sweep(id=1, name="", mode="sizes", command=("prog", "{n}"), sizes=(1, 2, 3))
    yield NodeEvent("started", node, sweep=sweep, total_runs=30)
    for i in range(runs):
        yield NodeEvent("run", node, run=_run(i))
    if die:
        raise _NodeDied("the node it was running on is dead")
    yield NodeEvent("ended", node, sweep=sweep.__class__(**{**_fields(sweep), "status": "complete"}))


def _fields(sweep: Sweep) -> dict[str, object]:
    return {f: getattr(sweep, f) for f in sweep.__dataclass_fields__}


def test_a_dying_stream_keeps_its_runs_and_is_reported(tmp_path: Path) -> None:
    """Runs received before a node died stay stored, the sweep marked interrupted, with a sentence."""
    a, b = FleetNode("aa" * 8, "hosta", "", label="hosta"), FleetNode("bb" * 8, "hostb", "",
                                                                     label="hostb")
    with SqliteStore(tmp_path / "q.db") as store:
        outcomes = stream_sweeps(store, [
            (a, _stream(NodeIdentity(a.node_id, "hosta", 1), 30, die=False)),
            (b, _stream(NodeIdentity(b.node_id, "hostb", 2), 14, die=True)),
        ], died=lambda e: f"{type(e).__name__}: {e}", name="job")
        ok, dead = outcomes
        assert (ok.status, ok.runs, store.get_sweep(ok.sweep_id).status) == ("complete", 30,
                                                                             "complete")
        assert (dead.status, dead.runs, len(store.runs(dead.sweep_id))) == ("died", 14, 14)
        assert store.get_sweep(dead.sweep_id).status == "interrupted"
        assert store.get_sweep(dead.sweep_id).host.ray_node_id == b.node_id
        assert store.get_sweep(ok.sweep_id).name == "job@hosta"
        assert dead.sentence == (f"node hostb died after 14 of 30 runs; its runs are kept as sweep "
                                 f"{dead.sweep_id}, marked interrupted (_NodeDied: the node it "
                                 "was running on is dead)")


def test_nodes_sharing_a_hostname_are_told_apart_by_node_id() -> None:
    """Two live nodes on one host get hostname:node-id labels; dead nodes are left out."""
    listing = [{"NodeID": "1234567890ab", "NodeManagerHostname": "vm", "Alive": True},
               {"NodeID": "abcdef012345", "NodeManagerHostname": "vm", "Alive": True},
               {"NodeID": "ffffffffffff", "NodeManagerHostname": "vm", "Alive": False}]
    assert [n.label for n in nodes_from_ray(listing)] == ["vm:12345678", "vm:abcdef01"]


def test_without_ray_fleet_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """No Ray installed: one sentence with the pip command."""
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ToolMissingError, match=r"pip install 'quadscope\[fleet\]'"):
        import_ray()


def test_an_address_that_does_not_answer_is_one_sentence(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A closed port: exit 11 and one line, well within the connect bound."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    t0 = time.monotonic()
    code = main(["doctor", "--fleet", f"127.0.0.1:{port}"])
    err = capsys.readouterr().err.strip()
    assert code == 11
    assert err.startswith(f"quadscope: the Ray cluster at 127.0.0.1:{port} does not answer")
    assert len(err.splitlines()) == 1
    assert time.monotonic() - t0 < 20


@pytest.mark.slow
def test_a_port_that_is_not_ray_gives_one_line_not_rays_retries() -> None:
    """A listening non-Ray port: one sentence on stderr naming the log of Ray's own messages."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)  # connections complete in the kernel's backlog; nothing ever answers
        port = s.getsockname()[1]
        script = ("import sys, quadscope.fleet.cluster as c; c.CONNECT_TIMEOUT_S = 2.0; "
                  "from quadscope.cli import main; "
                  f"sys.exit(main(['doctor', '--fleet', '127.0.0.1:{port}']))")
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=60, env={**os.environ, "PYTHONPATH": SRC})
    err = done.stderr.strip().splitlines()
    assert done.returncode == 11 and len(err) == 1, done.stderr
    assert err[0].startswith(f"quadscope: the Ray cluster at 127.0.0.1:{port} answered but did "
                             "not accept a driver within 2 s")
    log = err[0].rpartition("(Ray's messages: ")[2].rstrip(")")
    if log != err[0]:
        Path(log).unlink()


# -- a real two-node cluster ----------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pids_under(roots: list[str]) -> list[int]:
    """Processes whose command line names one of `roots`, and all their descendants."""
    parents: dict[int, int] = {}
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        parents[int(entry.name)] = ppid
        if any(r in cmdline for r in roots):
            found.add(int(entry.name))
    grew = True
    while grew:
        kids = {pid for pid, ppid in parents.items() if ppid in found} - found
        grew = bool(kids)
        found |= kids
    return sorted(found)


def _raylet_pid(temp_dir: str) -> int:
    for pid in _pids_under([temp_dir]):
        try:
            if "raylet/raylet" in Path(f"/proc/{pid}/cmdline").read_bytes().decode():
                return pid
        except OSError:
            continue
    raise AssertionError(f"no raylet under {temp_dir}")


class Cluster:
    def __init__(self, address: str, head_dir: str, worker_dir: str, started_s: float) -> None:
        self.address, self.head_dir, self.worker_dir = address, head_dir, worker_dir
        self.started_s = started_s

    def worker_node_id(self) -> str:
        import ray

        return next(n["NodeID"] for n in ray.nodes()
                    if n["Alive"] and n["Resources"].get("qs_second"))


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    if shutil.which(RAY) is None:
        pytest.skip("ray is not installed: pip install 'ray>=2.40'")
    head_dir = tempfile.mkdtemp(prefix="qsray-h")
    worker_dir = tempfile.mkdtemp(prefix="qsray-w")
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": SRC, "RAY_USAGE_STATS_ENABLED": "0",
           "RAY_health_check_period_ms": "1000", "RAY_health_check_failure_threshold": "3"}
    common = ["--num-cpus", "1", "--object-store-memory", str(100 * 2**20),
              "--disable-usage-stats"]
    t0 = time.monotonic()
    try:
        subprocess.run([RAY, "start", "--head", "--port", str(port), "--temp-dir", head_dir,
                        "--include-dashboard=false", "--dashboard-port", str(_free_port()),
                        *common], env=env, check=True, capture_output=True, timeout=60)
        subprocess.run([RAY, "start", "--address", f"127.0.0.1:{port}", "--temp-dir",
                        worker_dir, "--resources", '{"qs_second": 1}', *common],
                       env=env, check=True, capture_output=True, timeout=60)
        yield Cluster(f"127.0.0.1:{port}", head_dir, worker_dir, time.monotonic() - t0)
    finally:
        import ray

        ray.shutdown()
        pids = _pids_under([head_dir, worker_dir])
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(head_dir, ignore_errors=True)
        shutil.rmtree(worker_dir, ignore_errors=True)


def _node_ids(store: SqliteStore, name_prefix: str) -> dict[str, Sweep]:
    return {s.host.ray_node_id: s for s, _ in store.list_sweeps()
            if s.name.startswith(name_prefix)}


@pytest.mark.integration
def test_run_fleet_stores_each_nodes_whole_sweep(
        cluster: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each node sweeps the whole plan on itself, stored whole; the report fits 80 columns."""
    monkeypatch.setenv("COLUMNS", "80")
    db = tmp_path / "q.db"
    code = main(["run", "--fleet", cluster.address, "--db", str(db), "--sizes", "1,2,4,8",
                 "--repeat", "3", "--warmup", "0", "--no-perf", "--name", "echo",
                 "--", "/bin/echo", "{n}"])
    out = capsys.readouterr().out
    assert code == 0
    with SqliteStore(db) as store:
        sweeps = _node_ids(store, "echo@")
        assert len(sweeps) == 2 and cluster.worker_node_id() in sweeps
        for s in sweeps.values():
            assert s.status == "complete"
            assert len(store.runs(s.id)) == 12
    assert "machines against" in out
    assert max(len(line) for line in out.splitlines()) <= 80, out


@pytest.mark.integration
def test_fleet_label_chooses_the_nodes(cluster: Cluster, tmp_path: Path) -> None:
    """--fleet-label with a custom resource keeps only the node that has it."""
    db = tmp_path / "q.db"
    code = main(["run", "--fleet", cluster.address, "--fleet-label", "qs_second", "--db",
                 str(db), "--sizes", "1,2,4,8", "--repeat", "3", "--warmup", "0", "--no-perf",
                 "--name", "lab", "--", "/bin/echo", "{n}"])
    assert code == 0
    with SqliteStore(db) as store:
        assert list(_node_ids(store, "lab@")) == [cluster.worker_node_id()]


@pytest.mark.integration
def test_doctor_fleet_stores_each_machines_report(
        cluster: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each node's doctor results come back and are stored per machine, in a machine × probe table."""
    db = tmp_path / "q.db"
    code = main(["doctor", "--fleet", cluster.address, "--db", str(db), "--only", "clock",
                 "--quick", "--budget", "6", "--no-perf"])
    out = capsys.readouterr().out
    assert code == 0
    with SqliteStore(db) as store:
        summaries = _node_ids(store, "doctor@")
        assert len(summaries) == 2 and cluster.worker_node_id() in summaries
        for s in summaries.values():
            blob = store.get_blob(s.id, "doctor")
            assert blob is not None and blob["summary_sweep_id"] == s.id
            assert blob["machine"]["ray_node_id"] == s.host.ray_node_id
            for sweep_id in blob["probes"][0]["details"].get("sweeps", {}).values():
                assert store.get_sweep(sweep_id).host.ray_node_id == s.host.ray_node_id
    assert out.splitlines()[0].split()[:3] == ["machine", "kernel", "clock"]


# -- one PostgreSQL store for the fleet ----------------------------------------

def since_sql(verdict_param: bool = False) -> str:
    """The "since when" query of docs/fleet.md, its verdict a parameter when asked."""
    text = (Path(__file__).parents[1] / "docs" / "fleet.md").read_text()
    sql = text.split("```sql\n", 1)[1].split("```", 1)[0]
    return sql.replace("'pathological'", "%(verdict)s") if verdict_param else sql


def _since(url: str, verdict: str = "pathological") -> list[tuple[str, str, float, int]]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(f"SELECT machine, probe, extract(epoch FROM since)::float, checks "  # type: ignore[arg-type]
                            f"FROM ({since_sql(True).rstrip().rstrip(';')}) AS q",
                            {"verdict": verdict}).fetchall()
    return [tuple(r) for r in rows]  # type: ignore[misc]


def test_the_documented_since_query_finds_each_machines_current_streak(pg_url: str) -> None:
    """docs/fleet.md's SQL: the start of each machine's latest pathological streak, on PostgreSQL."""
    from quadscope.store import open_store

    history = {"m1": ["ok", "pathological", "pathological"], "m2": ["pathological", "ok"],
               "m3": ["pathological", "ok", "pathological"], "m4": ["ok", "ok", "ok"]}
    with open_store(pg_url) as store:
        for machine, verdicts in history.items():
            for i, verdict in enumerate(verdicts):
                sweep = store.create_sweep(Sweep(
                    id=0, name=f"doctor@{machine}", mode="sizes", command=("doctor",), sizes=(1,),
                    kind="doctor", host=Host(hostname=machine), created_at=100.0 * (i + 1)))
                store.put_blob(sweep.id, "doctor", {"probes": [
                    {"probe": "clock", "verdict": verdict}, {"probe": "mmap", "verdict": "ok"}]})
    assert _since(pg_url) == [("m1", "clock", 200.0, 2), ("m3", "clock", 300.0, 1)]


@pytest.mark.integration
def test_a_fleet_sweeps_and_checks_into_one_postgresql_store(
        cluster: Cluster, pg_url: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """run and doctor --fleet into PostgreSQL; list, compare, history and the SQL read them back."""
    import json

    from quadscope.store import open_store

    assert main(["run", "--fleet", cluster.address, "--db", pg_url, "--sizes", "1,2,4,8",
                 "--repeat", "3", "--warmup", "0", "--no-perf", "--name", "pg",
                 "--", "/bin/echo", "{n}"]) == 0
    with open_store(pg_url) as store:
        sweeps = _node_ids(store, "pg@")  # type: ignore[arg-type]
        assert cluster.worker_node_id() in sweeps and len(sweeps) == 2
        assert all(len(store.runs(s.id)) == 12 and s.status == "complete"
                   for s in sweeps.values())
    a, b = sorted(sweeps.values(), key=lambda s: s.id)
    capsys.readouterr()
    assert main(["list", "--db", pg_url]) == 0
    listed = capsys.readouterr().out
    assert a.name in listed and b.name in listed
    assert main(["compare", str(a.id), str(b.id), "--db", pg_url, "--quiet"]) == 0
    assert main(["history", b.name, "--db", pg_url]) == 0
    assert b.name in capsys.readouterr().out
    report = tmp_path / "fleet.json"
    assert main(["doctor", "--fleet", cluster.address, "--db", pg_url, "--only", "clock",
                 "--quick", "--budget", "6", "--no-perf", "--json", str(report),
                 "--markdown", str(tmp_path / "fleet.md")]) == 0
    doc = json.loads(report.read_text())
    assert doc["kind"] == "doctor-fleet" and len(doc["machines"]) == 2
    with open_store(pg_url) as store:
        for m in doc["machines"]:
            assert store.get_sweep(m["sweep_id"]).name == f"doctor@{m['label']}"
    verdict = doc["machines"][0]["report"]["probes"][0]["verdict"]
    rows = _since(pg_url, verdict)
    # Both nodes run on this host: by hostname they are one machine, checked once or twice.
    clock = [r for r in rows if r[1] == "clock"]
    assert [r[0] for r in clock] == [socket.gethostname()] and 1 <= clock[0][3] <= 2
    assert (tmp_path / "fleet.md").read_text().startswith("### quadscope doctor --fleet")


# Last: it kills the worker node the tests above need.
@pytest.mark.integration
def test_a_node_killed_mid_run_is_reported_and_its_runs_kept(
        cluster: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Killing the worker's raylet mid-sweep: the head completes, the worker's runs stay, exit 12."""
    from quadscope.commands.fleet import run_fleet

    victim = cluster.worker_node_id()
    raylet = _raylet_pid(cluster.worker_dir)

    class KillAfterThree:
        def arrived(self, node: FleetNode, runs: int, total_runs: int | None) -> None:
            if node.node_id == victim and runs == 3:
                os.kill(raylet, signal.SIGKILL)

    args: argparse.Namespace = build_parser().parse_args(
        ["run", "--fleet", cluster.address, "--db", str(tmp_path / "q.db"), "--sizes",
         "1..32", "--repeat", "10", "--warmup", "0", "--no-perf", "--name", "kill", "--shell",
         "--", "sleep 0.1; : {n}"])
    code = run_fleet(args, build_spec(args, resolve=False), progress=KillAfterThree())
    err = capsys.readouterr().err
    assert code == 12
    with SqliteStore(tmp_path / "q.db") as store:
        sweeps = _node_ids(store, "kill@")
        dead = sweeps[victim]
        kept = len(store.runs(dead.id))
        # 60 runs of 0.1 s: Ray notices the node's death within a second or two of it.
        assert dead.status == "interrupted" and 3 <= kept < 60
        assert [s.status for k, s in sweeps.items() if k != victim] == ["complete"]
    assert f"died after {kept} of 60 runs; its runs are kept as sweep {dead.id}, marked " \
           "interrupted" in err
