"""Read Callgrind's output files into exact per-function instruction counts. Pure.

Contract: `parse_callgrind(text)` reads one file in the Callgrind format
(Valgrind's "Callgrind Format Specification") and returns a `CallgrindCounts`:
per function (`FunctionKey`: its name and ELF object) its *self* count (the
cost lines inside its `fn=` blocks, inlined code under `fi=`/`fe=` included),
the inclusive count of each call it makes (`calls=` lines: the cost line that
follows a `calls=` line is the callee's whole cost for those calls, not the
caller's own) with the line of its costliest call site (`call_sites`: in
the file of the code making the call, an inlined function's own), and where
each function lives (`FunctionSite`: the `fl=` file and about its
definition's line: the lowest of its own cost lines in that file a few lines
above where calls enter it, or without a call the lowest of them).
`merge(counts)` sums several files: `--trace-children=yes` writes one per
process, and a command's count is every process's.
`CallgrindCounts.inclusive(f)` is self plus the calls to *other* functions:
a recursive call's cost is already in the function's self and its other calls,
so counting it again would double it (mutual recursion f → g → f still
overcounts, as in callgrind_annotate without `--separate-recs`).

Only the first event column is read (`events: Ir` by default: instructions).
Name compression: `(id) name` defines an id, `(id)` alone refers to it; the
ids of `fn=`/`cfn=` are one table, of `fl=`/`fi=`/`fe=`/`cfi=`/`cfl=` another,
of `ob=`/`cob=` a third. Positions may be relative (`+N`, `-N`) or `*` (the
same), per position column; a `calls=` line's target position is relative to
the same last position but does not move it. `cob=`/`cfi=`/`cfl=` name the
callee of the next `calls=` line only; unset, the caller's object and file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

UNKNOWN = "???"
# The prologue's line (the definition's) lies a line or two above the first statement's.
ENTRY_SLACK_LINES = 3
_SPEC = re.compile(r"^([a-z]+)=(.*)$")
_COMPRESSED = re.compile(r"^\((\d+)\)(?:\s(.*))?$")


@dataclass(frozen=True, slots=True, order=True)
class FunctionKey:
    name: str
    obj: str  # the ELF object (`ob=`): the program's own binary or a library


@dataclass(frozen=True, slots=True)
class FunctionSite:
    file: str  # its `fl=` file, UNKNOWN without debug info
    line: int  # the lowest line of its own cost in that file; 0 when none is known


@dataclass(frozen=True, slots=True)
class CallgrindCounts:
    """Exact instruction counts of one run (one process, or several merged)."""

    self_ir: Mapping[FunctionKey, int]
    calls_ir: Mapping[tuple[FunctionKey, FunctionKey], int]  # (caller, callee) -> inclusive
    sites: Mapping[FunctionKey, FunctionSite] = field(default_factory=dict)
    commands: tuple[str, ...] = ()  # the `cmd:` of each process
    # (caller, callee) -> the line of the caller's costliest call to it (inlined code's own file)
    call_sites: Mapping[tuple[FunctionKey, FunctionKey], FunctionSite] = field(
        default_factory=dict)

    @property
    def total_ir(self) -> int:
        return sum(self.self_ir.values())

    def functions(self) -> set[FunctionKey]:
        return {*self.self_ir, *(c for _, c in self.calls_ir), *(c for c, _ in self.calls_ir)}

    def inclusive(self, f: FunctionKey) -> int:
        return self.self_ir.get(f, 0) + sum(
            v for (caller, callee), v in self.calls_ir.items() if caller == f and callee != f)

    def callees(self, f: FunctionKey) -> dict[FunctionKey, int]:
        return {callee: v for (caller, callee), v in self.calls_ir.items()
                if caller == f and callee != f}


class _Names:
    """One compression table: `(id) name` defines, `(id)` refers."""

    def __init__(self) -> None:
        self._by_id: dict[str, str] = {}

    def read(self, value: str) -> str:
        m = _COMPRESSED.match(value.strip())
        if m is None:
            return value.strip()
        ident, name = m.group(1), m.group(2)
        if name is not None:
            self._by_id[ident] = name.strip()
            return name.strip()
        return self._by_id.get(ident, f"({ident})")


def _positions(fields: list[str], last: list[int]) -> list[int]:
    """Absolute positions of `fields` against `last` (one per position column)."""
    out = []
    for i, tok in enumerate(fields):
        prev = last[i] if i < len(last) else 0
        if tok == "*":
            out.append(prev)
        elif tok[0] in "+-":
            out.append(prev + int(tok))
        else:
            out.append(int(tok, 0))
    return out


class _Reader:
    """The parse state of one file; `counts()` when every line is read."""

    def __init__(self) -> None:
        self.files, self.fns, self.objs = _Names(), _Names(), _Names()
        self.n_positions = 1
        self.line_column = 0  # which position column is the line
        self.last: list[int] = [0]
        self.ob = self.fl = self.fi = UNKNOWN
        self.fn: FunctionKey | None = None
        self.cob: str | None = None
        self.cfl: str | None = None
        self.cfn: str | None = None
        self.pending_call: FunctionKey | None = None
        self.self_ir: dict[FunctionKey, int] = {}
        self.calls_ir: dict[tuple[FunctionKey, FunctionKey], int] = {}
        self.call_sites: dict[tuple[FunctionKey, FunctionKey], tuple[int, FunctionSite]] = {}
        self.entries: dict[FunctionKey, int] = {}  # the line a call enters it at
        self.own_lines: dict[FunctionKey, set[int]] = {}
        self.files_of: dict[FunctionKey, str] = {}
        self.commands: list[str] = []

    def header(self, key: str, value: str) -> bool:
        if key == "positions":
            cols = value.split()
            self.n_positions = len(cols)
            self.line_column = cols.index("line") if "line" in cols else 0
            self.last = [0] * self.n_positions
        elif key == "cmd":
            self.commands.append(value.strip())
        return key in {"positions", "cmd", "version", "creator", "pid", "part", "desc",
                       "events", "summary", "totals", "thread", "event", "target"}

    def spec(self, key: str, value: str) -> None:
        if key == "ob":
            self.ob = self.objs.read(value)
        elif key == "fl":
            self.fl = self.fi = self.files.read(value)
        elif key in ("fi", "fe"):
            self.fi = self.files.read(value)
        elif key == "fn":
            self.fn = FunctionKey(self.fns.read(value), self.ob)
            self.files_of.setdefault(self.fn, self.fl)
            self.fi = self.fl
        elif key == "cob":
            self.cob = self.objs.read(value)
        elif key in ("cfi", "cfl"):
            self.cfl = self.files.read(value)
        elif key == "cfn":
            self.cfn = self.fns.read(value)
        elif key == "calls":
            self._call(value)
        # jump=, jcnd= (--collect-jumps) carry no instruction counts: skipped

    def _call(self, value: str) -> None:
        target = value.split()[1:1 + self.n_positions]
        if self.cfn is None:
            return
        callee = FunctionKey(self.cfn, self.cob if self.cob is not None else self.ob)
        callee_file = self.cfl if self.cfl is not None else self.fl
        self.files_of.setdefault(callee, callee_file)
        if target and callee_file == self.files_of[callee]:
            line = _positions(target, self.last)[self.line_column]
            if line > 0:
                self.entries.setdefault(callee, line)
        self.pending_call = callee
        self.cob = self.cfl = self.cfn = None

    def cost(self, fields: list[str]) -> None:
        pos = _positions(fields[:self.n_positions], self.last)
        self.last = pos
        costs = fields[self.n_positions:]
        ir = int(costs[0]) if costs else 0
        if self.fn is None:
            return
        if self.pending_call is not None:
            edge = (self.fn, self.pending_call)
            self.calls_ir[edge] = self.calls_ir.get(edge, 0) + ir
            best = self.call_sites.get(edge)
            if best is None or ir > best[0]:
                self.call_sites[edge] = (ir, FunctionSite(self.fi, pos[self.line_column]))
            self.pending_call = None
            return
        self.self_ir[self.fn] = self.self_ir.get(self.fn, 0) + ir
        line = pos[self.line_column]
        if self.fi == self.files_of.get(self.fn) and line > 0 and ir > 0:
            self.own_lines.setdefault(self.fn, set()).add(line)

    def _line(self, f: FunctionKey) -> int:
        """Its definition's line: the lowest of its own lines just above where calls enter it.

        Not simply its lowest line: a function inlined into it from higher up the
        same file brings its lines along (main with append_field inlined starts
        at append_field's line otherwise); without a call, its lowest line.
        """
        own = self.own_lines.get(f, set())
        entry = self.entries.get(f)
        if entry is None:
            return min(own, default=0)
        return min((n for n in own if entry - ENTRY_SLACK_LINES <= n <= entry), default=entry)

    def counts(self) -> CallgrindCounts:
        sites = {f: FunctionSite(self.files_of.get(f, UNKNOWN), self._line(f))
                 for f in {*self.self_ir, *self.files_of}}
        return CallgrindCounts(self.self_ir, self.calls_ir, sites, tuple(self.commands),
                               {e: site for e, (_, site) in self.call_sites.items()})


def parse_callgrind(text: str) -> CallgrindCounts:
    """The exact counts one Callgrind output file holds (see the module docstring)."""
    r = _Reader()
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, colon, value = line.partition(":")
        is_header = colon and "=" not in key and not (key[0].isdigit() or key[0] in "+-*")
        if is_header and r.header(key.strip(), value):
            continue
        m = _SPEC.match(line)
        if m is not None:
            r.spec(m.group(1), m.group(2))
            continue
        if line[0].isdigit() or line[0] in "+-*":
            r.cost(line.split())
    return r.counts()


def merge(parts: Iterable[CallgrindCounts]) -> CallgrindCounts:
    """Several processes' counts summed per function and per call."""
    self_ir: dict[FunctionKey, int] = {}
    calls_ir: dict[tuple[FunctionKey, FunctionKey], int] = {}
    sites: dict[FunctionKey, FunctionSite] = {}
    commands: list[str] = []
    call_sites: dict[tuple[FunctionKey, FunctionKey], FunctionSite] = {}
    for p in parts:
        for f, v in p.self_ir.items():
            self_ir[f] = self_ir.get(f, 0) + v
        for e, v in p.calls_ir.items():
            calls_ir[e] = calls_ir.get(e, 0) + v
        for f, s in p.sites.items():
            known = sites.get(f)
            if known is None or (known.line == 0 and s.line > 0):
                sites[f] = s
        commands.extend(p.commands)
        for e, site in p.call_sites.items():
            call_sites.setdefault(e, site)  # the first process's: the same program's line
    return CallgrindCounts(self_ir, calls_ir, sites, tuple(commands), call_sites)
