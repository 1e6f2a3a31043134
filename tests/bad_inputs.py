"""The bad-input table: argv a careless or hostile user might type, each with its exit and phrase.

Contract: `make_sandbox(root)` builds the files the rows refer to (a store with a
complete sweep named `good` and one whose runs all failed, named `allfailed`,
a corrupt and a foreign database, exports with wrong types, a directory, a
missing path, ...) and returns the placeholders for `ROWS`. `ROWS` are
(argv, exit code, phrase of the message). `run_argv(argv)` is `cli.main` with
stdout and stderr captured. `guard_measuring()` makes every way to start
measuring (executor, sampler, doctor, demo build) raise, so a row that got past
validation reaches the crash handler (exit 70) and fails, instead of running. Used by
tests/test_bad_input.py and bench/reliability.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import signal
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from unittest import mock

from hostile_rows import GENERATED, HANDLED, make_more
from quadscope.cli import CRASH_EXIT, main
from quadscope.errors import QuadscopeError
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.model import Measurement
from quadscope.run.runner import run_sweep
from quadscope.run.spec import SweepSpec
from quadscope.store import SqliteStore

Row = tuple[tuple[str, ...], int, str]


def fake_measurement(wall_s: float, exit_code: int = 0) -> Measurement:
    return Measurement(wall_s=wall_s, user_s=wall_s, sys_s=0.0, max_rss_bytes=4 << 20,
                       minor_faults=100, major_faults=0, voluntary_ctx_switches=1,
                       involuntary_ctx_switches=0, exit_code=exit_code)


def make_sandbox(root: Path) -> dict[str, str]:
    """The files the rows name, under `root`; returns the placeholder -> path map."""
    db = root / "results.db"
    clock = FakeClock(start=1000.0)
    with SqliteStore(db) as store:
        good = FakeExecutor(lambda argv: fake_measurement(1e-6 * int(argv[-1]) ** 2), clock)
        run_sweep(SweepSpec(command=("/bin/true", "{n}"), name="good", sizes=(100, 200, 400, 800),
                            repeat=2, warmup=0), executor=good, clock=clock, store=store)
        bad = FakeExecutor(lambda argv: fake_measurement(0.01, exit_code=1), clock)
        run_sweep(SweepSpec(command=("/bin/false", "{n}"), name="allfailed",
                            sizes=(100, 200, 400, 800), repeat=1, warmup=0),
                  executor=bad, clock=clock, store=store)
    (root / "corrupt.db").write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000)
    (root / "notsqlite.db").write_text("hello, I am text\n")
    import sqlite3

    foreign = sqlite3.connect(root / "foreign.db")
    foreign.execute("CREATE TABLE t (x)")
    foreign.commit()
    foreign.close()
    (root / "dir").mkdir()
    (root / "dir.json").mkdir()
    (root / "file.txt").write_text("just text\n")
    notexec = root / "prog.sh"
    notexec.write_text("#!/bin/sh\n")
    notexec.chmod(0o644)
    (root / "list.json").write_text("[1, 2, 3]")
    (root / "text.json").write_text("{not json")
    (root / "binary.json").write_bytes(b"\xff\xfe\x00garbage")
    good_export = {"schema": 2, "sweep": {"id": 1, "name": "x", "mode": "sizes",
                                          "command": ["p", "{n}"]}, "runs": []}
    (root / "good.json").write_text(json.dumps(good_export))
    (root / "types.json").write_text(json.dumps(
        {"schema": 2, "sweep": {"id": 1, "name": 5, "mode": "sizes", "command": "p {n}"},
         "runs": "many"}))
    (root / "runtypes.json").write_text(json.dumps(
        {"schema": 2, "sweep": good_export["sweep"],
         "runs": [{"sweep_id": 1, "seq": 0, "variant": "A", "size_n": 10, "repeat": 0,
                   "warmup": False, "started_at": 0, "wall_s": "fast", "exit_code": 0}]}))
    (root / "sweeplist.json").write_text(json.dumps({"schema": 2, "sweep": [], "runs": []}))
    (root / "schemastr.json").write_text(json.dumps({**good_export, "schema": "two"}))
    (root / "newer.json").write_text(json.dumps({**good_export, "schema": 99}))
    (root / "doctor_bad.json").write_text(json.dumps({"kind": "doctor", "probes": [1, 2]}))
    _hostile_files(root)
    more = make_more(root, db)
    return {**more,
        "db": str(db), "corrupt": str(root / "corrupt.db"), "notsqlite": str(root / "notsqlite.db"),
        "foreign": str(root / "foreign.db"), "dir": str(root / "dir"),
        "dirjson": str(root / "dir.json"), "file": str(root / "file.txt"),
        "notexec": str(notexec), "missing": str(root / "missing" / "nothing.db"),
        "missingjson": str(root / "missing.json"), "out": str(root / "out"),
        **{name: str(root / f"{name}.json") for name in
           ("list", "text", "binary", "good", "types", "runtypes", "sweeplist", "schemastr",
            "newer", "doctor_bad", "deep", *HOSTILE_JSON)},
        **{name: str(root / f"{name}.db") for name in HOSTILE_DB},
        "fifo": str(root / "fifo.db"),
    }


def _hf(first_times: list[Any], codes: list[Any] | None = None) -> dict[str, Any]:
    """hyperfine --parameter-scan JSON over four sizes; the first result's times and codes given."""
    results: list[dict[str, Any]] = [
        {"command": f"p {n}", "parameters": {"n": str(n)}, "times": [0.1, 0.2]}
        for n in (1, 2, 4, 8)]
    results[0]["times"] = first_times
    if codes is not None:
        results[0]["exit_codes"] = codes
    return {"results": results}


HOSTILE_JSON: dict[str, Any] = {  # issue 29's files: each must be refused, nothing stored
    "hf_code": _hf([0.1, 0.2], [0, 10**23]), "hf_nan": _hf([0.1, math.nan]),
    "hf_neg": _hf([0.1, -0.2]), "hf_inf": _hf([0.1, math.inf]), "hf_huge": _hf([0.1, 1e308]),
    "hf_tiny": _hf([0.1, 5e-324]),
    "hf_twins": {"results": [{"command": "p", "parameters": {"n": n}, "times": [0.1]}
                             for n in (1, 2, 2**60, 2**60 + 1)]},
    "hf_name": {"results": [{"command": f"x\x1b]52;c;aGk=\x07 {n}", "parameters": {"n": n},
                             "times": [0.1]} for n in (1, 2, 3, 4)]},
}
HOSTILE_DB = {  # quadscope's mark, then changed by something else
    "v0": "PRAGMA user_version = 0", "noruns": "DROP TABLE runs",
    "baddata": "UPDATE sweeps SET data = '{'",
}


def _hostile_files(root: Path) -> None:
    import os
    import shutil
    import sqlite3

    for name, doc in HOSTILE_JSON.items():
        (root / f"{name}.json").write_text(json.dumps(doc))
    (root / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    for name, damage in HOSTILE_DB.items():
        shutil.copy(root / "results.db", root / f"{name}.db")
        with sqlite3.connect(root / f"{name}.db") as conn:
            conn.execute(damage)
    os.mkfifo(root / "fifo.db")


R = ("run", "--db", "{db}", "--no-perf")
S4 = ("--sizes", "1,2,3,4")
CMD = ("--", "/bin/true", "{n}")
RC = ("--", "/bin/true", "{rows}", "{cols}")

BASE_ROWS: tuple[Row, ...] = (
    # -- numbers: nan, inf, negative, absurd, past 2^63 and twins past 2^53 ----------------
    ((*R, *S4, "--timeout", "nan", *CMD), 2, "--timeout must be a positive number"),
    ((*R, *S4, "--timeout", "inf", *CMD), 2, "--timeout must be a positive number"),
    ((*R, *S4, "--timeout", "1e400", *CMD), 2, "--timeout must be a positive number"),
    ((*R, *S4, "--timeout=-1", *CMD), 2, "--timeout must be a positive number"),
    ((*R, *S4, "--timeout", "0", *CMD), 2, "--timeout must be a positive number"),
    ((*R, *S4, "--timeout", "1e9", *CMD), 2, "more than a week"),
    ((*R, *S4, "--timeout", "ten", *CMD), 2, "invalid float value"),
    ((*R, "--budget", "nan", *CMD), 2, "--budget must be a positive number"),
    ((*R, "--budget", "inf", *CMD), 2, "--budget must be a positive number"),
    ((*R, "--budget=-5", *CMD), 2, "--budget must be a positive number"),
    ((*R, "--budget", "0", *CMD), 2, "--budget must be a positive number"),
    ((*R, "--budget", "1e12", *CMD), 2, "more than a week"),
    ((*R, *S4, "--budget", "nan", *CMD), 2, "--budget must be a positive number"),
    ((*R, *S4, "--predict", "nan", *CMD), 2, "'nan' is not a finite number"),
    ((*R, *S4, "--predict", "inf", *CMD), 2, "'inf' is not a finite number"),
    ((*R, *S4, "--predict=-1", *CMD), 2, "is negative"),
    ((*R, *S4, "--predict", "1e400", *CMD), 2, "past 2^63"),
    ((*R, *S4, "--predict", "2.5", *CMD), 2, "not an integer"),
    ((*R, *S4, "--predict", "9223372036854775808", *CMD), 2, "past 2^63"),
    ((*R, *S4, "--predict", "1e19", *CMD), 2, "past 2^63"),
    ((*R, *S4, "--predict", "", *CMD), 2, "--predict is empty"),
    ((*R, "--start", "nan", *CMD), 2, "'nan' is not a finite number"),
    ((*R, "--start=-1", *CMD), 2, "is negative"),
    ((*R, "--start", "1e400", *CMD), 2, "past 2^63"),
    ((*R, "--start", "9007199254740993", *CMD), 2, "--start must be from 0 to 9007199254740992"),
    ((*R, "--start", "abc", *CMD), 2, "'abc' is not a number"),
    ((*R, "--start", "1.5", *CMD), 2, "not an integer"),
    # Adaptive mode over several sizes: one --start NAME=N per axis (run/axes.parse_starts).
    ((*R, "--start", "rows=100", "--start", "4", *RC), 2, "starts each axis by name"),
    ((*R, "--start", "rows=100", "--start", "rows=4", *RC), 2, "names the axis 'rows' twice"),
    ((*R, "--start", "rows=100", *RC), 2, "names one axis"),
    ((*R, "--start", "4", "--start", "8", *RC), 2, "--start is given 2 times"),
    ((*R, "--start", "rows=0", "--start", "cols=4", *RC), 2, "--start rows= must be from 1"),
    ((*R, "--start", "rows=1e", "--start", "cols=4", *RC), 2, "not a number"),
    ((*R, "--start", "rows=100", "--start", "cols=4", "--sizes", "rows=1..8", "--sizes",
      "cols=1..8", *RC), 2, "not both"),
    ((*R, "--start", "rows=100", "--start", "cols=4", "--vs", "/bin/true {rows} {cols}", *RC), 2,
     "sweeps one command"),
    ((*R, "--start", "rows=100", "--start", "cols=4", "--accumulate", *RC), 2,
     "does not take --accumulate"),
    ((*R, *S4, "--repeat", "0", *CMD), 2, "--repeat must be from 1 to 1000"),
    ((*R, *S4, "--repeat=-3", *CMD), 2, "--repeat must be from 1 to 1000"),
    ((*R, *S4, "--repeat", "100000", *CMD), 2, "--repeat must be from 1 to 1000"),
    ((*R, *S4, "--repeat", "nan", *CMD), 2, "invalid int value"),
    ((*R, *S4, "--repeat", "1e3", *CMD), 2, "invalid int value"),
    ((*R, *S4, "--warmup=-1", *CMD), 2, "--warmup must be from 0 to 1000"),
    ((*R, *S4, "--warmup", "5000", *CMD), 2, "--warmup must be from 0 to 1000"),
    ((*R, "--accumulate", "--runs", "2", "--", "/bin/true"), 2, "--runs must be from 4"),
    ((*R, "--accumulate", "--runs", "1000000", "--", "/bin/true"), 2, "--runs must be from 4"),
    ((*R, "--accumulate", "--runs", "inf", "--", "/bin/true"), 2, "invalid int value"),
    ((*R, *S4, "--seed=-1", *CMD), 2, "--seed must be from 0"),
    ((*R, *S4, "--seed", "99999999999999999999999", *CMD), 2, "--seed must be from 0"),
    ((*R, "--sizes", "", *CMD), 2, "--sizes is empty"),
    ((*R, "--sizes", "   ", *CMD), 2, "--sizes is empty"),
    ((*R, "--sizes", "1,2,3,1e400", *CMD), 2, "past 2^63"),
    ((*R, "--sizes", "1,2,3,9223372036854775808", *CMD), 2, "past 2^63"),
    ((*R, "--sizes", "1,2,9007199254740992,9007199254740993", *CMD), 2, "the same number to a fit"),
    ((*R, "--sizes", "nan..1e3", *CMD), 2, "not a finite number"),
    ((*R, "--sizes", "1..inf", *CMD), 2, "not a finite number"),
    ((*R, "--sizes", "1e3..1e6*nan", *CMD), 2, "not a finite number"),
    ((*R, "--sizes", "1e3..1e6*1", *CMD), 2, "greater than 1"),
    ((*R, "--sizes", "1..1e6*1.00001", *CMD), 2, "more than 10000 sizes"),
    ((*R, "--sizes", "0..1e9+1", *CMD), 2, "more than 10000 sizes"),
    ((*R, "--sizes", "1,2,3", *CMD), 2, "at least 4"),
    ((*R, "--sizes", "{n}", *CMD), 2, "is not a number"),
    ((*R, "--sizes", "1..2..3", *CMD), 2, "is not a number"),
    ((*R, "--sizes=-1,2,3,4", *CMD), 2, "is negative"),
    ((*R, "--sizes", "1.5,2,3,4", *CMD), 2, "not an integer"),
    ((*R, "--sizes", "1e3..1e2", *CMD), 2, "before it starts"),
    ((*R, "--sizes", "٣,٤,٥,٦x", *CMD), 2, "is not a number"),
    # -- names, metrics, targets --------------------------------------------------
    ((*R, *S4, "--until", "nosuch", *CMD), 2, "--until names no metric 'nosuch'"),
    ((*R, *S4, "--until", "wall_s,bogus", *CMD), 2, "'bogus'"),
    ((*R, *S4, "--name", "12", *CMD), 2, "looks like a sweep id"),
    ((*R, *S4, "--name", "last", *CMD), 2, "looks like a sweep id"),
    ((*R, *S4, "--name", " padded ", *CMD), 2, "without surrounding spaces"),
    ((*R, *S4, "--name", "a\x07b", *CMD), 2, "must be printable"),
    ((*R, *S4, "--name", "x" * 300, *CMD), 2, "at most 200 characters"),
    ((*R, *S4, "--", "python:os:getpid", "{n}", "extra"), 2, "called with the size alone"),
    ((*R, *S4, "--", "python:os:getpid", "--flag", "{n}"), 2, "called with the size alone"),
    ((*R, *S4, "--", "python:nosuchmod_xyz:f", "{n}"), 3, "cannot import"),
    ((*R, *S4, "--", "python:os:nosuchfunc", "{n}"), 3, "has no function"),
    ((*R, *S4, "--", "python:os", "{n}"), 3, "is not MODULE:FUNC"),
    ((*R, *S4, "--", "python:", "{n}"), 3, "is not MODULE:FUNC"),
    ((*R, *S4, "--", "no-such-program-xyz", "{n}"), 3, "no-such-program-xyz"),
    ((*R, *S4, "--", "{notexec}", "{n}"), 3, "not executable"),
    ((*R, *S4, "--", "{dir}", "{n}"), 3, "is not executable"),
    ((*R, *S4, "--", "", "{n}"), 2, "no command to sweep"),
    ((*R, *S4, "--", "/bin/true"), 2, "no {n} in"),
    ((*R, *S4), 2, "no command to sweep"),
    ((*R, *S4, "--vs", "", *CMD), 2, "--vs is empty"),
    ((*R, *S4, "--vs", "   ", *CMD), 2, "--vs is empty"),
    ((*R, *S4, "--vs-shell", "", *CMD), 2, "--vs-shell is empty"),
    ((*R, *S4, "--vs", "unbalanced 'quote {n}", *CMD), 2, "does not parse"),
    ((*R, *S4, "--vs", "/bin/true", *CMD), 2, "no {n} in `/bin/true`"),
    ((*R, *S4, "--vs", "/bin/true {n}", *CMD, "--vs", "/bin/true", "{n}"), 2, "give the second"),
    ((*R, *S4, *CMD, "--vs"), 2, "--vs at the end"),
    ((*R, "--accumulate", *S4, "--", "/bin/true"), 2, "takes no --sizes"),
    # -- resume ---------------------------------------------------------------------
    ((*R, "--resume", "1", *CMD), 2, "drop a command after --"),
    ((*R, "--resume", "1", *S4), 2, "drop --sizes"),
    ((*R, "--resume", "1", "--vs", "x {n}"), 2, "drop --vs"),
    ((*R, "--resume", "999"), 5, "no stored sweep with id or name '999'"),
    ((*R, "--resume", "good"), 2, "already complete"),
    # -- output paths and gates -------------------------------------------------------
    ((*R, *S4, "--json", "{dir}", *CMD), 2, "is a directory"),
    ((*R, *S4, "--png", "{file}", *CMD), 2, "cannot create"),
    ((*R, *S4, "--fail-above", "cubicish", *CMD), 2, "is not a class"),
    ((*R, *S4, "--fail-above", "nosuch=n^2", *CMD), 2, "is not a metric"),
    # -- databases ---------------------------------------------------------------------
    (("run", "--db", "{dir}", *S4, *CMD), 4, "cannot open"),
    (("run", "--db", "{corrupt}", *S4, *CMD), 4, "corrupt"),
    (("run", "--db", "{notsqlite}", *S4, *CMD), 4, "not a SQLite database"),
    (("run", "--db", "{foreign}", *S4, *CMD), 4, "not a quadscope store"),
    (("show", "good", "--db", "{missing}"), 5, "no results database"),
    (("show", "good", "--db", "{dir}"), 5, "it is a directory"),
    (("show", "good", "--db", "{corrupt}"), 4, "corrupt"),
    (("show", "good", "--db", "{foreign}"), 4, "not a quadscope store"),
    (("list", "--db", "{corrupt}"), 4, "corrupt"),
    (("list", "--db", "{notsqlite}"), 4, "not a SQLite database"),
    (("export", "good", "--db", "{missing}", "--json", "x.json"), 5, "no results database"),
    (("report", "good", "--db", "{corrupt}"), 4, "corrupt"),
    # -- stored sweeps -------------------------------------------------------------------
    (("show", "999", "--db", "{db}"), 5, "no stored sweep"),
    (("show", "", "--db", "{db}"), 5, "no stored sweep"),
    (("show", "good", "--predict", "nan", "--db", "{db}"), 2, "not a finite number"),
    (("show", "good", "--predict", "-5", "--db", "{db}"), 2, "is negative"),
    (("show", "good", "--json", "{dir}", "--db", "{db}"), 2, "Is a directory"),
    (("export", "good", "--db", "{db}"), 2, "export needs somewhere to write"),
    (("export", "999", "--json", "x.json", "--db", "{db}"), 5, "no stored sweep"),
    (("export", "allfailed", "--png", "{out}/png", "--db", "{db}"), 6, "nothing to draw"),
    (("report", "allfailed", "--png", "{out}/png2", "--db", "{db}"), 6, "nothing to draw"),
    (("report", "999", "--db", "{db}"), 5, "no stored sweep"),
    (("compare", "{list}", "{good}", "--db", "{db}"), 2, "not a quadscope JSON export"),
    (("compare", "{types}", "{good}", "--db", "{db}"), 2, "not a quadscope JSON export"),
    (("compare", "{good}", "{runtypes}", "--db", "{db}"), 2, "not a number"),
    (("compare", "{sweeplist}", "{good}", "--db", "{db}"), 2, "not a quadscope JSON export"),
    (("compare", "{schemastr}", "{good}", "--db", "{db}"), 2, "schema is 'two'"),
    (("compare", "{text}", "{good}", "--db", "{db}"), 2, "is not JSON"),
    (("compare", "{binary}", "{good}", "--db", "{db}"), 2, "is not JSON"),
    (("compare", "{missingjson}", "{good}", "--db", "{db}"), 2, "cannot read"),
    (("compare", "{dirjson}", "{good}", "--db", "{db}"), 2, "cannot read"),
    (("compare", "good", "{newer}", "--db", "{db}"), 4, "newer quadscope"),
    (("compare", "good", "999", "--db", "{db}"), 5, "no stored sweep"),
    (("compare", "good", "allfailed", "--db", "{db}"), 6, "nothing to compare"),
    (("profile", "allfailed", "--db", "{db}"), 6, "no successful run to profile"),
    (("profile", "good", "--sizes", "", "--db", "{db}"), 2, "--sizes is empty"),
    (("profile", "good", "--sizes", "nan,1,2,3", "--db", "{db}"), 2, "not a finite number"),
    (("profile", "good", "--sizes", "1,2", "--db", "{db}"), 2, "at least 4"),
    (("profile", "999", "--db", "{db}"), 5, "no stored sweep"),
    # -- doctor --------------------------------------------------------------------------
    (("doctor", "--db", "{db}", "--only", "nosuch"), 2, "no doctor probe named 'nosuch'"),
    (("doctor", "--db", "{db}", "--only", "clock", "--dir", "{dir}"), 2, "add dirscan to --only"),
    (("doctor", "--db", "{db}", "--only", "dirscan", "--dir", "{missing}"), 2, "cannot list"),
    (("doctor", "--db", "{db}", "--only", "dirscan", "--dir", "{file}"), 2, "not a directory"),
    (("doctor", "--db", "{db}", "--budget", "nan"), 2, "--budget must be a positive number"),
    (("doctor", "--db", "{db}", "--budget=-1"), 2, "--budget must be a positive number"),
    (("doctor", "--db", "{db}", "--budget", "inf"), 2, "--budget must be a positive number"),
    (("doctor", "--db", "{db}", "--vs", "{missingjson}"), 2, "cannot read --vs"),
    (("doctor", "--db", "{db}", "--vs", "{text}"), 2, "is not JSON"),
    (("doctor", "--db", "{db}", "--vs", "{binary}"), 2, "is not JSON"),
    (("doctor", "--db", "{db}", "--vs", "{good}"), 2, "is not a doctor report"),
    (("doctor", "--db", "{db}", "--vs", "{list}"), 2, "is not a doctor report"),
    (("doctor", "--db", "{db}", "--vs", "{doctor_bad}"), 2, "damaged doctor report"),
    # -- hostile files, text and stores (issue 29) -------------------------------------------
    (("import", "{hf_code}", "--db", "{out}/i.db"), 2, "has an exit code 1000"),
    (("import", "{hf_nan}", "--db", "{out}/i.db"), 2, "has a time nan"),
    (("import", "{hf_neg}", "--db", "{out}/i.db"), 2, "has a time -0.2"),
    (("import", "{hf_inf}", "--db", "{out}/i.db"), 2, "has a time inf"),
    (("import", "{hf_huge}", "--db", "{out}/i.db"), 2, "has a time 1e+308"),
    (("import", "{hf_tiny}", "--db", "{out}/i.db"), 2, "has a time 5e-324"),
    (("import", "{hf_twins}", "--db", "{out}/i.db"), 2, "the same number to a fit"),
    (("import", "{hf_name}", "--db", "{out}/i.db", "--name", "a\x1b[2Jb"), 2, "must be printable"),
    (("import", "{hf_name}", "--db", "{out}/i.db", "--name", "12"), 2, "looks like a sweep id"),
    (("import", "{deep}", "--db", "{out}/i.db"), 2, "nests too deeply"),
    (("import", "{dirjson}", "--db", "{out}/i.db"), 2, "it is a directory"),
    (("import", "{hf_name}", "--db", "mysql://u:pw@h/d"), 2, "mysql:// URL"),
    (("import", "{hf_name}", "--db", "{fifo}"), 4, "is not a regular file"),
    (("compare", "{deep}", "{good}", "--db", "{db}"), 2, "nests too deeply"),
    (("doctor", "--db", "{db}", "--vs", "{deep}"), 2, "nests too deeply"),
    (("list", "--db", "{v0}"), 4, "its schema version is 0"),
    (("show", "1", "--db", "{v0}"), 4, "its schema version is 0"),
    (("list", "--db", "{noruns}"), 4, "it lacks the runs table"),
    (("show", "good", "--db", "{noruns}"), 4, "it lacks the runs table"),
    (("list", "--db", "{baddata}"), 4, "record in the store cannot be read"),
    (("export", "1", "--json", "-", "--db", "{baddata}"), 4, "cannot be read"),
    (("list", "--db", "{fifo}"), 4, "is not a regular file"),
    (("show", "good", "--db", "{db}", "--json", "-", "--csv", "-"), 2,
     "both write to standard output"),
    (("export", "good", "--db", "{db}", "--markdown", "-", "--json", "-"), 2,
     "both write to standard output"),
    ((*R, *S4, "--json", "-", "--csv", "-", *CMD), 2, "both write to standard output"),
    (("list", "--db", "mysql://user:pw@host/db"), 2, "mysql:// URL"),
    (("list", "--db", "sqlite:///x.db"), 2, "sqlite:// URL"),
    (("list", "--db", ""), 2, "--db is empty"),
    (("list", "--db="), 2, "--db is empty"),
    (("doctor", "--db", "{db}", "--only", ""), 2, "--only is empty"),
    (("doctor", "--db", "{db}", "--only", ","), 2, "--only names no probe"),
    ((*R, *S4, "--until", "", *CMD), 2, "--until is empty"),
    ((*R, *S4, "--name=", *CMD), 2, "--name is empty"),
    ((*R, *S4, "--setup", "", *CMD), 2, "--setup is empty"),
    (("compare", "good", "good", "--db", "{db}", "--fail-on", ""), 2, "--fail-on is empty"),
    ((*R, *S4, "--cpu", "0-999999999", *CMD), 2, "names CPUs past 65535"),
    ((*R, *S4, "--cpu", "99999999999999999999", *CMD), 2, "names CPUs past 65535"),
    ((*R, "--sizes", "1,2,9007199254740992,9007199254740993", *CMD), 2,
     "the same number to a fit"),
    ((*R, *S4, "--", "./no\x1b]52;c;aGk=\x07", "{n}"), 3, "no\\x1b]52;c;aGk=\\x07"),
    (("show", "1", "--db", "{out}/no\x1b[2J.db"), 5, "no\\x1b[2J.db"),
    # -- the command line itself -----------------------------------------------------------
    (("frobnicate",), 2, "invalid choice"),
    (("run", "--bogus"), 2, "unrecognized arguments"),
    (("demo", "--bogus"), 2, "unrecognized arguments"),
    (("show",), 2, "required"),
    ((*R, *S4, "--", "/bin/true", "{n}\x00"), 2, "NUL character"),
)
# The second round (BENCHMARKS.md §8), after the rest: rows put among them would move
# which rows the fast tier's every fourth takes.
LATER_ROWS: tuple[Row, ...] = (
    ((*R, "--sizes", "rows=1..8,cols=1..8", *RC), 2, "names several axes in one value; give "
     "each axis its own --sizes"),
    ((*R, "--sizes", "rows=1..8;cols=1..8", *RC), 2, "names several axes in one value"),
)
ROWS: tuple[Row, ...] = (*BASE_ROWS, *GENERATED, *LATER_ROWS)


def expand(argv: Sequence[str], paths: dict[str, str]) -> list[str]:
    """The row's argv with its `{placeholder}`s replaced (`{n}` and unknown names kept)."""
    out = []
    for arg in argv:
        for key, value in paths.items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


ROW_LIMIT_S = 30.0  # a row still running after this is a hang


class Hung(BaseException):
    """A row ran past `ROW_LIMIT_S` (a BaseException: no `except Exception` swallows it)."""


class _Refusing(io.FileIO):
    """Standard output (a real descriptor, on /dev/null) whose every write fails as `error`
    does: the reader gone (EPIPE) or the disk full (ENOSPC)."""

    def __init__(self, error: OSError) -> None:
        super().__init__("/dev/null", "wb")
        self.error = error

    def write(self, data: Any) -> int:
        raise self.error


def _stdout_for(marker: str) -> io.TextIOWrapper | None:
    if marker == "{stdout:closed}":
        return None  # what Python makes of `quadscope ... >&-`
    error = BrokenPipeError(32, "Broken pipe") if marker == "{stdout:broken}" \
        else OSError(28, "No space left on device")
    return io.TextIOWrapper(_Refusing(error), encoding="utf-8", write_through=True)


def run_argv(argv: Sequence[str], limit_s: float = ROW_LIMIT_S) -> tuple[int, str, str]:
    """`cli.main(argv)` with its output captured: (exit code, stdout, stderr).

    A first element `{stdout:closed}`, `{stdout:broken}` or `{stdout:full}` runs
    the rest with standard output closed, or failing with EPIPE or ENOSPC. A
    call past `limit_s` raises `Hung`.
    """
    # stdout has a byte buffer, as a real one does: `--markdown -` writes bytes to it.
    raw = io.BytesIO()
    if argv and argv[0].startswith("{stdout:"):
        out, argv = _stdout_for(argv[0]), argv[1:]
    else:
        out = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    err = io.StringIO()

    def hang(*_: Any) -> None:
        raise Hung(f"still running after {limit_s:g} s")

    old = signal.signal(signal.SIGALRM, hang)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):  # type: ignore[type-var]
            code = main(list(argv))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    with contextlib.suppress(OSError):
        if out is not None:
            out.flush()
    return code, raw.getvalue().decode("utf-8", "replace"), err.getvalue()


RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def judge(argv: Sequence[str], code: int, phrase: str,
          paths: dict[str, str]) -> tuple[str, str]:
    """(outcome, detail) of one row: clear, handled, crash, silent, hang, raw or wrong.

    `code` 0 asks for `handled`: exit 0 with `phrase` in its output. Otherwise a
    row is `clear` when it exits `code` with `phrase` in its one `quadscope:`
    line on stderr. Either way, a terminal control character on stdout or
    stderr that the row did not write itself is `raw`.
    """
    phrase = expand([phrase], paths)[0]
    try:
        got, out, err = run_argv(expand(argv, paths))
    except Hung as exc:
        return "hang", str(exc)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if got == CRASH_EXIT or "Traceback" in err:
        return "crash", err[-300:]
    if RAW_CONTROL.search(out + err):
        return "raw", repr((out + err)[:300])
    if code == 0:
        ok = got == 0 and phrase in out + err
        return ("handled" if ok else "wrong"), f"exit {got}: {err[:200]!r}"
    if got == 0:
        return "silent", repr(err[:200])
    if got == code and phrase in err and len(lines) == 1 and lines[0].startswith("quadscope: "):
        return "clear", ""
    return "wrong", f"exit {got}: {err[:300]!r}"


ALL_ROWS: tuple[Row, ...] = (*ROWS, *((argv, 0, phrase) for argv, phrase in HANDLED))


class Reached(AssertionError):
    """A bad input got as far as measuring: validation let it through."""


class Stopped(QuadscopeError):
    """The fuzz's stop sign: an argv valid enough to measure, stopped before it does."""

    exit_code = 99


# Commands import these where used (so `quadscope --help` stays cheap): patch the source.
MEASURING = ("quadscope.meters.choose_measuring",
             "quadscope.doctor.runner.run_doctor",
             "quadscope.commands.doctor._tools",
             "quadscope.profile.driver.choose_sampler",
             "quadscope.profile.driver.profile_sweep",
             "quadscope.profile.callgrind.count_sweep",
             "quadscope.workloads.build",
             "quadscope.run.runner.run_sweep")


@contextlib.contextmanager
def guard_measuring(stop: type[Exception] = Reached) -> Iterator[None]:
    """Every way to start measuring raises `stop`.

    `Reached` (the default) is an AssertionError, which the crash handler turns
    into exit 70: a table row that gets that far fails. The fuzz passes
    `Stopped`, a clean exit 99, as reaching the executor is fine for a random argv.
    """

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise stop("stopped before measuring")

    with contextlib.ExitStack() as stack:
        for target in MEASURING:
            stack.enter_context(mock.patch(target, refuse))
        # bisect's meter is chosen by probing this machine (it compiles the launcher): the
        # wall clock, which needs no probe, stands in (history --run imports it where used)
        for meter_of in ("quadscope.commands.bisect.exact_meter",
                         "quadscope.commands.commits.exact_meter"):
            stack.enter_context(mock.patch(meter_of, lambda *_a, **_k: "time"))
        yield
