"""Recover the caller that frame-pointer stacks skip at a leaf or a function entry.

Contract: `CallSiteResolver.callee_at(dso, return_addr) -> str | None` names
the function directly called by the `call` instruction that ends at
`return_addr` in `dso` (an ELF file), or None when it is not a direct call,
the file cannot be read, or the target has no symbol. `ElfCallSites` reads the
bytes from the ELF file and the symbols from `nm`, caching both per instance;
`FakeCallSites` answers from a dict.

Why: a sample taken in a function that has not (yet) pushed its frame pointer
(a leaf built without -mno-omit-leaf-frame-pointer, or the first instruction of
the vsyscall page) walks from the *caller's* frame, so perf's chain goes
straight from the leaf to the caller's caller and the caller disappears. The
return address perf does print sits just after the call into the missing frame,
so a direct call there (x86-64 `e8 rel32`) names it.
"""

from __future__ import annotations

import bisect
import shutil
import struct
import subprocess
from collections.abc import Mapping
from typing import Protocol


class CallSiteResolver(Protocol):
    def callee_at(self, dso: str, return_addr: int) -> str | None: ...


class FakeCallSites:
    def __init__(self, answers: Mapping[tuple[str, int], str]) -> None:
        self._answers = dict(answers)

    def callee_at(self, dso: str, return_addr: int) -> str | None:
        return self._answers.get((dso, return_addr))


def _load_segments(data: bytes) -> list[tuple[int, int, int]]:
    """(vaddr, file offset, file size) of each PT_LOAD of a 64-bit little-endian ELF."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    phoff = struct.unpack_from("<Q", data, 0x20)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    segs = []
    for i in range(phnum):
        p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + i * phentsize
        )
        if p_type == 1:
            segs.append((p_vaddr, p_offset, p_filesz))
    return segs


class ElfCallSites:
    """Direct-call targets read from the ELF file itself; symbols from `nm`."""

    def __init__(self) -> None:
        self._files: dict[str, tuple[bytes, list[tuple[int, int, int]]] | None] = {}
        self._symbols: dict[str, tuple[list[int], list[str]]] = {}

    def _file(self, dso: str) -> tuple[bytes, list[tuple[int, int, int]]] | None:
        if dso not in self._files:
            try:
                with open(dso, "rb") as f:
                    data = f.read()
                self._files[dso] = (data, _load_segments(data))
            except OSError:
                self._files[dso] = None
        return self._files[dso]

    def _syms(self, dso: str) -> tuple[list[int], list[str]]:
        if dso not in self._symbols:
            addrs: list[int] = []
            names: list[str] = []
            nm = shutil.which("nm")
            if nm:
                proc = subprocess.run([nm, "-n", "--defined-only", dso], capture_output=True,
                                      text=True, check=False)
                for line in proc.stdout.splitlines():
                    parts = line.split()
                    if len(parts) == 3 and parts[1] in "tTwW":
                        addrs.append(int(parts[0], 16))
                        names.append(parts[2])
            self._symbols[dso] = (addrs, names)
        return self._symbols[dso]

    def callee_at(self, dso: str, return_addr: int) -> str | None:
        loaded = self._file(dso)
        if not loaded:
            return None
        data, segs = loaded
        call_at = return_addr - 5
        for vaddr, offset, size in segs:
            if vaddr <= call_at and return_addr <= vaddr + size:
                pos = offset + (call_at - vaddr)
                if data[pos] != 0xE8:
                    return None
                target = return_addr + struct.unpack_from("<i", data, pos + 1)[0]
                addrs, names = self._syms(dso)
                i = bisect.bisect_left(addrs, target)
                return names[i] if i < len(addrs) and addrs[i] == target else None
        return None
