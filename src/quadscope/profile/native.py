"""C work under Python frames on CPython before 3.12: py-spy's Python stacks + perf's C stacks.

Contract: `PythonNativeSampler(python, native)` implements `sampler.Sampler`:
at each size it records the command with `python` (py-spy: Python frames) and
again with `native` (perf: C frames of libpython, libc and the kernel), and
returns py-spy's profile carrying perf's stacks under `extra[NATIVE_KEY]`.
`splice_native(profiles)` (pure) then puts perf's heaviest native chains under
the Python frame that runs them, and returns the profiles without that extra
plus one sentence saying what was placed where.

Why two recordings: py-spy by design never shows the interpreter's own C
functions (libpython), so a loop of `l.insert(0, i)` profiles as `<listcomp>`
100%; perf sees `list_insert` (and libc's `memmove` where the build calls it)
but not which Python function ran it, because CPython 3.11 has no perf
trampolines (3.12's `-X perf`, used by `driver.choose_sampler` there) and is
built without frame pointers. The two recordings are separate runs, so no
sample of one matches a sample of the other; the splice is a proportional
merge under stated assumptions:
- chains are chosen once, at the largest size: the native suffix of each perf
  stack below the interpreter loop (`_PyEval_*`, `py::` frames), its last
  `MAX_CHAIN_FRAMES` known frames, holding at least `CHAIN_MIN_SHARE` of perf's
  samples there, at most `MAX_CHAINS`, bytecode itself (a chain ending in the
  loop) excluded;
- the *target* is the Python stack with the most own samples at the largest
  size (the frame whose "own time" is the interpreter working for it);
- at every size each chain gets py-spy's total × its share of perf's weight
  at that size, taken from the target's own samples and never more than they
  hold, so totals stay py-spy's and a chain's growth across sizes is perf's.
A program whose C work is spread over several Python functions gets all of
it under the hottest one; the note says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from quadscope.profile.faults import FaultReport
from quadscope.profile.sampler import Overhead, Sampler
from quadscope.profile.stacks import Frame, Stack, StackProfile
from quadscope.profile.startup import is_startup_stack

NATIVE_KEY = "native_stacks"
CHAIN_MIN_SHARE = 0.05
MAX_CHAINS = 3
MAX_CHAIN_FRAMES = 3


class PythonNativeSampler:
    """`python` for the Python frames, `native` for the C frames, of the same command."""

    def __init__(self, python: Sampler, native: Sampler) -> None:
        self.python = python
        self.native = native
        self.name = f"{python.name} + {native.name}"
        self.notes = tuple(dict.fromkeys((*python.notes, *native.notes)))

    def sample(self, argv: Sequence[str], *, size_n: int, reference_s: float | None,
               out_dir: Path) -> StackProfile:
        prof = self.python.sample(argv, size_n=size_n, reference_s=reference_s, out_dir=out_dir)
        nat = self.native.sample(argv, size_n=size_n, reference_s=reference_s, out_dir=out_dir)
        return replace(prof, extra={**prof.extra, NATIVE_KEY: dict(nat.stacks)},
                       notes=tuple(dict.fromkeys((*prof.notes, *nat.notes))))

    def sample_faults(self, argv: Sequence[str], *, size_n: int, expected_faults: int | None,
                      out_dir: Path) -> FaultReport | None:
        return self.native.sample_faults(argv, size_n=size_n, expected_faults=expected_faults,
                                         out_dir=out_dir)

    def overhead(self, argv: Sequence[str], *, size_n: int) -> Overhead | None:
        return self.python.overhead(argv, size_n=size_n)


def is_interpreter_loop(frame: Frame) -> bool:
    """A frame of the bytecode loop itself: the work of whichever Python function runs."""
    s = frame.symbol
    return s.startswith(("_PyEval_", "PyEval_", "py::"))


def native_chain(stack: Stack) -> Stack:
    """The C frames below the last interpreter-loop frame (or the whole stack without one):
    known frames only (frame-pointer walks through libpython end in garbage), the last few."""
    cut = max((i + 1 for i, f in enumerate(stack) if is_interpreter_loop(f)), default=0)
    return tuple(f for f in stack[cut:] if f.known)[-MAX_CHAIN_FRAMES:]


def _chain_weights(native: Mapping[Stack, int]) -> dict[Stack, int]:
    out: dict[Stack, int] = {}
    for stack, w in native.items():
        if is_startup_stack(stack):
            continue
        chain = native_chain(stack)
        if chain:
            out[chain] = out.get(chain, 0) + w
    return out


def _is_python(frame: Frame) -> bool:
    return frame.dso.endswith(".py") or (frame.dso.startswith("<") and frame.dso.endswith(">"))


def choose_target(stacks: Mapping[Stack, int]) -> Stack | None:
    """The Python stack with the most own samples (leaf a Python frame, not start-up)."""
    own = [(w, st) for st, w in stacks.items()
           if st and _is_python(st[-1]) and not is_startup_stack(st)]
    return max(own)[1] if own else None


def choose_chains(native: Mapping[Stack, int], shown: set[Frame]) -> list[Stack]:
    """perf's heaviest native chains (≥ CHAIN_MIN_SHARE), skipping any py-spy already shows."""
    weights = _chain_weights(native)
    total = sum(native.values())
    if total <= 0:
        return []
    ranked = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))
    return [c for c, w in ranked if w / total >= CHAIN_MIN_SHARE and c[-1] not in shown
            ][:MAX_CHAINS]


def splice_native(profiles: Sequence[StackProfile]) -> tuple[tuple[StackProfile, ...], str | None]:
    """The profiles with perf's native chains spliced under the hottest Python frame (see above)."""
    if not profiles or not all(NATIVE_KEY in p.extra for p in profiles):
        return tuple(profiles), None
    ordered = sorted(profiles, key=lambda p: p.size_n)
    top = ordered[-1]
    target = choose_target(top.stacks)
    bare = tuple(replace(p, extra={k: v for k, v in p.extra.items() if k != NATIVE_KEY})
                 for p in ordered)
    if target is None:
        return bare, None
    shown = {st[len(target)] for st in top.stacks if len(st) > len(target)
             and st[:len(target)] == target}
    chains = choose_chains(top.extra[NATIVE_KEY], shown)
    if not chains:
        return bare, _unnamed_note(top.extra[NATIVE_KEY], target)
    out = []
    for p, with_native in zip(bare, ordered, strict=True):
        native: Mapping[Stack, int] = with_native.extra[NATIVE_KEY]
        weights = _chain_weights(native)
        native_total = sum(native.values())
        stacks = dict(p.stacks)
        left = stacks.get(target, 0)
        for chain in chains:
            if native_total <= 0 or left <= 0:
                break
            w = min(left, round(p.total_weight * weights.get(chain, 0) / native_total))
            if w > 0:
                stacks[target + chain] = stacks.get(target + chain, 0) + w
                left -= w
        if left > 0:
            stacks[target] = left
        else:
            stacks.pop(target, None)
        out.append(replace(p, stacks=stacks))
    names = ", ".join(" → ".join(f.label() for f in c) for c in chains)
    note = (f"C functions under {target[-1].label()} ({names}) come from perf recordings of the "
            "same command (perf's frame-pointer call graphs): py-spy does not show the "
            "interpreter's own C functions before Python 3.12, so perf's heaviest native work "
            "is placed under the Python function with the most own time, in proportion to "
            "perf's samples at each size")
    return tuple(out), note


def _unnamed_note(native: Mapping[Stack, int], target: Stack) -> str | None:
    """Why no C function is shown, when perf's heaviest work has no symbol (a stripped build)."""
    total = sum(native.values())
    unnamed: dict[str, int] = {}
    for stack, w in native.items():
        if stack and not stack[-1].known and stack[-1].dso.startswith("/"):
            unnamed[stack[-1].dso] = unnamed.get(stack[-1].dso, 0) + w
    if not unnamed or total <= 0:
        return None
    dso, w = max(unnamed.items(), key=lambda kv: kv[1])
    if w / total < CHAIN_MIN_SHARE:
        return None
    return (f"the C functions under {target[-1].label()} cannot be named: {w / total:.0%} of "
            f"perf's samples fall in {dso}, which has no symbols (a stripped interpreter); "
            "install its debug symbols (Debian: the python3-dbg or -dbgsym package) or use a "
            "Python built with them (pyenv's, python.org's)")
