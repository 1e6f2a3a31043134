"""Run each `culprit_cases.CASES` program through `quadscope run --profile` and score it.

Contract: `run_case(case, folder)` builds the case's program, runs the CLI as a
user would (`quadscope run --sizes S --profile --json out.json -- PROG {n}`,
the default meter and `--callgrind auto`), and returns a `Scored` row:
"culprit named first" (the first line under the headline, the culprit
sentence, names the user's function; for the doctor's kernel cases, the
first kernel row is credited to it too), "user's function named" (in the
sentence or in the first three culprit rows' names and call paths), the
sentence, the top row, the Callgrind pass's seconds against the timed
sweep's (the runs' summed wall time) and the whole command's seconds.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from culprit_cases import REPO, Case

TIMEOUT_S = 600


@dataclass(frozen=True, slots=True)
class Scored:
    case: Case
    first: bool | None  # None: not run
    named: bool | None
    sentence: str
    top: str
    callgrind_s: float | None
    timed_s: float | None
    total_s: float
    why: str = ""  # not run, or failed: one sentence
    budget_s: float | None = None  # the runs' wall plus the sampling: what Callgrind may cost
    skipped_s: float | None = None  # Callgrind's predicted seconds when `auto` skipped it


def _subject(sentence: str) -> str:
    """The function a culprit sentence names: the words before " (" or " makes"."""
    return re.split(r" \(| makes | does ", sentence, maxsplit=1)[0]


def _matches(name: str, user: tuple[str, ...]) -> bool:
    bare = name.split("(")[0].split("<")[0]
    return any(bare == u or bare.endswith("::" + u) or bare.split(".")[0] == u for u in user)


def _row_text(c: dict[str, Any]) -> str:
    """The row as the terminal names it: `memset ← touch`, `remember_user → list_insert`."""
    path = c.get("call_path") or []
    if c.get("user_caller"):
        return f"{c['symbol']} ← {c['user_caller']} ({c['self_class']})"
    parent = f"{path[-2]} → " if len(path) >= 2 else ""
    return f"{parent}{c['symbol']} ({c['self_class']})"


def score(case: Case, doc: dict[str, Any], total_s: float) -> Scored:
    prof = doc.get("profile") or {}
    extra = prof.get("extra") or {}
    said = extra.get("culprit_sentence") or ""
    rows = prof.get("culprits") or []
    first = bool(said) and _matches(_subject(said), case.user)
    if case.kernel:
        kernel = [c for c in rows if c["dso"] == "[kernel.kallsyms]"]
        first = first or bool(kernel and _matches(kernel[0].get("user_caller") or "", case.user))
    names = [n for c in rows[:3] for n in (c["symbol"], c.get("user_caller") or "",
                                            *c.get("call_path", []))]
    named = first or any(_matches(n, case.user) for n in names) or any(
        u in said for u in case.user)
    cg = extra.get("callgrind") or {}
    timed = sum(r["wall_s"] for r in doc.get("runs", []) if r.get("wall_s") is not None)
    skipped = bool(cg.get("skipped"))
    return Scored(case, first, named, said, _row_text(rows[0]) if rows else "—",
                  None if skipped else cg.get("spent_s"), timed or None, total_s,
                  budget_s=cg.get("budget_s"),
                  skipped_s=cg.get("predicted_s") if skipped else None)


def run_case(case: Case, folder: Path) -> Scored:
    if why := case.missing():
        return Scored(case, None, None, "", "", None, None, 0.0, why)
    argv, env_extra = case.prepare(folder)
    out = folder / "out.json"
    shell = argv[:1] == ("--shell",)
    cmd = [sys.executable, "-m", "quadscope", "run", "--db", str(folder / "q.db"),
           "--sizes", case.sizes, "--profile", "--json", str(out), *case.extra,
           *(["--shell"] if shell else []), "--", *argv[1 if shell else 0:]]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), **env_extra}
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env, cwd=folder, capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=False)
    total = time.monotonic() - t0
    if proc.returncode != 0 or not out.exists():
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return Scored(case, False, False, "", "", None, None, total,
                      f"exit {proc.returncode}: {tail[:200]}")
    return score(case, json.loads(out.read_text()), total)


__all__ = ["Scored", "run_case", "score"]
