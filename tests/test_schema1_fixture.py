"""A store and an export written by quadscope 0.1.0 (schema 1) still load and fit the same.

`tests/fixtures/schema1/` holds what that release wrote (see `make_fixture.py`
there): a results database with the accuracy suite, an A/B sweep, an
accumulate sweep, failing runs, doctor probes and a profile; the JSON export
of the A/B sweep; and `golden-schema1.json`, the verdicts, fits and comparisons
computed from that database. Opening a copy upgrades it in place; re-fitting it
must give the pinned answer: classes, brackets and words exactly, numbers
within `approx`'s tolerance (another CPU or numpy release moves the ninth digit).

The golden file was written by 0.1.0 itself, and the layout, registry and
store changes of issue 8 left every number of it unchanged. It is re-pinned
only when the fitting method changes on purpose (issue 9: calibrated
brackets, leave-one-size-out, parametric replicates), with
QUADSCOPE_UPDATE_SNAPSHOTS=1, and the diff read before committing. The free power
law's polish by its profile χ²(k) (d71c5c9) moved one number beyond the tolerance, sweep
1's user_s exponent, 0.1304555 → 0.1304534 (a nearly flat metric, k unidentified to
that digit); only that number was changed.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from approx import same
from quadscope.analyse.analysis import analyse
from quadscope.render import get_renderer
from quadscope.store import SqliteStore, Store

FIXTURE = Path(__file__).parent / "fixtures" / "schema1"


@pytest.fixture
def old_store(tmp_path: Path) -> Store:
    shutil.copy(FIXTURE / "store-schema1.db", tmp_path / "old.db")
    return SqliteStore(tmp_path / "old.db")


def _repin(store: Store, path: Path) -> None:
    golden: dict[str, Any] = {}
    for sweep, _ in store.list_sweeps():
        if sweep.kind != "sweep":
            continue
        d = json.loads(get_renderer("json").render(analyse(sweep, store.runs(sweep.id))))
        entry = {k: d[k] for k in ("verdict", "fits", "vs_fits", "comparison", "notes") if k in d}
        for key in ("fits", "vs_fits"):
            for fit in entry.get(key, {}).values():
                fit.pop("candidates", None)
        for mc in entry.get("comparison", {}).get("metrics", {}).values():
            mc.pop("ratios", None)
        golden[str(sweep.id)] = entry
    path.write_text(json.dumps(golden, indent=1) + "\n")


def test_schema1_store_refits_to_the_pinned_verdicts(old_store: Store) -> None:
    """Every sweep of the 0.1.0 store gives the pinned fits and verdict."""
    path = FIXTURE / "golden-schema1.json"
    if os.environ.get("QUADSCOPE_UPDATE_SNAPSHOTS"):
        _repin(old_store, path)
    golden = json.loads(path.read_text())
    for sweep_id, want in golden.items():
        sweep = old_store.get_sweep(sweep_id)
        got = json.loads(get_renderer("json").render(analyse(sweep, old_store.runs(sweep.id))))
        for key in ("verdict", "fits", "vs_fits"):
            if key in want:
                same(got[key], want[key], f"sweep {sweep_id}: {key}", extra_keys=True)
        if "comparison" in want:
            for metric, mc in want["comparison"]["metrics"].items():
                same(got["comparison"]["metrics"][metric], mc, f"sweep {sweep_id}: {metric}", extra_keys=True)


def test_schema1_profile_and_doctor_blobs_load_as_typed_records(old_store: Store) -> None:
    """0.1.0's profile blob (sweep 7) and doctor blobs (17-24) become the records reports read."""
    from quadscope.commands.common import analyse_stored
    from quadscope.doctor.details import ClockDetails
    from quadscope.doctor.records import DoctorReport, ProbeResult
    from quadscope.profile.records import Attribution

    profiled = analyse_stored(old_store, old_store.get_sweep("7"))
    assert isinstance(profiled.profile, Attribution) and profiled.doctor is None
    assert [c.symbol for c in profiled.profile.culprits] == ["pairwise_pass", "linear_pass"]
    assert profiled.profile.flame_svg.startswith("<svg")

    probe = analyse_stored(old_store, old_store.get_sweep("17"))
    assert isinstance(probe.doctor, ProbeResult) and probe.profile is None
    assert (probe.doctor.probe, probe.doctor.verdict) == ("clock", "slow")
    assert isinstance(probe.doctor.details, ClockDetails) and probe.doctor.ran is not None
    assert [s.label for s in probe.probe_series["clock"]] == ["syscall", "vdso", "vsyscall"]

    summary = analyse_stored(old_store, old_store.get_sweep("24"))
    assert isinstance(summary.doctor, DoctorReport)
    assert [r.probe for r in summary.doctor.results] == ["clock", "mmap"]
    assert sorted(summary.probe_series) == ["clock", "mmap"]
    assert [s.label for s in summary.probe_series["mmap"]] == [
        "default", "firstfit", "hint", "noreplace"]


def test_schema1_doctor_summary_renders_as_the_doctor_report(old_store: Store) -> None:
    """A doctor summary's JSON is the report `doctor --vs` reads; its text is the probe table."""
    from quadscope.commands.common import analyse_stored
    from quadscope.commands.doctor import load_report

    summary = analyse_stored(old_store, old_store.get_sweep("24"))
    doc = json.loads(get_renderer("json").render(summary))
    assert (doc["kind"], [p["probe"] for p in doc["probes"]]) == ("doctor", ["clock", "mmap"])
    path = Path(old_store.path).parent / "saved.json"
    path.write_text(json.dumps(doc))
    assert load_report(str(path)) == summary.doctor
    text = get_renderer("terminal", width=120).render(summary).decode()
    assert text.startswith("quadscope doctor (quick): ")
    assert "\n6.18.44-fc-v782 · glibc 2.36 · AMD EPYC ×2\n" in text
    assert "\nfindings:\n  clock: a legacy vsyscall time() costs 671 ns" in text
    assert text.endswith("stored as sweep 24 (`quadscope list` shows each probe's sweeps)\n")
