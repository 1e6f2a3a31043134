"""Markdown and JUnit of a sweep over several sizes, on fakes: markdown leads with the verdict
sentence and the per-axis table; JUnit holds one testcase per axis gate, valid against the XSD."""

from __future__ import annotations

from tests.junit_schema import valid_junit
from tests.test_multi_sweep import _cost, _spec

from quadscope.analyse.multi_sweep import analyse_multi, judge_axis_gates, parse_axis_gates
from quadscope.cli import main
from quadscope.measure.clock import FakeClock
from quadscope.measure.launcher import FakeExecutor
from quadscope.render.multi_junit import junit
from quadscope.render.multi_markdown import markdown
from quadscope.run.runner import run_sweep
from quadscope.store import Store


def _report(store: Store, clock: FakeClock, cost=_cost):
    sweep = run_sweep(_spec(), executor=FakeExecutor(cost, clock), clock=clock, store=store)
    return analyse_multi(sweep, store.runs(sweep.id))


def test_markdown_leads_with_the_verdict_then_the_axis_table(store, clock):
    report = _report(store, clock)
    lines = markdown(report).decode().splitlines()
    assert lines[0].startswith("## quadscope: sweep ")
    assert lines[2].startswith("**wall\\_s: quadratic in n, linear in m; the cost is not separable")
    assert lines[4] == "| size | exponent | 95% interval | class | sizes |"
    rows = [ln for ln in lines if ln.startswith(("| n |", "| m |"))]
    assert len(rows) == 2 and "n²" in rows[0] and "| m |" in rows[1]
    assert any(ln.startswith("| n²·m |") for ln in lines)  # the models, with their AICc


def test_markdown_escapes_the_workload_and_says_why_nothing_fitted(store, clock):
    from tests.conftest import measurement

    sweep = run_sweep(_spec(command=("prog", "{n}", "{m}", "<b>[x](y)")),
                      executor=FakeExecutor(lambda argv: measurement(1e-3, exit_code=1), clock),
                      clock=clock, store=store)
    text = markdown(analyse_multi(sweep, store.runs(sweep.id))).decode()
    assert "<b>" not in text and "](" not in text
    assert "**Nothing fitted:** only 0 of 16 points have a successful run" in text


def test_junit_has_one_valid_testcase_per_axis_gate(store, clock):
    report = _report(store, clock)
    gates = parse_axis_gates(["n=n log n", "m=n", "n^2"], ("n", "m"))
    cases = valid_junit(junit(report, judge_axis_gates(report, gates)))
    assert [c.attrib["name"] for c in cases] == [
        "--fail-above n=n log n (n)", "--fail-above m=n (m)",
        "--fail-above n^2 (n)", "--fail-above n^2 (m)"]
    assert [c[0].tag if len(c) else "" for c in cases] == [
        "failure", "system-out", "system-out", "system-out"]
    assert "exponent" in cases[0][0].attrib["message"]
    assert valid_junit(junit(report, [])) == []


def test_cli_writes_markdown_and_junit_for_a_sweep_over_several_sizes(tmp_path, store, clock):
    report = _report(store, clock)
    db, md, xml = str(tmp_path / "results.db"), tmp_path / "s.md", tmp_path / "s.xml"
    code = main(["show", "--db", db, str(report.sweep.id), "--markdown", str(md),
                 "--junit", str(xml), "--fail-above", "m=n", "--fail-above", "n=n"])
    assert code == 8
    assert "quadratic in n, linear in m" in md.read_text().splitlines()[2]
    outcomes = [c[0].tag for c in valid_junit(xml.read_bytes())]
    assert outcomes == ["system-out", "failure"]


def test_an_axis_name_from_a_foreign_store_reaches_no_terminal_or_page_raw(store, clock):
    """A stored sweep's axis names are text from outside (a shared or fleet store is not
    checked by `--sizes`): the terminal shows their controls as escapes (the models' fit
    and the grid's heading as well as the axis rows), the HTML page escapes them too."""
    import dataclasses

    from quadscope.render.multi import terminal
    from quadscope.render.multi_html import html

    evil = "m\x1b[31m<b>"
    sweep = run_sweep(_spec(), executor=FakeExecutor(_cost, clock), clock=clock, store=store)
    renamed = dataclasses.replace(
        store.get_sweep(str(sweep.id)),
        axes=tuple((evil if n == "m" else n, s) for n, s in sweep.axes))
    runs = [dataclasses.replace(r, axes=tuple((evil if k == "m" else k, v) for k, v in r.axes))
            for r in store.runs(sweep.id)]
    report = analyse_multi(renamed, runs)
    assert report.verdict is not None
    text = terminal(report, width=120)
    assert "\x1b" not in text
    assert "m\\x1b[31m<b> across" in text and "·m\\x1b[31m<b>^" in text
    page = html(report).decode()
    assert "\x1b" not in page and "<b>" not in page and "m\\x1b[31m&lt;b&gt;" in page


def test_the_terminal_grid_says_what_a_dot_means(store, clock):
    """Points without a value for the metric print "·", and a line under the grid says so."""
    from quadscope.render.multi import terminal

    sweep = run_sweep(_spec(), executor=FakeExecutor(_cost, clock), clock=clock, store=store)
    runs = store.runs(sweep.id)
    full = terminal(analyse_multi(sweep, runs), width=120)
    assert "· not measured" not in full
    gap = (runs[-1].size_n, runs[-1].axes)
    report = analyse_multi(sweep, [r for r in runs if (r.size_n, r.axes) != gap])
    assert "· not measured for wall_s" in terminal(report, width=120)


def test_csv_has_a_row_per_run_with_a_column_per_axis(store, clock):
    """The one-size CSV's columns with `size_n` replaced by one `size_<axis>` per axis."""
    import csv
    import io

    from quadscope.model import RUN_KEYS
    from quadscope.render.csv import CsvRenderer

    report = _report(store, clock)
    rows = list(csv.DictReader(io.StringIO(CsvRenderer().render_multi(report).decode())))
    heads = list(rows[0])
    assert heads[:4] == ["sweep_id", "seq", "variant", "size_n"] and heads[4] == "size_m"
    assert heads[5:] == list(RUN_KEYS[4:])
    assert len(rows) == len(report.runs) == 16 * 3 + 1
    measured = {(int(r["size_n"]), int(r["size_m"])) for r in rows if r["warmup"] == "False"}
    assert measured == set(report.sweep.points)
    n, m = 800, 80
    walls = [float(r["wall_s"]) for r in rows if (r["size_n"], r["size_m"]) == (str(n), str(m))]
    assert walls and all(abs(w - (1e-3 + 1e-9 * n * n * m)) < 1e-9 for w in walls)


def test_png_draws_the_heat_map_and_a_plot_per_axis(store, clock):
    """One figure: a heat map (with its colour bar) and one log-log plot per axis."""
    import io

    from PIL import Image

    from quadscope.render.png import PngRenderer

    files = PngRenderer(dpi=60).render_multi(_report(store, clock))
    assert list(files) == ["wall_s.png"]
    image = Image.open(io.BytesIO(files["wall_s.png"]))
    assert image.format == "PNG" and image.width > 1.5 * image.height


def test_html_leads_with_the_verdict_banner_then_plots_then_details(store, clock):
    """The one-size report's page: its CSS and policy, the verdict in the banner first."""
    page = html_page(_report(store, clock))
    verdict = page.index("<p class=\"verdict")
    assert page.index("<h1>") < verdict < page.index("id=\"plots\"") < page.index(
        "How the cost grows in each size") < page.index("<h2>Models</h2>")
    assert "Content-Security-Policy" in page and ".verdict.calm" in page
    assert page[verdict:].startswith("<p class=\"verdict\" id=\"verdict\">wall_s: quadratic")
    assert page.count("<svg") == 3


def html_page(report) -> str:
    from quadscope.render.multi_html import html

    return html(report).decode()


def test_cli_writes_csv_and_png_for_a_sweep_over_several_sizes(tmp_path, store, clock):
    report = _report(store, clock)
    db = str(tmp_path / "results.db")
    code = main(["export", "--db", db, str(report.sweep.id), "--csv", str(tmp_path / "s.csv"),
                 "--png", str(tmp_path / "png")])
    assert code == 0
    assert (tmp_path / "s.csv").read_text().startswith("sweep_id,seq,variant,size_n,size_m,")
    assert [p.name for p in (tmp_path / "png").iterdir()] == ["wall_s.png"]
    code = main(["export", "--db", db, str(report.sweep.id), "--speedscope",
                 str(tmp_path / "s.json")])
    assert code == 2
