"""HTML and PNG reports: escaping, page size, plot contents, files, the `report` command.

The analyses here are built from synthetic runs with known growth through the
real `analysis.analyse`, so the renderers see exactly what a stored sweep gives.
The browser checks live in test_report_browser.py and reuse `build_analysis`.
"""

from __future__ import annotations

import argparse
import html
import json
import re

import numpy as np
import pytest

from quadscope.analyse.analysis import Analysis, analyse
from quadscope.analyse.curves import prediction_band
from quadscope.doctor.records import DoctorReport, ProbeResult, ProbeSeries
from quadscope.model import Measurement, Run, Sweep
from quadscope.profile.records import Attribution, Culprit
from quadscope.render.html import HtmlRenderer, json_for_script
from quadscope.render.plotdata import (
    PALETTE,
    plot_point_count,
    report_data,
    sanitise_svg,
)
from quadscope.render.plotmodel import Area, Line, Plot, Points, with_floors
from quadscope.render.png import PngRenderer, safe_name

HOSTILE = "<script>alert(1)</script>"
SIZES = tuple(1000 * i for i in range(1, 11))


def synth_runs(
    sizes: tuple[int, ...],
    repeat: int,
    *,
    variant: str = "A",
    coef: float = 2e-9,
    power: float = 2.0,
    noise: float = 0.03,
    seed: int = 1,
    start_seq: int = 0,
    fail_at: tuple[int, int] | None = None,
) -> list[Run]:
    """Runs whose wall_s is 1 ms + coef·n^power with multiplicative noise; one may fail."""
    rng = np.random.default_rng(seed)
    runs = []
    seq = start_seq
    for rep in range(repeat):
        for n in sizes:
            wall = (1e-3 + coef * n**power) * (1 + noise * rng.standard_normal())
            failed = fail_at == (n, rep)
            m = Measurement(
                wall_s=wall, user_s=wall * 0.9, sys_s=wall * 0.05 + 1e-4,
                max_rss_bytes=int(4_000_000 + 16 * n), minor_faults=int(100 + n // 100),
                major_faults=0, voluntary_ctx_switches=1, involuntary_ctx_switches=2,
                exit_code=3 if failed else 0,
                stderr_tail=f"fatal: {HOSTILE} & more" if failed else "",
            )
            runs.append(Run(7, seq, variant, n, rep, False, 1.7e9 + seq, m))
            seq += 1
    return runs


def build_analysis(*, vs: bool = False) -> Analysis:
    """A hostile-named n² sweep with one failed run, optionally against a linear B."""
    sweep = Sweep(
        id=7, name=f"demo{HOSTILE}", mode="sizes", command=("sh", "-c", f"echo {HOSTILE} {{n}}"),
        vs_command=("./fixed", "{n}") if vs else None, sizes=SIZES, repeat=3, predict_n=100_000,
    )
    runs = synth_runs(SIZES, 3, fail_at=(5000, 1))
    if vs:
        runs += synth_runs(SIZES, 3, variant="B", power=1.0, coef=5e-6, seed=2, start_seq=100)
    return analyse(sweep, runs)


def attribution(culprits: tuple[Culprit, ...], flame_svg: str) -> Attribution:
    """A profile of sweep 7 at two sizes holding these culprits and this flame graph."""
    return Attribution(7, (1000, 10000), "fake", "cpu-clock", (100, 1000), culprits, (), "",
                       flame_svg, True)


@pytest.fixture(scope="module")
def single() -> Analysis:
    return build_analysis()


@pytest.fixture(scope="module")
def paired() -> Analysis:
    return build_analysis(vs=True)


def test_json_for_script_cannot_close_the_element() -> None:
    """<, >, &, U+2028 and U+2029 are \\u-escaped and the text still parses back to the value."""
    value = {"cmd": "</script><!-- & \u2028\u2029 <b>", "n": [1, 2.5]}
    text = json_for_script(value)
    assert not re.search(r"[<>&\u2028\u2029]", text)
    assert json.loads(text) == value


def test_hostile_command_name_and_stderr_are_text(single: Analysis) -> None:
    """A command line, sweep name and stderr holding <script> appear escaped, never as markup."""
    page = HtmlRenderer().render(single).decode()
    assert HOSTILE not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "fatal: &lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in page
    # exactly our two script elements: the JSON data and the drawing code
    assert len(re.findall(r"<script\b", page)) == 2


def test_page_is_self_contained_and_locked_down(single: Analysis) -> None:
    """No URL is loaded from anywhere, and the CSP lets only our own script run."""
    page = HtmlRenderer().render(single).decode()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert csp is not None
    policy = html.unescape(csp.group(1))
    assert "default-src 'none'" in policy and "script-src 'sha256-" in policy


def test_point_counts_cover_every_run(single: Analysis) -> None:
    """The cost plot shows every measured run plus the failed one; the others the measured."""
    data = report_data(single)
    plots = {p.id: p for p in data.plots}
    assert plot_point_count(data, plots["wall_s-cost"]) == 30  # 29 measured + 1 failure
    assert plot_point_count(data, plots["wall_s-loglog"]) == 29
    assert plot_point_count(data, plots["wall_s-linear"]) == 29
    assert plot_point_count(data, plots["wall_s-resid"]) == 29


def test_linearised_n_squared_is_the_identity(single: Analysis) -> None:
    """For an n² fit, √((y − a)/b) lies on y = n within the noise (3%: under 5% of n)."""
    data = report_data(single)
    plot = next(p for p in data.plots if p.id == "wall_s-linear")
    layer = next(lay for lay in plot.layers if isinstance(lay, Points))
    ns = np.array([data.runs["n"][i] for i in data.rowsets["A"]], dtype=float)
    lin = np.array(layer.y, dtype=float)
    assert np.all(np.abs(lin - ns) / ns < 0.05)
    assert "f = n²" in plot.ylabel


def test_band_is_exact_without_noise_and_contains_the_curve() -> None:
    """Noise-free data give a zero-width band; noisy data give lo < ŷ < hi everywhere."""
    n = np.repeat(np.array(SIZES, dtype=float), 3)
    y = 1e-3 + 2e-9 * n**2
    ns = np.geomspace(1000, 10000, 7)
    yhat, lo, hi = prediction_band("n^2", 1e-3, 2e-9, n, y, ns)
    np.testing.assert_allclose(lo, yhat, rtol=1e-12)
    np.testing.assert_allclose(hi, yhat, rtol=1e-12)
    noisy = y * (1 + 0.05 * np.random.default_rng(0).standard_normal(y.size))
    yhat, lo, hi = prediction_band("n^2", 1e-3, 2e-9, n, noisy, ns)
    assert np.all(lo < yhat) and np.all(yhat < hi)


def test_band_is_the_curve_where_the_class_overflows_or_the_curve_is_zero() -> None:
    """cⁿ at n = 131072 is ∞ and a zero curve weighs a point ∞: no band, never a LinAlgError
    (numpy's SVD did not converge on the ∞ in an awk sweep's exponential candidate)."""
    sizes = np.array([1, 2, 4, 8, 16, 1024, 131072], dtype=float)
    values = np.arange(1.0, 8.0)
    with np.errstate(all="ignore"):
        yhat, lo, hi = prediction_band("c^n", 0.5, 1e-3, sizes, values, sizes)
        assert np.array_equal(lo, yhat, equal_nan=True) and np.array_equal(hi, yhat, equal_nan=True)
        yhat, lo, hi = prediction_band("n", 0.0, 0.0, sizes[:5], np.zeros(5), sizes[:5])
        assert np.all(lo == 0.0) and np.all(hi == 0.0)


def test_comparison_overlays_both_variants_and_adds_ratio(paired: Analysis) -> None:
    """With a B, the cost plot carries both colours and each metric ends with B/A."""
    data = report_data(paired)
    plots = {p.id: p for p in data.plots}
    colors = {lay.color for lay in plots["wall_s-cost"].layers if isinstance(lay, Points)}
    assert {PALETTE["A"], PALETTE["B"]} <= colors
    assert plot_point_count(data, plots["wall_s-cost"]) == 60
    assert plot_point_count(data, plots["wall_s-ratio"]) == len(SIZES)
    assert any(row["metric"] == "wall_s" for row in data.comparison)


def test_sanitise_svg_keeps_drawing_and_drops_everything_active() -> None:
    """Scripts, handlers, foreignObject and remote or javascript: references are removed."""
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="alert(1)">'
        "<script>alert(2)</script><foreignObject><div>x</div></foreignObject>"
        '<g><title>vec&lt;T&gt;::push &amp; &lt;script&gt;</title>'
        '<rect x="1" y="1" width="5" height="5" fill="rgb(1,2,3)" onclick="alert(3)"/></g>'
        '<a href="javascript:alert(4)"><text x="1" y="9">a</text></a>'
        '<rect width="1" height="1" fill="url(https://evil.example/x)"/></svg>'
    )
    out = sanitise_svg(svg)
    assert out is not None
    assert "alert" not in out and "foreignObject" not in out and "evil" not in out
    assert "<script" not in out and "onload" not in out
    assert "vec&lt;T&gt;::push &amp; &lt;script&gt;" in out
    assert 'fill="rgb(1,2,3)"' in out
    assert sanitise_svg("<html/>") is None and sanitise_svg("not xml <") is None


def test_profile_culprits_and_flame_graph_are_shown_safely(single: Analysis) -> None:
    """Culprits become a table and the flame graph is inlined after sanitising."""
    flame = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="20">'
        '<g><title>insert&lt;script&gt;</title><rect x="0" y="0" width="90" height="16" '
        'fill="rgb(230,80,60)"/></g><script>alert(1)</script></svg>'
    )
    culprit = Culprit("list_insert<script>", "a.out", "n^2", 2.01, (1.95, 2.06), 0.81, 0.9, 0.88,
                      0.9, (0.1, 0.4), ("main", "build", "list_insert<script>"))
    a = analyse(single.sweep, single.runs, profile=attribution((culprit,), flame))
    page = HtmlRenderer().render(a).decode()
    assert "list_insert&lt;script&gt;" in page
    assert "2.01 [1.95, 2.06]" in page and "81.0%" in page
    assert "insert&lt;script&gt;</title>" in page
    flame_html = page.split('<div class="flame">')[1].split("</div>")[0]
    assert "<svg" in flame_html and "alert" not in flame_html and "<script" not in flame_html


def test_doctor_probes_get_a_row_and_a_small_plot(single: Analysis) -> None:
    """Each probe is one table row; a probe with a series gets its own plot."""
    doctor = DoctorReport(
        (ProbeResult("fork", "spawn cost", "n", "1 ms", "pathological", f"grows {HOSTILE}"),
         ProbeResult("clock", "time()", "1", "20 ns", "ok", "cheap")),
        machine={}, quick=True, budget_s=30.0, elapsed_s=3.0)
    series = {"fork": (ProbeSeries("fork", ((1, 1e-3), (2, 2e-3), (4, 4e-3)), "wall_s"),
                       ProbeSeries("vfork", ((1, 1e-4), (2, 1e-4), (4, 1e-4)), "wall_s"))}
    a = analyse(single.sweep, single.runs, doctor=doctor, probe_series=series)
    data = report_data(a)
    assert [p.name for p in data.doctor] == ["fork", "clock"]
    assert data.doctor[1].plot is None
    assert data.doctor[0].plot is not None
    assert plot_point_count(data, data.doctor[0].plot) == 6
    page = HtmlRenderer().render(a).decode()
    assert "grows &lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_png_files_have_expected_names(paired: Analysis) -> None:
    """One PNG per fitted metric, named after it, each a real PNG image."""
    files = PngRenderer(dpi=40).render(paired)
    metrics = [m for m in paired.fits["A"]]
    assert set(files) == {f"{m}.png" for m in metrics}
    assert all(b.startswith(b"\x89PNG\r\n\x1a\n") for b in files.values())
    assert safe_name("../etc/pass wd") == "etc_pass_wd"


def test_page_for_10000_runs_is_under_3_mb() -> None:
    """10,000 runs (50 sizes × 200 repeats) fit in one page under 3 MB."""
    sizes = tuple(200 * i for i in range(1, 51))
    runs = synth_runs(sizes, 200, seed=3)
    sweep = Sweep(id=1, name="big", mode="sizes", command=("./x", "{n}"), sizes=sizes, repeat=200)
    page = HtmlRenderer().render(analyse(sweep, runs)).decode()
    assert len(runs) == 10_000
    assert len(page.encode("utf-8")) < 3 * 2**20


def test_report_command_writes_html_and_png_from_the_store(tmp_path) -> None:
    """`quadscope report RUN --html F --png D` reads a stored sweep and writes both."""
    from quadscope.commands import report

    db = tmp_path / "r.db"
    from quadscope.store import SqliteStore
    with SqliteStore(db) as store:
        sweep = store.create_sweep(build_analysis().sweep)
        for r in synth_runs(SIZES, 3, fail_at=(5000, 1)):
            store.add_run(Run(sweep.id, r.seq, r.variant, r.size_n, r.repeat, r.warmup,
                              r.started_at, r.measurement))
        store.put_blob(sweep.id, "profile", attribution((), "").to_dict())
    parser = argparse.ArgumentParser()
    report.register(parser.add_subparsers())
    args = parser.parse_args(["report", str(sweep.id), "--db", str(db),
                              "--html", str(tmp_path / "r.html"), "--png", str(tmp_path / "png")])
    assert args.func(args) == 0
    page = (tmp_path / "r.html").read_text()
    assert "&lt;script&gt;" in page and "wall_s" in page
    assert (tmp_path / "png" / "wall_s.png").read_bytes().startswith(b"\x89PNG")


def test_plot_records_serialise_as_the_page_reads_them() -> None:
    """A layer's JSON starts with its type and leaves out optional fields left unset; floor
    points and a band's missing lower edge go a factor 3 below the smallest value drawn."""
    plot = with_floors(Plot(
        "m-loglog", "loglog", "m", "t", "n", "y", True, True, "count", "s",
        (Line((1, 10), (2.0, 30.0), "#000", "fit"),
         Points("#000", "floor", "y ≤ a", y=(None, None), x=(3, 4), marker="v", floor=True),
         Area((1, 10), (None, 1.5), (3.0, 40.0), "#000", "band", floor_lo=True))))
    d = plot.to_dict()
    assert "small" not in d and [lay["type"] for lay in d["layers"]] == ["line", "points", "band"]
    assert d["layers"][0] == {"type": "line", "x": [1, 10], "y": [2.0, 30.0], "color": "#000",
                              "label": "fit", "dash": False}
    assert d["layers"][1]["y"] == [0.666667, 0.666667] and "rows" not in d["layers"][1]
    assert d["layers"][2]["lo"] == [0.666667, 1.5] and d["layers"][2]["floor_lo"] is True


def test_grey_crosses_are_explained_only_when_some_are_drawn(single: Analysis) -> None:
    """The failed runs' hint says they are drawn as grey crosses: true with a cost plot that
    draws one, false when nothing was fitted (no cost plot at all), so then it is left out;
    the failed-runs table stays, and names a killed run's signal."""
    assert "grey crosses" in HtmlRenderer().render(single).decode()
    sweep = Sweep(id=8, name="abort", mode="sizes", command=("./p", "{n}"), sizes=(10, 20, 40),
                  repeat=1)
    runs = [Run(8, i, "A", n, 0, False, 1.7e9 + i,
                Measurement(wall_s=1e-3 * n, exit_code=-6 if n == 40 else 0))
            for i, n in enumerate((10, 20, 40))]
    nothing = analyse(sweep, runs)
    assert not nothing.fits.get("A") and nothing.failures
    page = HtmlRenderer().render(nothing).decode()
    assert "Failed runs (1)" in page and "grey crosses" not in page
    assert "killed by SIGABRT (signal 6)" in page


def test_hover_names_a_runs_exit_as_the_terminal_does() -> None:
    """Each run's hover text reads its exit: "exit 0", "exit 3", or a killed run's signal
    ("killed by SIGABRT (signal 6)"), never a bare "exit -6"."""
    sweep = Sweep(id=9, name="mixed", mode="sizes", command=("./p", "{n}"),
                  sizes=(10, 20, 40, 80), repeat=1)
    codes = {10: 0, 20: 3, 40: -6, 80: 0}
    runs = [Run(9, i, "A", n, 0, False, 1.7e9 + i,
                Measurement(wall_s=1e-3 * n, exit_code=codes[n]))
            for i, n in enumerate(codes)]
    data = report_data(analyse(sweep, runs))
    said = dict(zip(data.runs["n"], data.runs["exit_text"], strict=True))
    assert said == {10: "exit 0", 20: "exit 3", 40: "killed by SIGABRT (signal 6)", 80: "exit 0"}
