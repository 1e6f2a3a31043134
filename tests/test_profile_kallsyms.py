"""Kernel frames named from one read of /proc/kallsyms instead of by every perf script run."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from quadscope.errors import ToolMissingError
from quadscope.profile.kallsyms import KernelSymbols, read_kernel_symbols
from quadscope.profile.perf import detect_perf, script_argv
from quadscope.profile.perfscript import SCRIPT_FIELDS, parse
from quadscope.profile.programs import KERNEL_WRITES
from quadscope.profile.stacks import KERNEL_DSO, UNKNOWN

FIX = Path(__file__).parent / "fixtures" / "perf"

TABLE = """\
0000000000000000 A fixed_percpu_data
ffffffff81000000 T _stext
ffffffff81000100 t helper
ffffffff81000200 D some_data
ffffffff82261560 T memcpy
ffffffff82261560 T __pi_memcpy
ffffffff82300000 W weak_fn
ffffffffc0001000 t nft_do_chain\t[nf_tables]
"""


def test_lookup_names_the_symbol_covering_an_address() -> None:
    """A symbol spans up to the next text symbol; data symbols do not end it."""
    k = KernelSymbols.from_text(TABLE)
    assert k.lookup(0xFFFFFFFF81000000) == ("_stext", KERNEL_DSO)
    assert k.lookup(0xFFFFFFFF810000FF) == ("_stext", KERNEL_DSO)
    assert k.lookup(0xFFFFFFFF81000250) == ("helper", KERNEL_DSO)
    assert k.lookup(0xFFFFFFFF82300004) == ("weak_fn", KERNEL_DSO)


def test_lookup_follows_perf_on_duplicates_modules_and_edges() -> None:
    """Last listed at one address wins (as perf 6.1 names it); modules keep their [name]."""
    k = KernelSymbols.from_text(TABLE)
    assert k.lookup(0xFFFFFFFF82261570) == ("__pi_memcpy", KERNEL_DSO)
    assert k.lookup(0xFFFFFFFFC0001010) == ("nft_do_chain", "[nf_tables]")
    assert k.lookup(0xFFFFFFFF80000000) is None
    assert k.lookup(0xFFFFFFFFFF600400) is None  # the vsyscall page


def test_out_of_order_lines_are_sorted_and_hidden_addresses_give_nothing() -> None:
    """Modules listed before the kernel still resolve; an all-zero table is empty."""
    k = KernelSymbols.from_text("ffffffffc0001000 t m_fn\t[m]\nffffffff81000000 T _stext\n")
    assert k.lookup(0xFFFFFFFF81000010) == ("_stext", KERNEL_DSO)
    assert k.lookup(0xFFFFFFFFC0001010) == ("m_fn", "[m]")
    hidden = KernelSymbols.from_text("0000000000000000 T _stext\n0000000000000000 t helper\n")
    assert not hidden
    assert read_kernel_symbols(Path("/nonexistent/kallsyms")) is None


def test_parse_names_unknown_kernel_frames_from_the_table() -> None:
    """perf script run without kernel symbols, plus the table, parses as perf with them."""
    lines = (FIX / "cpu-kernel-writes.txt").read_text().splitlines(keepends=True)
    frame = re.compile(r"^(\s+)([0-9a-f]+) (.+) \(\[kernel\.kallsyms\]\)$")
    table: dict[int, str] = {}
    blind = []
    for ln in lines:
        if m := frame.match(ln.rstrip("\n")):
            table[int(m.group(2), 16)] = m.group(3)
            ln = f"{m.group(1)}{m.group(2)} {UNKNOWN} ([kernel.kallsyms])\n"
        blind.append(ln)
    assert len(table) > 5
    text = "".join(f"{ip:016x} T {sym}\n" for ip, sym in sorted(table.items()))
    assert parse(blind, KernelSymbols.from_text(text)) == parse(lines)
    assert parse(blind) != parse(lines)


def test_script_argv_skips_perfs_own_kernel_symbols_only_when_asked() -> None:
    """--kallsyms /dev/null is added only with own_kernel_symbols."""
    plain = script_argv("perf", Path("p.data"), SCRIPT_FIELDS)
    assert "--kallsyms" not in plain
    own = script_argv("perf", Path("p.data"), SCRIPT_FIELDS, own_kernel_symbols=True)
    assert own[-2:] == ["--kallsyms", "/dev/null"] and own[:-2] == plain


@pytest.mark.integration
def test_real_perf_script_agrees_with_the_table(tmp_path: Path) -> None:
    """On a real kernel-heavy recording, our naming equals perf script's own, frame for frame."""
    try:
        setup = detect_perf(probe_faults=False)
    except ToolMissingError as e:
        pytest.skip(str(e))
    kernel = read_kernel_symbols()
    if not setup.kernel or kernel is None:
        pytest.skip("kernel stacks or kernel symbols are not visible here")
    data = tmp_path / "k.data"
    subprocess.run([setup.perf, "record", "-q", "-B", "-N", "-e", setup.event, "-F", "5000",
                    "--call-graph", "fp", "-o", str(data), "--",
                    str(KERNEL_WRITES.build()), str(KERNEL_WRITES.sizes[-1])],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=60)

    def script(own: bool) -> list[str]:
        argv = script_argv(setup.perf, data, SCRIPT_FIELDS, own_kernel_symbols=own)
        return subprocess.run(argv, capture_output=True, text=True, check=True,
                              timeout=60).stdout.splitlines(keepends=True)

    theirs = parse(script(False))
    assert any(f[2] == KERNEL_DSO and f[1] != UNKNOWN for s in theirs.samples for f in s.chain)
    assert parse(script(True), kernel) == theirs
