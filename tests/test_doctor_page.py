"""`quadscope doctor --html`: the page leads with the doctor's answer, not with a fit."""

from __future__ import annotations

from quadscope.analyse.analysis import analyse
from quadscope.doctor.records import DoctorReport, ProbeResult
from quadscope.model import Sweep
from quadscope.render.doctor import doctor_headline
from quadscope.render.html import HtmlRenderer


def _report(*verdicts: str) -> DoctorReport:
    return DoctorReport(tuple(ProbeResult(f"p{i}", "what", "n", "1 ms", v, f"finding {i}")
                              for i, v in enumerate(verdicts)),
                        machine={"kernel": "6.1"}, quick=True, budget_s=30.0, elapsed_s=9.0)


def test_the_doctor_headline_names_what_needs_attention() -> None:
    assert doctor_headline(_report("ok", "ok")) == ("all 2 probes ok on this machine", "calm")
    assert doctor_headline(_report("ok", "skipped")) == (
        "1 of 2 probes ok, the others skipped", "open")
    assert doctor_headline(_report("slow", "ok", "pathological")) == (
        "p0 is slow; p2 is pathological; 1 of 3 probes ok", "bad")


def test_a_doctor_summary_page_says_no_fit_no_runs_and_no_band() -> None:
    """The summary sweep has no runs: its page leads with the probes' answer, shows no
    "runs 0", no command, and no footer about fitted bands; the slow row is marked."""
    summary = Sweep(id=20, name="doctor", mode="sizes", command=("quadscope", "doctor"),
                    kind="doctor", status="complete")
    page = HtmlRenderer().render(analyse(summary, [], doctor=_report("slow", "ok"))).decode()
    assert 'id="verdict">p0 is slow; 1 of 2 probes ok</p>' in page
    assert "nothing could be fitted" not in page
    assert "<dt>runs</dt>" not in page and "<dt>command</dt>" not in page
    assert "fitted curve" not in page
    assert '<tr class="verdict-slow">' in page


def test_json_writes_class_names_and_the_terminal_their_labels() -> None:
    """Doctor JSON's "class" once held display text ("n²") where a sweep's JSON holds the
    registry name ("n^2"): now every class cell of the file is by name, the terminal and
    a report read back (either spelling, as older files wrote it) show the label."""
    import json

    from quadscope.doctor.details import MmapDetails
    from quadscope.render.doctor import doctor_text
    from quadscope.render.json import JsonRenderer

    details = MmapDetails({"default": 1e-6, "firstfit": 2e-6},
                          {"default": "n", "firstfit": "n²? (k=1.9)"}, {"firstfit": 2e-6})
    row = ProbeResult("mmap", "what", "default n, firstfit n²? (k=1.9)", "1 µs", "ok",
                      "no n² growth", details)
    drift = ProbeResult("spawn-drift", "what", "probe √i, fixed cⁱ (counted)", "—", "slow", "f")
    report = DoctorReport((row, drift), machine={}, quick=True, budget_s=30.0, elapsed_s=9.0)
    summary = Sweep(id=1, name="doctor", mode="sizes", command=("quadscope", "doctor"),
                    kind="doctor", status="complete")
    data = json.loads(JsonRenderer().render(analyse(summary, [], doctor=report)))
    first, second = data["probes"]
    assert first["class"] == "default n, firstfit n^2? (k=1.9)"
    assert first["details"]["classes"] == {"default": "n", "firstfit": "n^2? (k=1.9)"}
    assert second["class"] == "probe sqrt i, fixed c^i (counted)"
    assert first["finding"] == "no n² growth"  # a sentence for people keeps its label
    assert DoctorReport.from_dict(data) == report  # read back: the labels again
    assert DoctorReport.from_dict(report_as_labels(data)) == report  # as older files wrote it
    text = doctor_text(DoctorReport.from_dict(data))
    assert "firstfit n²? (k=1.9)" in text and "n^2" not in text and "probe √i" in text


def report_as_labels(data: dict[str, object]) -> dict[str, object]:
    """`data` as a version that wrote labels into the file wrote it."""
    from quadscope.classes import REGISTRY

    probes = [dict(p, **{"class": REGISTRY.labels_in(p["class"])})  # type: ignore[arg-type]
              for p in data["probes"]]  # type: ignore[attr-defined]
    return {**data, "probes": probes}
