"""Probe `spawn-size`: process start-up cost against the number of functions.

Workload: for each N, a generated program with N functions and a table of N
function pointers, built twice — position-independent (`-fPIE -pie`: the table
needs N R_X86_64_RELATIVE relocations that ld.so applies at every start, each
touching a page of the table) and fixed-address (`-no-pie`: no relocations).
The functions are emitted by assembler macros (`.rept`), because gcc -O0 spends
~0.3 ms per C function (30 s for 10⁵); this way 10⁵ functions build in ~1.2 s,
and `cbuild` caches every binary. The sweep is over binaries: each size's
binary is linked into `{bin}` as `qs-doctor-spawn-pie-N`, and the command is
`{bin}/qs-doctor-spawn-pie-{n}`.

Sizes: 300 … 10⁵ functions (3·10⁴ with --quick). Cost per function is the
slope of cpu_s (user + sys, immune to other tenants; wall_s when absent) and
of minor_faults against N.

Pathological: start-up grows faster than N. Slow: each PIE relocation (PIE
cost per function minus non-PIE) costs more than 20 ns — 10⁵ of them add over
2 ms to every launch; measured ~6 ns on a 2-core VM — which packed relative
relocations (`-z pack-relative-relocs`, glibc ≥ 2.36) or -no-pie remove; or
even the non-PIE image costs more than 50 ns per function (exec reads or
faults in the whole file).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from quadscope.doctor.base import (
    Evidence,
    Helper,
    ProbePlan,
    ProbeResult,
    Row,
    Variant,
    class_cell,
    cost_fits,
    doubts,
    first_superlinear,
    fit_of,
    fmt_s,
    grows,
    growths,
    per_unit,
    ran,
    why_skipped,
)
from quadscope.doctor.details import SpawnSizeDetails

SIZES_FULL = (300, 1_000, 3_000, 10_000, 30_000, 100_000)
SIZES_QUICK = (300, 1_000, 3_000, 10_000, 30_000)
FLAGS = {
    "pie": ("-O0", "-fPIE", "-pie"),
    "nopie": ("-O0", "-fno-pie", "-no-pie"),
}
SLOW_NS_PER_RELOC = 20.0
SLOW_NS_PER_FUNCTION = 50.0

_TEMPLATE = r"""
/* @N@ functions and a table of @N@ pointers to them, emitted by the assembler. */
__asm__(
    ".altmacro\n"
    ".macro qs_def i\n"
    "  .globl qs_f\\i\n"
    "  .type qs_f\\i,@function\n"
    "qs_f\\i:\n"
    "  lea \\i(%rdi),%eax\n"
    "  ret\n"
    ".endm\n"
    ".macro qs_ptr i\n"
    "  .quad qs_f\\i\n"
    ".endm\n"
    ".text\n"
    ".set qs_i,0\n"
    ".rept @N@\n"
    "  qs_def %qs_i\n"
    "  .set qs_i,qs_i+1\n"
    ".endr\n"
    ".section .data.rel.ro,\"aw\"\n"
    ".balign 8\n"
    ".globl qs_table\n"
    "qs_table:\n"
    ".set qs_i,0\n"
    ".rept @N@\n"
    "  qs_ptr %qs_i\n"
    "  .set qs_i,qs_i+1\n"
    ".endr\n"
    ".text\n"
    ".noaltmacro\n");
typedef int (*qs_fn)(int);
extern const qs_fn qs_table[];
int main(int argc, char **argv) {
    (void)argv;
    return qs_table[argc - 1](0) & 0;
}
"""


def source(n: int) -> str:
    """The generated program for `n` functions (x86-64 assembler inside C)."""
    return _TEMPLATE.replace("@N@", str(n))


def helper_name(kind: str, n: int) -> str:
    return f"qs-doctor-spawn-{kind}-{n}"


@dataclass(frozen=True, slots=True)
class SpawnSizeProbe:
    name: str = "spawn-size"
    describe: str = "start-up cost of PIE and non-PIE programs with N function pointers"
    weight: float = 1.5

    def plan(self, quick: bool, machine: Mapping[str, Any]) -> ProbePlan:
        sizes = SIZES_QUICK if quick else SIZES_FULL
        if machine.get("machine", "x86_64") not in ("x86_64", "amd64", ""):
            reason = f"the generated programs are x86-64 assembler; this is {machine['machine']}"
            return ProbePlan((), (), {"pie": reason, "nopie": reason})
        helpers = tuple(
            Helper(helper_name(kind, n), source(n), FLAGS[kind]) for kind in FLAGS for n in sizes
        )
        variants = tuple(
            Variant(
                label=kind,
                argv=(f"{{bin}}/qs-doctor-spawn-{kind}-{{n}}",),
                helpers=tuple(helper_name(kind, n) for n in sizes),
                sizes=sizes,
                # runs cost ~2 ms each; many repeats beat a noisy VM's jitter
                repeat=8 if quick else 12,
            )
            for kind in FLAGS
        )
        return ProbePlan(helpers, variants)

    def judge(self, evidence: Evidence) -> ProbeResult:
        walls = cost_fits(evidence, FLAGS)
        per_fn = {k: per_unit(f) for k, f in walls.items()}
        faults = {k: per_unit(fit_of(evidence, k, "minor_faults")) for k in FLAGS}
        built = ran(evidence, FLAGS)
        # What relocations add: PIE minus the same image without them.
        reloc = (
            max(per_fn["pie"] - per_fn["nopie"], 0.0)
            if per_fn["pie"] is not None and per_fn["nopie"] is not None
            else None
        )
        numbers = {f"{k}_ns_per_function": v * 1e9 for k, v in per_fn.items() if v is not None}
        if reloc is not None:
            numbers["relocation_ns"] = reloc * 1e9
        classes = growths(walls)
        details = SpawnSizeDetails(
            ns_per_function={k: None if v is None else v * 1e9 for k, v in per_fn.items()},
            relocation_ns=None if reloc is None else reloc * 1e9,
            faults_per_function=faults,
            classes=classes,
            numbers=numbers,
        )
        measured = "exec of a program with N functions + N-pointer table, PIE vs non-PIE"
        if not built:
            return ProbeResult.skipped(self.name, measured,
                                       why_skipped(evidence, "no binary could be built"), details)
        cost = "; ".join(f"{k} {fmt_s(per_fn[k])}/fn" for k in built)
        if reloc is not None:
            cost += f" (relocation {fmt_s(reloc)})"
        row = Row(self.name, measured, class_cell(classes, built), cost, details)
        bad = first_superlinear(walls, built)
        if bad is not None:
            return row.pathological(
                f"start-up of {bad} programs grows as {classes[bad]} in the number "
                "of functions: the dynamic loader or exec does more than one pass per "
                "function; check LD_* variables and `ld.so --list-diagnostics`"
            )
        unsure = doubts({k: walls[k] for k in built})
        if reloc is not None and reloc * 1e9 > SLOW_NS_PER_RELOC and grows(walls["pie"]):
            return row.slow(
                f"each function pointer in a PIE costs {fmt_s(reloc)} of start-up here "
                f"({fmt_s(reloc * 1e5)} per launch for 10⁵ of them): link large, "
                "often-launched programs with -Wl,-z,pack-relative-relocs or -no-pie" + unsure
            )
        size_cost = per_fn["nopie"]
        if (
            size_cost is not None
            and size_cost * 1e9 > SLOW_NS_PER_FUNCTION
            and grows(walls["nopie"])
        ):
            return row.slow(
                f"start-up grows with executable size even without relocations: "
                f"{fmt_s(size_cost)} per function ({fmt_s(size_cost * 1e5)} for 10⁵): exec "
                "is reading or faulting the whole image; check the file system the binaries "
                "live on and prefer smaller, split executables for short-lived processes"
                + unsure
            )
        each = ", ".join(f"{k} {fmt_s(per_fn[k])}" for k in built) + " per function"
        if reloc is not None and reloc * 1e9 <= SLOW_NS_PER_RELOC:
            each += (
                f"; relocations cost {fmt_s(reloc)} each, under the "
                f"{SLOW_NS_PER_RELOC:.0f} ns at which packing them pays"
            )
        elif reloc is not None:
            each += (
                f"; PIE costs {fmt_s(reloc)} more per function, but its start-up was not "
                "seen to grow, so that difference is noise"
            )
        growing = [k for k in built if grows(walls[k])]
        if growing:
            # The class column says it grows, so the finding must not say it does not.
            worst = max(per_fn[k] or 0.0 for k in growing)
            what = (
                f"start-up grows with program size ({', '.join(growing)}), but cheaply: "
                f"{fmt_s(worst * 1e5)} per launch at 10⁵ functions ({each})"
            )
        else:
            what = f"start-up cost does not measurably grow with program size ({each})"
            # a guess of n (or worse) in the class column needs its reason here
            unsure = doubts({k: walls[k] for k in built}, flat=True)
        return row.ok(f"{what}; nothing to do{unsure}")


PROBE = SpawnSizeProbe()
