"""What each doctor probe's answer rests on: one typed record per probe, and the runner's part.

Contract: this module imports nothing but the standard library (as `records`,
which holds these). Each probe's record names what its judge measured, with
units in the names, and has `numbers` (its headline costs, all "higher is
worse", that `doctor --vs` and the fleet compare) and `classes` or `cls` (the
growth class of each variant). `to_dict()` is the object stored as a result's
"details", with the keys in the order the probe has always written them;
`details_from_dict(probe, d)` reads one back as its probe's record, or as
`OtherDetails` (the object as stored) when the probe is not one of these or
its keys are not exactly its record's (a probe of another quadscope; a new
probe may also judge into `OtherDetails` until it has a record).
`ProbeSweeps` is what the runner adds after judging: each variant's sweep id,
its notes, and why a variant did not run; it is written into the same object
after the probe's keys, as 0.1.0 wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

# Per variant (a way, a flag, a kind): a cost, or None when that variant did not run.
PerVariant = Mapping[str, float | None]


def _plain(value: Any) -> Any:
    """A record's value as JSON-ready data: mappings become dicts, all the way down."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclass(frozen=True, slots=True)
class _Keyed:
    """Serialisation shared by the probes' records: a field is the key of the same name."""

    probe: ClassVar[str]
    _renamed: ClassVar[Mapping[str, str]] = {}  # field name -> stored key, where they differ

    def to_dict(self) -> dict[str, Any]:
        return {self._renamed.get(f.name, f.name): _plain(getattr(self, f.name))
                for f in fields(self)}

    @classmethod
    def stored_keys(cls) -> dict[str, str]:
        """{stored key: field name}, in the fields' order."""
        return {cls._renamed.get(f.name, f.name): f.name for f in fields(cls)}


@dataclass(frozen=True, slots=True)
class ClockDetails(_Keyed):
    probe: ClassVar[str] = "clock"
    vsyscall_mode: str
    vsyscall_param: str
    ns_per_call: PerVariant
    faults_per_call: PerVariant
    classes: Mapping[str, str]
    unavailable: Mapping[str, str]
    numbers: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class DirScanDetails(_Keyed):
    probe: ClassVar[str] = "dirscan"
    _renamed: ClassVar[Mapping[str, str]] = {"cls": "class"}
    s_per_file: float | None
    wall_s_per_file: float | None
    fs: str
    dir: str
    cls: str
    setup: Mapping[str, Any]  # the set-up helper's own numbers (create_us_per_file, ...)
    create_note: str
    numbers: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class MmapDetails(_Keyed):
    probe: ClassVar[str] = "mmap"
    s_per_mapping: PerVariant
    classes: Mapping[str, str]
    numbers: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class SpawnDriftDetails(_Keyed):
    probe: ClassVar[str] = "spawn-drift"
    s_per_existing_name: float | None
    fixed_s_per_launch_index: float | None
    classes: Mapping[str, str]
    numbers: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class SpawnSizeDetails(_Keyed):
    probe: ClassVar[str] = "spawn-size"
    ns_per_function: PerVariant
    relocation_ns: float | None
    faults_per_function: PerVariant
    classes: Mapping[str, str]
    numbers: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class ExitParallelDetails(_Keyed):
    probe: ClassVar[str] = "exit-parallel"
    helper: Mapping[str, Mapping[str, Any]]  # per kind: the helper's own JSON numbers
    classes: Mapping[str, str]
    numbers: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class NotifyBufferDetails(_Keyed):
    probe: ClassVar[str] = "notify-buffer"
    events: int
    s_per_event_at_1MiB: PerVariant  # the stored key: MiB is a unit
    faults_per_event_at_1MiB: PerVariant
    fresh_over_reuse: float | None
    classes: Mapping[str, str]
    numbers: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class OtherDetails:
    """Details this version has no record for, kept as stored (also a skipped probe's: empty)."""

    items: Mapping[str, Any] = field(default_factory=dict)

    @property
    def numbers(self) -> Mapping[str, float]:
        found = self.items.get("numbers")
        return found if isinstance(found, Mapping) else {}

    def to_dict(self) -> dict[str, Any]:
        return {k: _plain(v) for k, v in self.items.items()}


_Known = (ClockDetails | DirScanDetails | MmapDetails | SpawnDriftDetails | SpawnSizeDetails
          | ExitParallelDetails | NotifyBufferDetails)
ProbeDetails = _Known | OtherDetails
_RECORDS: Mapping[str, type[_Known]] = {r.probe: r for r in (
    ClockDetails, DirScanDetails, MmapDetails, SpawnDriftDetails, SpawnSizeDetails,
    ExitParallelDetails, NotifyBufferDetails)}


@dataclass(frozen=True, slots=True)
class ProbeSweeps:
    """What the runner adds to a judged result: where its sweeps are, and what went wrong."""

    sweeps: Mapping[str, int]  # variant label -> the sweep id it was stored as
    notes: tuple[str, ...] = ()
    unavailable: Mapping[str, str] = field(default_factory=dict)  # variant -> why it did not run


def details_dict(details: ProbeDetails, ran: ProbeSweeps | None) -> dict[str, Any]:
    """The stored "details" object: the probe's keys, then the runner's."""
    out = details.to_dict()
    if ran is not None:
        out["sweeps"] = dict(ran.sweeps)
        if ran.notes:
            out["notes"] = list(ran.notes)
        if ran.unavailable:  # a probe that records it itself (clock) keeps its own
            out.setdefault("unavailable", dict(ran.unavailable))
    return out


def details_from_dict(probe: str, d: Mapping[str, Any]) -> tuple[ProbeDetails, ProbeSweeps | None]:
    """A stored "details" object as the probe's record and the runner's part (None if absent)."""
    items = dict(d)
    record = _RECORDS.get(probe)
    keys = record.stored_keys() if record is not None else {}
    ran = None
    if "sweeps" in items:
        sweeps = items.pop("sweeps")
        notes = items.pop("notes", ())
        # The clock probe records what did not run itself; the runner's copy is the same.
        unavailable = items.get("unavailable") if "unavailable" in keys else items.pop(
            "unavailable", {})
        ran = ProbeSweeps(dict(sweeps) if isinstance(sweeps, Mapping) else {},
                       tuple(str(n) for n in notes),
                       dict(unavailable) if isinstance(unavailable, Mapping) else {})
    if record is None or set(items) != set(keys):  # another quadscope's probe: kept as stored
        return OtherDetails(items), ran
    return record(**{name: items[key] for key, name in keys.items()}), ran


__all__ = [
    "ClockDetails", "DirScanDetails", "ExitParallelDetails", "MmapDetails", "NotifyBufferDetails",
    "OtherDetails", "ProbeDetails", "ProbeSweeps", "SpawnDriftDetails", "SpawnSizeDetails",
    "details_dict", "details_from_dict",
]
