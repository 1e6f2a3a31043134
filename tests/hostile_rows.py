"""Generated rows of the bad-input table: every subcommand against the same hostile families.

Contract: `make_more(root, db)` writes the extra files these rows name under
`root` (damaged copies of the sandbox store `db`, a store whose names and
commands hold terminal escapes, hostile hyperfine, pytest-benchmark and export
JSON, a sparse file past the JSON limit) and returns their placeholders.
`GENERATED` are rows in `bad_inputs.ROWS`' shape (argv, exit code, phrase of
the one-line error); `HANDLED` are (argv, phrase on stdout): odd but valid
input that must exit 0 doing the right thing. The families, each a product of
a few lists: every store-opening subcommand × every kind of damaged store;
every sweep-reading subcommand × run names with escapes; every report option ×
unwritable targets; numeric options × bad numbers; hostile import, compare and
doctor --vs files; standard output closed or full for every subcommand (the
`{stdout:...}` marker `bad_inputs.run_argv` understands).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

Row = tuple[tuple[str, ...], int, str]

R = ("run", "--db", "{db}", "--no-perf")
S4 = ("--sizes", "1,2,3,4")
CMD = ("--", "/bin/true", "{n}")

# -- damaged stores ------------------------------------------------------------------------
DAMAGE = {  # quadscope's store, then changed by something else
    "v99": "PRAGMA user_version = 99", "nosweeps": "DROP TABLE sweeps",
    "noblobs": "DROP TABLE blobs", "badstatus": "UPDATE sweeps SET status = 'exploded'",
    "nulldata": "UPDATE sweeps SET data = 'null'", "listdata": "UPDATE sweeps SET data = '[1]'",
    "textwall": "UPDATE runs SET wall_s = 'slow'",
}
STORE_KINDS: tuple[tuple[str, int, str], ...] = (  # (placeholder, exit, phrase) for any command
    ("{corrupt}", 4, "corrupt"), ("{notsqlite}", 4, "not a SQLite database"),
    ("{foreign}", 4, "not a quadscope store"), ("{v0}", 4, "its schema version is 0"),
    ("{v99}", 4, "newer"), ("{noruns}", 4, "it lacks the runs table"),
    ("{nosweeps}", 4, "it lacks the sweeps table"), ("{fifo}", 4, "is not a regular file"),
    ("{zeros}", 4, "not a SQLite database"),
    ("mysql://u:pw@h/d", 2, "mysql:// URL"), ("", 2, "--db is empty"),
)
STORE_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("list",), ("show", "good"), ("export", "good", "--json", "{out}/e.json"),
    ("report", "good", "--html", "{out}/r.html"), ("compare", "good", "good"),
    ("profile", "good"), ("history", "good"), ("import", "{hf_ok}"),
    ("run", "--no-perf", *S4, *CMD), ("demo", "--quick", "--no-perf"),
)


def _store_rows() -> list[Row]:
    rows: list[Row] = []
    for cmd in STORE_COMMANDS:
        at = cmd.index("--") if "--" in cmd else len(cmd)  # before run's command
        for db, code, phrase in STORE_KINDS:
            rows.append(((*cmd[:at], "--db", db, *cmd[at:]), code, phrase))
    return rows


# -- names of sweeps with terminal escapes ---------------------------------------------------
EVIL_NAMES = ("x\x1b]52;c;aGk=\x07", "x\x1b[2J\x1b[H", "good\rEVIL", "x\x9b31m")
EVIL_SHOWN = ("x\\x1b]52;c;aGk=\\x07", "x\\x1b[2J\\x1b[H", "good\\rEVIL", "x\\x9b31m")
NAME_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("show", "{name}"), ("export", "{name}", "--json", "-"), ("report", "{name}"),
    ("profile", "{name}"), ("compare", "good", "{name}"), ("history", "{name}"),
)


def _name_rows() -> list[Row]:
    rows: list[Row] = []
    for cmd in NAME_COMMANDS:
        for name, shown in zip(EVIL_NAMES, EVIL_SHOWN, strict=True):
            argv = tuple(name if a == "{name}" else a for a in cmd)
            rows.append(((*argv, "--db", "{db}"), 5, shown))
    for name in EVIL_NAMES:
        rows.append(((*R, *S4, "--name", name, *CMD), 2, "must be printable"))
        rows.append((("import", "{hf_ok}", "--db", "{out}/i.db", "--name", name), 2,
                     "must be printable"))
    return rows


# -- report files that cannot be written -----------------------------------------------------
FILE_OPTIONS = ("--json", "--csv", "--html", "--markdown", "--junit")
READERS: tuple[tuple[str, ...], ...] = (
    ("show", "good"), ("export", "good"), ("report", "good"), ("compare", "good", "good"),
)
TARGETS: tuple[tuple[str, int, str], ...] = (
    ("{dir}", 2, "Is a directory"), ("{file}/x", 2, "cannot write {file}/x"),
)


def _target_rows() -> list[Row]:
    rows: list[Row] = []
    for cmd in READERS:
        for opt in FILE_OPTIONS:
            for target, code, phrase in TARGETS:
                rows.append(((*cmd, opt, target, "--db", "{db}"), code, phrase))
    return rows


# -- numbers that are not what the option takes ----------------------------------------------
NUMERIC: tuple[tuple[tuple[str, ...], str, tuple[str, ...]], ...] = (
    ((*R, *S4), "--timeout", CMD), ((*R,), "--budget", CMD), ((*R, *S4), "--repeat", CMD),
    ((*R, *S4), "--warmup", CMD), ((*R, *S4), "--seed", CMD), ((*R, *S4), "--predict", CMD),
    ((*R,), "--start", CMD), ((*R, "--accumulate"), "--runs", ("--", "/bin/true")),
    (("show", "good", "--db", "{db}"), "--predict", ()),
    (("doctor", "--db", "{db}"), "--budget", ()),
    (("bisect", "HEAD~1", "HEAD", "--db", "{db}", *S4), "--build-timeout", CMD),
    (("bisect", "HEAD~1", "HEAD", "--db", "{db}", *S4), "--repeat", CMD),
    (("bisect", "HEAD~1", "HEAD", "--db", "{db}", *S4), "--timeout", CMD),
)
BAD_NUMBERS = ("", "-inf", "\x1b[31m5", "5s", "0x10", "1e-400")


def _number_rows() -> list[Row]:
    rows: list[Row] = []
    for head, opt, tail in NUMERIC:
        for value in BAD_NUMBERS:
            rows.append(((*head, f"{opt}={value}", *tail), 2, opt))
    return rows


# -- JSON from elsewhere ----------------------------------------------------------------------
def _hf(n_values: list[Any], times: Any = None, **extra: Any) -> dict[str, Any]:
    results = [{"command": f"p {n}", "parameters": {"n": n}, "times": times or [0.1, 0.2],
                **extra} for n in n_values]
    return {"results": results}


HF_OK = _hf(["1", "2", "4", "8"])
IMPORTS: dict[str, tuple[Any, str]] = {  # name: (document, phrase of the refusal)
    "i_null": (None, "is neither"), "i_zero": (0, "is neither"),
    "i_string": ("results", "is neither"), "i_empty_obj": ({}, "is neither"),
    "i_results_dict": ({"results": {}}, "is neither"),
    "i_results_empty": ({"results": []}, "hold no runs"),
    "i_no_params": ({"results": [{"command": "p", "times": [0.1]}] * 4}, "parameter"),
    "i_n_text": (_hf(["a", "b", "c", "d"]), "0 numeric parameters"),
    "i_n_neg": (_hf(["-1", "2", "3", "4"]), "outside 0 to"),
    "i_n_float": (_hf(["1.5", "2", "3", "4"]), "0 numeric parameters"),
    "i_n_huge": (_hf(["1", "2", "3", "1e30"]), "outside 0 to"),
    "i_n_list": (_hf([[1], [2], [3], [4]]), "0 numeric parameters"),
    "i_times_str": (_hf(["1", "2", "3", "4"], ["0.1"]), "has a time"),
    "i_times_null": (_hf(["1", "2", "3", "4"], [None]), "has a time"),
    "i_times_dict": (_hf(["1", "2", "3", "4"], {"a": 1}), "times"),
    "i_times_bool": (_hf(["1", "2", "3", "4"], [True]), "has a time"),
    "i_times_bigint": (_hf(["1", "2", "3", "4"], [10**400]), "has a time"),
    "i_codes_str": (_hf(["1", "2", "3", "4"], exit_codes="zero"), "exit code"),
    "i_codes_float": (_hf(["1", "2", "3", "4"], exit_codes=[0.5, 0]), "exit code"),
    "i_mem_neg": (_hf(["1", "2", "3", "4"], memory_usage_byte=[-1, 5]), "memory"),
    "i_pb_data": ({"benchmarks": [{"name": f"t[{n}]", "params": {"n": n},
                                   "stats": {"data": ["x"]}} for n in (1, 2, 3, 4)]},
                  "has a time"),
    "i_pb_nostats": ({"benchmarks": [{"name": "t[1]", "params": {"n": 1}}]}, "lacks"),
    "i_pb_neg": ({"benchmarks": [{"name": f"t[{n}]", "params": {"n": n},
                                  "stats": {"data": [-1.0]}} for n in (1, 2, 3, 4)]},
                 "has a time"),
    "i_pb_empty": ({"benchmarks": []}, "holds no benchmarks"),
}
RAW_IMPORTS: dict[str, tuple[bytes, str]] = {  # files that are not JSON documents
    "r_empty": (b"", "is not JSON"), "r_nanlit": (b'{"results": [NaN]}', "result 0 is nan, not an object"),
    "r_utf16": ('{"results": []}'.encode("utf-16"), "is not JSON"),
    "r_deepobj": (b'{"a":' * 50_000 + b"1" + b"}" * 50_000, "nests too deeply"),
    "r_trailing": (json.dumps(HF_OK).encode() + b" garbage", "is not JSON"),
    "r_ctrl": (b'{"results": "\x1b[2J"}', "is not JSON"),
}
EXPORTS: dict[str, tuple[Any, str]] = {  # compare's side B: quadscope exports, damaged
    "e_nan": ("NaN", "wall_s is nan, not a duration"),
    "e_neg": (-1.0, "wall_s is -1.0, not a duration"),
    "e_inf": ("Infinity", "wall_s is inf, not a duration"), "e_str": ("fast", "not a number"),
}


def _export(wall: Any) -> str:
    sweep = {"id": 1, "name": "x", "mode": "sizes", "command": ["p", "{n}"]}
    runs = [{"sweep_id": 1, "seq": i, "variant": "A", "size_n": n, "repeat": 0,
             "warmup": False, "started_at": 0, "wall_s": 0.1, "exit_code": 0}
            for i, n in enumerate((1, 2, 4, 8))]
    text = json.dumps({"schema": 2, "sweep": sweep, "runs": runs})
    shown = wall if isinstance(wall, str) and wall in ("NaN", "Infinity") else json.dumps(wall)
    return text.replace('"wall_s": 0.1', f'"wall_s": {shown}', 1)


def _json_rows() -> list[Row]:
    rows: list[Row] = []
    for name, (_, phrase) in {**IMPORTS, **RAW_IMPORTS}.items():
        rows.append((("import", "{" + name + "}", "--db", "{out}/j.db"), 2, phrase))
    for name in ("i_null", "i_string", "r_empty", "r_deepobj", "r_utf16", "i_results_dict"):
        rows.append((("compare", "{" + name + "}", "good", "--db", "{db}"), 2, ""))
        rows.append((("doctor", "--db", "{db}", "--vs", "{" + name + "}"), 2, "--vs"))
    for name, (_, phrase) in EXPORTS.items():
        rows.append((("compare", "good", "{" + name + "}", "--db", "{db}"), 2, phrase))
    for dev, phrase in (("/dev/null", "is not JSON"), ("{sparse}", "larger than")):
        rows.append((("import", dev, "--db", "{out}/j.db"), 2, phrase))
        rows.append((("doctor", "--db", "{db}", "--vs", dev), 2, phrase))
    # compare reads a path as a file only when it ends in .json: else it is a sweep's name
    rows.append((("compare", "/dev/null", "good", "--db", "{db}"), 5, "no stored sweep"))
    rows.append((("compare", "{sparse}", "good", "--db", "{db}"), 2, "larger than"))
    return rows


# -- standard output that cannot be written ---------------------------------------------------
EVERY_COMMAND: tuple[tuple[str, ...], ...] = (
    ("list", "--db", "{db}"), ("show", "good", "--db", "{db}"),
    ("export", "good", "--json", "-", "--db", "{db}"), ("report", "good", "--db", "{db}"),
    ("compare", "good", "good", "--db", "{db}"), ("demo", "--quick", "--db", "{db}"),
    ("profile", "good", "--db", "{db}"), ("doctor", "--db", "{db}"),
    ("history", "good", "--db", "{db}"), ("bisect", "a", "b", *S4, *CMD),
    ("import", "{hf_ok}", "--db", "{out}/k.db"), ("completion", "bash"), (*R, *S4, *CMD),
)


def _stdout_rows() -> list[Row]:
    rows: list[Row] = [(("{stdout:closed}", *cmd), 2, "standard output is closed")
                       for cmd in EVERY_COMMAND]
    for cmd in (("list", "--db", "{db}"), ("show", "good", "--db", "{db}"),
                ("export", "good", "--json", "-", "--db", "{db}"), ("completion", "zsh")):
        rows.append((("{stdout:full}", *cmd), 2, "No space left on device"))
    return rows


# -- the rest of the subcommands' own arguments ----------------------------------------------
OTHER: tuple[Row, ...] = (
    (("completion",), 2, "required"), (("completion", "fish"), 2, "invalid choice"),
    (("completion", "bash", "extra"), 2, "unrecognized arguments"),
    (("history", "good", "--db", "{db}", "--repo", "{missing}"), 2, "{missing}"),
    (("history", "good", "--db", "{db}", "--repo", "{file}"), 2, "{file}"),
    (("history", "good", "--db", "{db}", "--metric", "nosuch"), 2, "nosuch"),
    (("history", "good", "--db", "{db}", "--html", "{dir}"), 2, "is a directory: name the file to write"),
    (("history", "", "--db", "{db}"), 5, "no stored sweep"),
    (("history", "nosuch", "--db", "{db}"), 5, "no stored sweep"),
    (("bisect", "HEAD~1", "HEAD", "--db", "{db}", *S4, "--", "/bin/true"), 2, "no {n} in"),
    (("bisect", "HEAD~1", "HEAD", "--db", "{db}", *CMD), 2, "give --sizes"),
    (("bisect", "HEAD~1", "HEAD", "--db", "{db}", *S4, "--repeat", "0", *CMD), 2,
     "--repeat must be from 1"),
    (("bisect", "HEAD~1", "HEAD", "--db", "{db}", "--sizes", "1,2", *CMD), 2, "at least 4"),
    (("bisect", "HEAD~1", "HEAD", "--db", "{db}", "--like", "999"), 5, "no stored sweep"),
    (("bisect", "HEAD~1", "HEAD", "--db", "{db}", *S4, "--build", "", *CMD), 2,
     "--build is empty"),
    (("bisect", "HEAD~1", "HEAD", "--db", "{db}", *S4, "--fail-above", "cubicish", *CMD), 2,
     "is not a class"),
    (("bisect", "HEAD~1", "HEAD", "--db", "{db}", *S4, "--name", "a\x1b[2J", *CMD), 2,
     "must be printable"),
    (("bisect", "HEAD~1", "HEAD", "--db", "{db}", *S4, *CMD), 2, "git"),
    (("profile", "good", "--db", "{db}", "--callgrind", "maybe"), 2, "invalid choice"),
    (("import", "{hf_ok}", "--db", "{out}/m.db", "--param", "nosuch"), 2, "nosuch"),
    (("import", "{hf_ok}", "--db", "{out}/m.db", "--fail-above", "cubicish"), 2,
     "is not a class"),
    (("compare", "good", "good", "--db", "{db}", "--fail-on", "slower=nan"), 2, "slower"),
    (("compare", "good", "good", "--db", "{db}", "--fail-on", "slower=-1"), 2, "slower"),
    (("compare", "good", "good", "--db", "{db}", "--fail-on", "faster"), 2, "faster"),
    (("compare", "good", "good", "--db", "{db}", "-v", "--quiet"), 2, "not allowed with"),
    (("show", "good", "--db", "{db}", "--fail-above", "n^nan"), 2, "is not a class"),
    (("show", "good", "--db", "{db}", "--fail-above", "wall_s="), 2, "is not a class"),
)

REGRESSIONS: tuple[Row, ...] = (  # what this table found, fixed in src: run in the fast tier
    (("bisect", "HEAD~1", "HEAD", "--db", "{db}", *S4, "--build-timeout=-inf", *CMD), 2,
     "--build-timeout must be a positive number"),
    (("bisect", "HEAD~1", "HEAD", "--db", "{db}", *S4, "--timeout", "0", *CMD), 2,
     "--timeout must be a positive number"),
    (("bisect", "HEAD~1", "HEAD", "--db", "{db}", "--bogus", *S4, *CMD), 2,
     "unrecognized arguments"),  # parsed again inside the command: main() returns 2
    (("import", "{i_times_bigint}", "--db", "{out}/j.db"), 2, "has a time"),
    (("import", "{r_nanlit}", "--db", "{out}/j.db"), 2, "result 0 is nan, not an object"),
    (("profile", "good", "--db", "{db}", "--out", "{file}"), 2, "is a file; name a directory"),
    (("show", "good", "--db", "{db}", "-v", "--quiet"), 2, "not allowed with"),
    (("show", "x" * 100_000, "--db", "{db}"), 5, "characters]…"),
)
HUGE = "x" * 100_000
HUGE_ROWS: tuple[Row, ...] = (  # values far past any sane length
    (("show", HUGE, "--db", "{db}"), 5, "characters]…"),  # quoted back, clipped
    ((*R, *S4, "--repeat", HUGE, *CMD), 2, "characters]…"),
    (("compare", "good", HUGE, "--db", "{db}"), 5, "no stored sweep"),
    (("history", HUGE, "--db", "{db}"), 5, "no stored sweep"),
    ((*R, *S4, "--name", HUGE, *CMD), 2, "at most 200 characters"),
    (("import", "{hf_ok}", "--db", "{out}/h.db", "--name", HUGE), 2, "at most 200 characters"),
    ((*R, "--sizes", "1," * 50_000 + "1", *CMD), 2, "--sizes"),
    ((*R, "--sizes", "9" * 5000 + ",1,2,3", *CMD), 2, "past 2^63"),
    (("list", "--db", "/tmp/" + "d" * 5000 + ".db"), 4, "File name too long"),
    (("show", "good", "--db", "{db}", "--json", "/tmp/" + "j" * 5000), 2, "File name too long"),
    ((*R, *S4, "--until", "wall_s," * 5000 + "bogus", *CMD), 2, "'bogus'"),
    (("doctor", "--db", "{db}", "--only", "clock," * 5000 + "nosuch"), 2, "nosuch"),
    ((*R, *S4, "--fail-above", "n^" + "9" * 5000, *CMD), 2, "is not a class"),
)

GENERATED: tuple[Row, ...] = (*REGRESSIONS, *HUGE_ROWS, *_store_rows(), *_name_rows(),
                              *_target_rows(), *_number_rows(), *_json_rows(), *_stdout_rows(),
                              *OTHER)

HANDLED: tuple[tuple[tuple[str, ...], str], ...] = (  # exit 0, and this on stdout
    (("list", "--db", "{db}"), "good"), (("show", "good", "--db", "{db}"), "good"),
    (("show", "good", "--quiet", "--db", "{db}"), "grows"),
    (("export", "good", "--json", "-", "--db", "{db}"), '"schema"'),
    (("export", "good", "--csv", "-", "--db", "{db}"), "wall_s"),
    (("export", "good", "--markdown", "-", "--db", "{db}"), "good"),
    (("completion", "bash"), "complete"), (("completion", "zsh"), "compdef"),
    (("list", "--db", "{evil}"), "\\x1b"), (("show", "1", "--db", "{evil}"), "\\x1b"),
    (("export", "1", "--markdown", "-", "--db", "{evil}"), "\\x1b"),
    (("export", "1", "--junit", "-", "--db", "{evil}"), "testsuite"),
    (("export", "1", "--csv", "-", "--db", "{evil}"), "wall_s"),
    (("list", "--db", "{out}/fresh.db"), ""),
    *((("export", "good", opt, "{out}/no\x1b]0;t\x07/x" + opt, "--db", "{db}"), "no\\x1b]0;t")
      for opt in FILE_OPTIONS),  # a directory named so is made; the path is shown escaped
    (("import", "{hf_ok}", "--db", "{out}/ok.db", "--name", "größe"), "größe"),
    (("{stdout:broken}", "list", "--db", "{db}"), ""),
    (("{stdout:broken}", "show", "good", "--db", "{db}"), ""),
    (("{stdout:broken}", "completion", "bash"), ""),
    (("run", "--help"), "usage"), (("--version",), "quadscope"),
)


def make_more(root: Path, db: Path) -> dict[str, str]:
    """The files `GENERATED` and `HANDLED` name, under `root`; their placeholder map."""
    for name, damage in DAMAGE.items():
        shutil.copy(db, root / f"{name}.db")
        with sqlite3.connect(root / f"{name}.db") as conn:
            conn.execute(damage)
    (root / "zeros.db").write_bytes(b"\x00" * 8192)
    (root / "hf_ok.json").write_text(json.dumps(HF_OK))
    for name, (doc, _) in IMPORTS.items():
        (root / f"{name}.json").write_text(json.dumps(doc))
    for name, (data, _) in RAW_IMPORTS.items():
        (root / f"{name}.json").write_bytes(data)
    for name, (wall, _) in EXPORTS.items():
        (root / f"{name}.json").write_text(_export(wall))
    with open(root / "sparse.json", "wb") as f:
        f.truncate(256 * 2**20 + 1)
    _evil_store(root / "evil.db")
    names = [*DAMAGE, "zeros", "evil"]
    jsons = ["hf_ok", *IMPORTS, *RAW_IMPORTS, *EXPORTS, "sparse"]
    return {**{n: str(root / f"{n}.db") for n in names},
            **{n: str(root / f"{n}.json") for n in jsons}}


def _evil_store(path: Path) -> None:
    """A store whose sweep's name, command and machine hold terminal escapes (an old
    quadscope or another writer put them there: today's `run --name` refuses them)."""
    from bad_inputs import fake_measurement
    from quadscope.measure.clock import FakeClock
    from quadscope.measure.launcher import FakeExecutor
    from quadscope.run.runner import run_sweep
    from quadscope.run.spec import SweepSpec
    from quadscope.store import SqliteStore

    clock = FakeClock(start=1000.0)
    with SqliteStore(path) as store:
        ex = FakeExecutor(lambda argv: fake_measurement(1e-6 * int(argv[-1])), clock)
        run_sweep(SweepSpec(command=("/bin/true", "{n}"), name="evil", sizes=(100, 200, 400, 800),
                            repeat=2, warmup=0), executor=ex, clock=clock, store=store)
    name = "ev\x1b]52;c;aGk=\x07il"
    with sqlite3.connect(path) as conn:
        (text,) = conn.execute("SELECT data FROM sweeps WHERE id = 1").fetchone()
        data = json.loads(text)
        data.update(name=name, command=["/bin/\x1b]0;owned\x07true", "{n}", "\x1b[2J"],
                    machine="box\x1b[31m")
        conn.execute("UPDATE sweeps SET name = ?, data = ? WHERE id = 1",
                     (name, json.dumps(data)))
