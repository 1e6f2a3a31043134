"""What several sub-commands share: the store option, output files, printing an analysis.

Contract: the only place (with cli.py) that prints an Analysis or writes an
Analysis's report files (`history --html` writes its own page, which is not a
registry renderer). The output options, their checks and the files written all
come from the renderer registry (`render.RENDERERS`): nothing here names a file format
(`print_analysis` asks the registry for the terminal renderer by name).
`analyse_stored` is `analysis.analyse` of a stored sweep with the results
attached to it (its profile, its doctor findings and each probe's plot lines).
`open_store` keeps the read-only stores it opens, and `close_readers()` (called by
`cli.main` after every command) closes them. `fit_progress()` is the progress of a fit that takes longer than
FitProgress.AFTER_S, on a terminal's stderr (`run` and the stored commands pass it on).
`split_command` splits the command after `--` at a standalone `--vs` (`run`, `bisect`,
`history --run` and the several-size checks share it).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from quadscope import render
from quadscope.errors import (
    FitRefusedError,
    OutputError,
    QuadscopeError,
    StoreError,
    UsageError,
)
from quadscope.notice import notice
from quadscope.textsafe import visible

if TYPE_CHECKING:  # imported where used: building the parser must stay cheap (cli.py)
    from quadscope.analyse.analysis import Analysis
    from quadscope.doctor.records import DoctorReport, ProbeResult, ProbeSeries
    from quadscope.model import Sweep
    from quadscope.store import Store


def split_command(tail: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """The command after `--`, and a B command after a standalone `--vs` in it."""
    items = list(tail)
    if items and items[0] == "--":
        items = items[1:]
    if "--vs" in items:
        i = items.index("--vs")
        a, b = items[:i], items[i + 1:]
        if not b:
            raise UsageError("--vs at the end of the command: put the second command after it")
        return tuple(a), tuple(b)
    return tuple(items), None


def add_store_option(p: Any) -> None:
    p.add_argument("--db", metavar="PATH|URL", default=None,
                   help="the results database: a SQLite file or a postgresql:// URL "
                        "[$QUADSCOPE_DB or .quadscope/results.db]")


def open_store(args: argparse.Namespace, *, readonly: bool = False) -> Store:
    """The store `--db` names (a file or a URL); `readonly` to only read (never creates one)."""
    from quadscope.store import as_location
    from quadscope.store import open_store as open_location

    store = open_location(as_location(getattr(args, "db", None)), readonly=readonly)
    if readonly:
        _READERS.append(store)  # closed by `close_readers` when the command ends
    if not readonly:
        from quadscope.run.rescue import ingest

        if rescued := ingest(store):  # a quadscope killed mid-batch left them with its launcher
            notice(f"stored {rescued} run(s) that a killed quadscope had measured "
                   "but not yet stored")
    return store


_READERS: list[Store] = []  # read-only stores `open_store` opened for the running command


def close_readers() -> None:
    """Close every read-only store `open_store` opened (`cli.main` calls it when a command
    ends, however it ends): closing one removes the -wal and -shm files SQLite keeps while
    it is open. A store already closed, or failing to close, is passed over."""
    while _READERS:
        with contextlib.suppress(Exception):
            _READERS.pop().close()


def add_output_options(p: Any) -> None:
    """One option per renderer that writes files (e.g. `--json FILE`, `--png DIR`)."""
    for r in render.file_renderers():
        p.add_argument(r.flag, dest=r.name, metavar=r.metavar, default=None, help=r.help)


STDOUT = "-"  # an output path meaning "write to standard output"


def add_view_options(p: Any) -> None:
    """How much the terminal shows: `-v` everything, `--quiet` the headline only."""
    both = p.add_mutually_exclusive_group()  # which one would win is a guess: refuse the pair
    both.add_argument("-v", "--verbose", action="store_true",
                      help="show every metric, fit coefficients, notes and failures in full")
    both.add_argument("--quiet", action="store_true", help="print the headline only")


def asked_outputs(args: argparse.Namespace) -> list[tuple[type[render.Renderer], str]]:
    """(renderer, path) for every output option given, in the order they are written;
    OutputError when one names the store itself (`refuse_the_store`): every command that
    writes an output asks here first."""
    asked = [(r, path) for r in render.file_renderers() if (path := getattr(args, r.name, None))]
    for r, path in asked:
        if not r.folder:
            refuse_the_store(args, r.flag, path)
    return asked


def outputs_hint() -> str:
    """The output options as a user reads them: `--json FILE, ... or --png DIR`."""
    opts = [f"{r.flag} {r.metavar}" for r in render.file_renderers()]
    return ", ".join(opts[:-1]) + f" or {opts[-1]}" if len(opts) > 1 else "".join(opts)


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse an output path that cannot be written before a sweep spends time measuring.

    At most one output may go to standard output: two would be one stream no reader can split.
    """
    refuse_two_stdouts(args)
    for r, path in asked_outputs(args):
        check_output(r.flag, path, folder=r.folder)


# The files SQLite keeps beside a store while it writes.
_STORE_SIDE_FILES = ("", "-wal", "-shm", "-journal")


def refuse_the_store(args: argparse.Namespace, flag: str, path: str) -> None:
    """OutputError when output `path` is the store `--db` names, or a file SQLite keeps
    beside it: `export NAME --csv results.db` overwrote the store with CSV, every sweep
    in it lost."""
    from quadscope.store import as_location, is_url

    if path == STDOUT:
        return
    try:
        location = as_location(getattr(args, "db", None))
    except QuadscopeError:
        return  # a --db that is no store: opening it says so
    if is_url(location):
        return
    for side in _STORE_SIDE_FILES:
        if _same_file(Path(f"{location}{side}"), Path(path)):
            what = "a file SQLite keeps beside the" if side else "the"
            raise OutputError(f"{flag} {path} is {what} results database (--db {location}); "
                              "writing there would destroy every stored sweep: name another "
                              "file")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one is missing: the same path, written two ways
        return os.path.abspath(a) == os.path.abspath(b)


def check_output(flag: str, path: str, *, folder: bool = False) -> None:
    """UsageError unless option `flag` can write its file (or, `folder`, files in the
    directory) at `path`; `-` is standard output, fine for a file."""
    if path == STDOUT:
        if folder:
            raise UsageError(f"{flag} writes a folder of files: give a directory, not -")
        return
    target = Path(path) / "x" if folder else Path(path)
    if not folder and target.is_dir():
        raise UsageError(f"{flag} {path} is a directory: name the file to write")
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot create {parent}: "
                         f"{exc.strerror or exc}") from None
    reason = _unwritable(parent, None if folder else target)
    if reason:
        raise OutputError(f"{flag} {path}: {reason}")


def _unwritable(parent: Path, target: Path | None) -> str:
    """Why a file cannot be written in `parent` (at `target`, when it exists), or ''.

    Tried, not asked: `os.access` says yes to root everywhere, so /proc, /sys or a
    file system that refuses new files failed only after the sweep. A temporary file
    is made and removed in `parent`; an existing regular `target` is opened for
    appending (nothing written, nothing truncated).
    """
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=parent):
            pass
        if target is not None and target.is_file():
            os.close(os.open(target, os.O_WRONLY | os.O_APPEND))
    except OSError as exc:
        where = target if target is not None and exc.filename == str(target) else parent
        return f"cannot write in {where}: {exc.strerror or exc}"
    return ""


def _write(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


def refuse_two_stdouts(args: argparse.Namespace) -> None:
    """UsageError when two output options write to standard output (`--json - --csv -`)."""
    to_stdout = [r.flag for r, path in asked_outputs(args) if path == STDOUT]
    if len(to_stdout) > 1:
        raise UsageError(f"{' and '.join(to_stdout)} both write to standard output (-), which "
                         "would mix them into one stream; send all but one to a file")


def write_outputs(args: argparse.Namespace, analysis: Analysis) -> None:
    """Every file the output options ask for, each made by its renderer."""
    refuse_two_stdouts(args)  # show, export and compare write without check_outputs first
    for r, path in asked_outputs(args):
        if r.folder and path == STDOUT:  # `export --png -` made a folder named "-"
            check_output(r.flag, path, folder=True)
    for r, path in asked_outputs(args):
        write_output(r, path, analysis, args)


def write_output(r: type[render.Renderer], path: str, analysis: Analysis,
                 args: argparse.Namespace | None = None) -> None:
    """The file (or the folder of files) renderer `r` makes of `analysis`, at `path`.

    A renderer that declares `reads_gates` gets the outcome of each gate option
    (`commands.gates.junit_cases`); one that declares `step_summary` is also
    appended to $GITHUB_STEP_SUMMARY.
    """
    options: dict[str, Any] = {}
    if r.reads_gates:
        from quadscope.commands.gates import junit_cases

        options["gates"] = junit_cases(args, analysis) if args is not None else ()
    make: Callable[..., render.Renderer] = r  # each renderer takes its own options
    emit(r, path, make(**options).render(analysis))


def emit(r: type[render.Renderer], path: str, out: bytes | Mapping[str, bytes]) -> None:
    """What renderer `r` made, written at `path` (`-`: stdout; see `write_output`)."""
    if isinstance(out, bytes) and path == STDOUT:
        sys.stdout.buffer.write(out)
        sys.stdout.flush()
    elif isinstance(out, bytes):
        _write(Path(path), out)
        notice(f"wrote {visible(str(path))}")
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary and r.step_summary:
            try:
                with open(summary, "ab") as f:  # GitHub expects each step to append
                    f.write(out)
            except OSError as exc:
                raise UsageError(f"cannot append to $GITHUB_STEP_SUMMARY ({summary}): "
                                 f"{exc.strerror or exc}") from None
    else:
        if path == STDOUT:
            raise UsageError(f"{r.flag} writes a folder of files: give a directory, not -")
        if not out:
            raise FitRefusedError(f"{r.flag} {path}: nothing to draw, as no metric could be "
                                  "fitted (every run failed, or too few sizes succeeded); "
                                  "no file was written")
        for name, data in out.items():
            _write(Path(path) / name, data)
        notice(f"wrote {len(out)} {r.name.upper()} file(s) to {visible(str(path))}")


def terminal_width() -> int:
    """The width every terminal report is laid out for: the terminal's ($COLUMNS), at least 40."""
    return max(40, shutil.get_terminal_size((80, 24)).columns)


def print_analysis(analysis: Analysis, args: argparse.Namespace | None = None, *,
                   gap: bool = False) -> None:
    """The terminal report on stdout, as wide as the terminal ($COLUMNS), as `-v`/`--quiet` ask,
    after a blank line when `gap` (the next of several reports).

    Nothing is printed when an output option writes to stdout (`--json -`): the
    report file is then what stdout carries.
    """
    if args is not None and any(path == STDOUT for _, path in asked_outputs(args)):
        return
    if gap:
        sys.stdout.write("\n")
    width = terminal_width()
    out = render.get_renderer(
        "terminal", color=sys.stdout.isatty(), width=width,
        verbose=bool(getattr(args, "verbose", False)), quiet=bool(getattr(args, "quiet", False)),
        # `show --sizes` and `--metric` (dests of their own: `run --sizes` is the sizes to sweep)
        sizes=bool(getattr(args, "per_size", False)), metric=getattr(args, "size_metric", None),
    ).render(analysis)
    assert isinstance(out, bytes)  # the terminal renderer writes no folder
    sys.stdout.write(out.decode("utf-8"))
    sys.stdout.flush()


def analyse_stored(store: Store, sweep: Sweep) -> Analysis:
    """`analyse` of a stored sweep, with the profile and doctor results attached to it."""
    from quadscope.analyse.analysis import analyse
    from quadscope.doctor.records import doctor_from_dict
    from quadscope.profile.records import Attribution

    profile = _blob(store, sweep.id, "profile", Attribution.from_dict)
    doctor = _blob(store, sweep.id, "doctor", doctor_from_dict)
    with fit_progress() as progress:
        return analyse(sweep, store.runs(sweep.id), profile=profile, doctor=doctor,
                       probe_series=probe_series(store, doctor), progress=progress)


class FitProgress:
    """What is being fitted, on a terminal's stderr, once a fit has taken AFTER_S: one line
    rewritten in place for each metric and cleared by `done()`, so that a wide sweep's
    fit is never a silence of seconds and leaves no trace. Elsewhere (a log, a pipe)
    nothing: what is written there must not depend on how fast the machine is, and a
    fit is bounded (`analyse.thin`: at most 100 sizes, a few seconds)."""

    AFTER_S = 1.0

    def __init__(self, stream: Any = None, clock: Callable[[], float] | None = None) -> None:
        import time

        self._stream = stream or sys.stderr
        self._clock = clock or time.monotonic
        self._t0 = self._clock()
        self._count = 0
        self._shown = False
        try:
            self._tty = self._stream.isatty()
        except (AttributeError, ValueError):
            self._tty = False

    def __call__(self, what: str) -> None:
        self._count += 1
        if self._clock() - self._t0 < self.AFTER_S:
            return
        try:
            if self._tty:
                self._stream.write(f"\r\x1b[2Kquadscope: fitting {visible(what)} "
                                   f"(metric {self._count})…")
                self._stream.flush()
        except (OSError, ValueError):
            return  # stderr closed: progress is a courtesy
        self._shown = True

    def done(self) -> None:
        if self._shown and self._tty:
            try:
                self._stream.write("\r\x1b[2K")
                self._stream.flush()
            except (OSError, ValueError):
                pass


@contextlib.contextmanager
def fit_progress() -> Iterator[FitProgress]:
    """A `FitProgress` on stderr, its line cleared however the fit ends."""
    progress = FitProgress()
    try:
        yield progress
    finally:
        progress.done()


T = TypeVar("T")


def _blob(store: Store, sweep_id: int, key: str, load: Callable[[Mapping[str, Any]], T]) -> T | None:
    blob = store.get_blob(sweep_id, key)
    if not blob:
        return None
    try:
        return load(blob)
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"the {key} results stored with sweep {sweep_id} cannot be read "
                         f"({type(exc).__name__}: {exc}); run it again to replace them") from None


PROBE_METRIC = "wall_s"  # what the doctor's verdicts are mostly about


def probe_series(
    store: Store, doctor: DoctorReport | ProbeResult | None
) -> dict[str, tuple[ProbeSeries, ...]]:
    """Each probe's plot lines: median wall_s per size of each of its stored sweeps."""
    from quadscope.doctor.records import DoctorReport

    if doctor is None:
        return {}
    probes = doctor.results if isinstance(doctor, DoctorReport) else (doctor,)
    out = {}
    for probe in probes:
        lines = _probe_lines(store, probe)
        if lines:
            out[probe.probe] = lines
    return out


def _probe_lines(store: Store, probe: ProbeResult) -> tuple[ProbeSeries, ...]:
    from quadscope.analyse.notable import medians_by_size  # the fits' median, as every table
    from quadscope.doctor.records import ProbeSeries

    if probe.ran is None:  # judged outside the runner: no sweeps to draw
        return ()
    lines = []
    for label, sweep_id in probe.ran.sweeps.items():
        try:
            runs = store.runs(int(sweep_id))
            word = "i" if store.get_sweep(int(sweep_id)).mode == "accumulate" else "n"
        except (QuadscopeError, ValueError, TypeError):
            continue  # a probe sweep deleted since: the table row still shows
        good = [r for r in runs if not r.warmup and r.measurement.ok]
        points = tuple(sorted(medians_by_size(good, PROBE_METRIC).items()))
        if points:
            lines.append(ProbeSeries(str(label), points, PROBE_METRIC, word))
    return tuple(lines)
