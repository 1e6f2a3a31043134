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
