"""What a sweep knows of the machine it ran on: one typed record, `Host`.

Contract: `Host` is a frozen, slotted record of named facts, each None when it
was not recorded (a fact that could not be read is left out, never made up).
`Host.to_dict()` is `Sweep.to_dict()["host"]`: an object of strings, only the
recorded facts, in the order of the fields below, then any `extra` facts in
their stored order. `Host.from_dict(d)` reads what any quadscope wrote since
0.1.0: a missing key is None, and an unknown key (a newer quadscope's fact,
or a tool's) is kept in `extra` so it survives a round trip; a number that does
not read back as the same text (`"cpus": "?"`) is kept there too, under its own
key. `from_dict(h.to_dict()) == h`. It raises TypeError when `d` is not an
object. This module imports nothing but the standard library.

Who writes which facts: `measure.host.host_info()` the machine (hostname to
boot_flags); `measure.system` the facts that skew timings (cpu_governor to
other_load, one `Check` class each, whose `key` is the field's name); the session
(`run.session.start`) what the resident launcher cleaned up with (`run_cleanup`)
and (`run.session.read_host`) the programs run in place of shims (`shims`); `--fleet`
the Ray node (`ray_node_id`). Sweeps stored before the boot-flag allow-list
carry the whole kernel command line in `cmdline`, which nothing shows unfiltered
(`measure.host.shown_host`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

# The facts that are whole numbers; they are stored as decimal text.
_INT_FIELDS = frozenset({"cpus", "llc_bytes", "l2_bytes"})


@dataclass(frozen=True, slots=True)
class Host:
    """The machine facts of one sweep (see the module docstring for who writes each)."""

    # The machine (measure/host.py).
    hostname: str | None = None
    kernel: str | None = None  # uname -r
    machine: str | None = None  # uname -m: x86_64, aarch64
    cpu: str | None = None  # the CPU's model name
    cpus: int | None = None  # logical CPUs
    python: str | None = None  # the version quadscope ran under
    llc_bytes: int | None = None  # the last-level cache, what analyse.memory reads against
    l2_bytes: int | None = None
    libc: str | None = None  # "glibc 2.36"
    boot_flags: str | None = None  # the performance flags of the kernel command line only
    cmdline: str | None = None  # sweeps stored before the allow-list: the whole command line
    # What skews timings (measure/system.py), as each check stores its value.
    cpu_governor: str | None = None
    turbo: str | None = None  # "on" | "off"
    thp: str | None = None  # always | madvise | never
    aslr: str | None = None  # randomize_va_space: "0" | "1" | "2"
    load_1m: str | None = None  # "1.52/2": load average at the start over the online CPUs
    steal_pct: str | None = None  # the hypervisor's share over the sweep, in %
    other_load: str | None = None  # "1.02/2": CPUs other work kept busy over the sweep
    # How it ran.
    run_cleanup: str | None = None  # what the launcher killed orphans with (measure/resident.py)
    shims: str | None = None  # programs run in place of version managers' shims (measure/shims.py)
    ray_node_id: str | None = None  # the Ray node of a --fleet sweep
    # Facts this version does not know, as stored: (key, value) in their order.
    extra: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, str]:
        out = {name: str(value) for name in _NAMES
               if (value := getattr(self, name)) is not None}
        out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Host:
        if not isinstance(d, Mapping):
            raise TypeError(f"host is a {type(d).__name__}, not an object")
        known: dict[str, Any] = {}
        extra: list[tuple[str, str]] = []
        for key, value in d.items():
            if value is None:
                continue
            text = str(value)
            if key not in _NAME_SET:
                extra.append((str(key), text))
            elif key in _INT_FIELDS:
                if _is_int_text(text):
                    known[key] = int(text)
                else:  # kept as written, so nothing stored is lost
                    extra.append((key, text))
            else:
                known[key] = text
        return cls(**known, extra=tuple(extra))


def _is_int_text(text: str) -> bool:
    """Whether int(text) reads back as `text` (so the round trip keeps it)."""
    return text.isascii() and text.isdigit() and str(int(text)) == text  # "²" is a digit


_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Host) if f.name != "extra")
_NAME_SET = frozenset(_NAMES)
FACT_NAMES = _NAMES  # every named fact, in the order `to_dict` writes them

__all__ = ["FACT_NAMES", "Host"]
