"""Kernel function names for kernel addresses, read once per profile instead of once per file.

Contract: `KernelSymbols.from_text(text)` parses `/proc/kallsyms` text (pure);
`lookup(ip)` returns `(symbol, dso)` for a kernel address as `perf script`
names it, or None when no text symbol covers it. `read_kernel_symbols(path)`
reads the file and returns None when it is unreadable or its addresses are
hidden (kernel.kptr_restrict: all zero), so perf is left to do as it can.

Why: perf script spends about 0.1 s of every invocation parsing the kernel's
~120,000 symbols, more than it spends on a typical profile's samples; the
sampler runs perf script with `--kallsyms /dev/null` and names the few hundred
distinct kernel addresses here, from one parse per profile. The rules follow
perf's (tools/perf/util/symbol.c, Linux 6.1): only text symbols (t, T, w, W)
are kept; a symbol ends where the next one starts; of several at one address
the last listed names it (checked against perf script's own naming, 6.1).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path

from quadscope.profile.stacks import KERNEL_DSO, VSYSCALL_START

_TEXT_TYPES = frozenset("tTwW")  # perf's symbol_type__filter keeps text symbols only
_WIDTH = 16  # /proc/kallsyms prints every address as 16 hex digits on 64-bit kernels


@dataclass(frozen=True, slots=True)
class KernelSymbols:
    """The lines of /proc/kallsyms in address order, searched by their fixed-width address.

    Parsing 120,000 lines into numbers costs more than perf's own load; the lines
    are kept as text, and only the few hundred addresses a profile hits are looked up.
    """

    lines: tuple[str, ...]
    keys: tuple[str, ...]  # lines[i][:16]

    @classmethod
    def from_text(cls, text: str) -> KernelSymbols:
        lines = text.splitlines()
        keys = [ln[:_WIDTH] for ln in lines]
        if keys != sorted(keys):  # modules may be listed out of address order
            lines.sort(key=lambda ln: ln[:_WIDTH])  # stable: the last listed stays last
            keys = [ln[:_WIDTH] for ln in lines]
        if keys and int(keys[-1], 16) == 0:  # kptr_restrict hides every address as zero
            return cls((), ())
        return cls(tuple(lines), tuple(keys))

    def __bool__(self) -> bool:
        return bool(self.lines)

    def lookup(self, ip: int) -> tuple[str, str] | None:
        if ip >= VSYSCALL_START:  # the legacy vsyscall page: no kernel text lives there
            return None
        # The last text symbol starting at or below ip: a symbol ends where the next
        # one starts, and of several at one address perf names the last listed.
        i = bisect.bisect_right(self.keys, f"{ip:016x}") - 1
        while i >= 0:
            parts = self.lines[i].split(maxsplit=3)
            if len(parts) > 2 and parts[1] in _TEXT_TYPES and int(parts[0], 16):
                module = parts[3].strip() if len(parts) > 3 else ""
                return parts[2], module if module.startswith("[") else KERNEL_DSO
            i -= 1
        return None


def read_kernel_symbols(path: Path = Path("/proc/kallsyms")) -> KernelSymbols | None:
    """The running kernel's text symbols, or None when unreadable or hidden (all zero)."""
    try:
        table = KernelSymbols.from_text(path.read_text(errors="replace"))
    except OSError:
        return None
    return table or None
