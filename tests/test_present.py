"""What a person sees: the compact terminal report, literal user strings, the A/B headline.

The CI gate of `compare`, plot floors and units, and host facts are pinned here too.
Analyses are built from synthetic runs with known growth through the real
`analysis.analyse` (tests/test_report.py's builder), so the renderers see what
a stored sweep gives.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from rich.cells import cell_len

from quadscope.analyse.ab_gate import (
    FAIL_EXIT,
    UNDECIDED_EXIT,
    decide,
    exit_code,
    parse_fail_on,
)
from quadscope.analyse.analysis import Analysis, analyse
from quadscope.errors import UsageError
from quadscope.host import Host
from quadscope.measure.host import boot_flags, shown_host
from quadscope.model import Sweep
from quadscope.render import get_renderer
from quadscope.render.plotdata import plot_point_count, report_data
from quadscope.render.plotmodel import Area, Line, Points
from quadscope.render.terminal import fit_words
from quadscope.textsafe import command_text, mpl_text, visible
from test_report import SIZES, synth_runs

ESC = "\x1b]0;pwned\x07\x1b[2J"
GEOMETRIC = (1000, 2000, 4000, 8000, 16000, 32000, 64000)


def _analysis(name: str = "job[fast]", *, vs_power: float | None = None,
              a_power: float = 2.0, sizes: tuple[int, ...] = SIZES, **kw: float) -> Analysis:
    sweep = Sweep(id=3, name=name, mode="sizes",
                  command=("python3", "-c", "[l.insert(0,i) for i in range({n})]"),
                  vs_command=("./b", "{n}") if vs_power is not None else None, sizes=sizes,
                  repeat=3, host=Host(kernel="6.1", cpu="Xeon", cpus=2,
                            cmdline="BOOT_IMAGE=/v root=/dev/secret mitigations=off"))
    coef = 2e-9 if a_power == 2.0 else 1e-12
    runs = synth_runs(sizes, 3, power=a_power, coef=coef, noise=0.02)
    if vs_power is not None:
        runs += synth_runs(sizes, 3, variant="B", power=vs_power,
                           coef=kw.get("vs_coef", 5e-6), seed=2, start_seq=100, noise=0.02)
    return analyse(sweep, runs)


def _text(analysis: Analysis, width: int, **options: bool) -> str:
    out = get_renderer("terminal", width=width, **options).render(analysis)
    assert isinstance(out, bytes)
    return out.decode()


@pytest.fixture(scope="module")
def quad() -> Analysis:
    return _analysis()


@pytest.mark.parametrize("width", [60, 80, 120])
def test_compact_report_fits_the_width_without_wrapping(quad: Analysis, width: int) -> None:
    """At 60, 80 and 120 columns no line is longer than the width and every metric name is whole."""
    text = _text(quad, width)
    assert all(len(line) <= width for line in text.splitlines())
    assert "max_rss_bytes " in text and "wall_s " in text


def test_clean_quadratic_is_at_most_twelve_lines_at_60_columns(quad: Analysis) -> None:
    """The default report of a clean n² sweep at COLUMNS=60 is ≤ 12 lines, the verdict first."""
    lines = _text(quad, 60).splitlines()
    assert len(lines) <= 12
    assert lines[0].startswith(quad.verdict[:20])


def test_a_long_headline_breaks_between_clauses_never_inside_a_bracket() -> None:
    """An unsettled verdict and an undecided change, as real sweeps print them, break after
    ";" or ":" or before "—" or "(", the interval whole, continuations indented."""
    verdict = "wall time grows as 1 … n³ — not exponential (k = 1.42 [0.00, 4.00])"
    assert fit_words(verdict, 80) == verdict
    assert fit_words(verdict, 60) == ("wall time grows as 1 … n³ — not exponential\n"
                                      "  (k = 1.42 [0.00, 4.00])")
    change = ("B against A is undecided: A's class is not settled (1 … n³ → 1 … n³); "
              "1.51× faster at n = 16k")
    assert fit_words(change, 80) == ("B against A is undecided: A's class is not settled "
                                     "(1 … n³ → 1 … n³);\n  1.51× faster at n = 16k")
    assert fit_words(change, 60) == ("B against A is undecided: A's class is not settled\n"
                                     "  (1 … n³ → 1 … n³); 1.51× faster at n = 16k")
    assert fit_words("x" * 70 + " y", 60) == "x" * 70 + "\n  y"  # cut by the caller


def _unsettled() -> Analysis:
    """A noisy A/B sweep over 1.2 decades: no class settled, the change 85 columns long."""
    sizes = (1000, 2000, 4000, 8000, 16000)
    sweep = Sweep(id=3, name="x", mode="sizes", command=("prog", "{n}"),
                  vs_command=("b", "{n}"), sizes=sizes, repeat=2)
    runs = synth_runs(sizes, 2, power=2.0, coef=1e-12, noise=0.3) + synth_runs(
        sizes, 2, variant="B", power=1.0, coef=1e-9, noise=0.3, seed=2, start_seq=100)
    return analyse(sweep, runs)


@pytest.mark.parametrize("width", [60, 80])
def test_an_unsettled_ab_report_fits_the_width(width: int) -> None:
    """A noisy A/B sweep: no line wider than the terminal, and the headline, lines
    rejoined, is the change then A's and B's verdicts, labelled, word for word."""
    a = _unsettled()
    assert a.change is not None and len(a.change.text) > 80
    text = _text(a, width)
    assert max(cell_len(line) for line in text.splitlines()) <= width
    head = text.split("\nsweep 3 ")[0]
    from quadscope.analyse.sides import side_verdict

    assert " ".join(line.strip() for line in head.splitlines()) == (
        f"{a.change.text} A: {a.verdict} B: {side_verdict(a, 'B')}")
    quiet = _text(a, width, quiet=True)
    assert quiet.count("\n") == 2 and " ".join(quiet.split("\n  ")) == a.change.text + "\n"


def test_a_ratio_against_zero_reads_as_a_dash_never_inf_or_nan() -> None:
    """A's sys time is 0 at every run and B's is not: B/A is undefined, shown as "—"."""
    sizes = (1000, 2000, 4000, 8000, 16000)
    sweep = Sweep(id=4, name="x", mode="sizes", command=("prog", "{n}"),
                  vs_command=("b", "{n}"), sizes=sizes, repeat=3)
    a_runs = [dataclasses.replace(r, measurement=dataclasses.replace(r.measurement, sys_s=0.0))
              for r in synth_runs(sizes, 3, power=2.0, coef=1e-12)]
    runs = a_runs + synth_runs(sizes, 3, variant="B", power=1.0, coef=1e-9, seed=2,
                               start_seq=100)
    text = _text(analyse(sweep, runs), 100, verbose=True)
    row = next(line for line in text.splitlines() if line.startswith("sys_s") and "→" in line)
    assert "—" in row and "inf" not in text and "nan" not in text


@pytest.mark.parametrize("hi, cell, bracket", [(float("nan"), "0.949–?", "[0.949, ?]"),
                                                (float("inf"), "0.949–∞", "[0.949, ∞]")])
def test_an_interval_without_an_upper_end_does_not_read_as_an_empty_cell(
        hi: float, cell: str, bracket: str) -> None:
    """B/A's 95% interval whose upper end is not a number (the bootstrap interpolated
    inf − inf where A's medians reach 0) or infinite: "0.949–?" or "0.949–∞" in the compact
    table and "[0.949, ?]" in -v's, never "0.949–—" (seen for user_s of an A/B sweep)."""
    from quadscope.model import SizeRatio
    from quadscope.render.terminal import compact_table, comparison_table

    a = _analysis(vs_power=1.0)
    assert a.comparison is not None
    metrics = []
    for mc in a.comparison.metrics:
        if mc.metric == "wall_s":
            top = max(mc.ratios, key=lambda r: r.size_n)
            rest = tuple(r for r in mc.ratios if r is not top)
            mc = dataclasses.replace(mc, ratios=(*rest, SizeRatio(top.size_n, 0.993, 0.949, hi)))
        metrics.append(mc)
    edited = dataclasses.replace(a, comparison=dataclasses.replace(a.comparison,
                                                                   metrics=tuple(metrics)))

    def shown(table: object, header: str) -> str:
        col = next(c for c in table.columns if c.header == header)  # type: ignore[attr-defined]
        row = [str(x) for x in table.columns[0]._cells].index("wall_s")  # type: ignore[attr-defined]
        return str(col._cells[row])

    assert shown(compact_table(edited, ("wall_s",), 200), "95%") == cell
    assert shown(comparison_table(edited, 200), "B/A at max n [95%]") == f"0.993 {bracket}"


def test_verbose_says_which_columns_80_columns_hid() -> None:
    """-v's fit table at 80 columns drops a, b and r² to fit (and, for a sweep whose cells
    are wider, the --predict column), and says so under the table; at 200 columns it drops
    nothing and says nothing. (It once dropped them silently: a `--predict 30000 -v` of
    ./prog {n} showed no prediction and no word of one.)"""
    a = _analysis()
    a = dataclasses.replace(a, sweep=dataclasses.replace(a.sweep, predict_n=30_000))
    narrow = _text(a, 80, verbose=True).splitlines()
    assert "hidden at 80 columns: a (offset), b, r²" in \
        [line.rstrip() for line in narrow]
    assert "hidden at" not in _text(a, 200, verbose=True)


def test_html_verdict_box_is_neutral_while_the_time_is_unsettled(quad: Analysis) -> None:
    """Green means settled and linear or slower, red settled and faster; an unsettled time
    verdict is neither (it was green when nothing had settled)."""
    page = get_renderer("html").render(_unsettled())
    assert isinstance(page, bytes) and b'<p class="verdict open" id="verdict">' in page
    clean = get_renderer("html").render(quad)
    assert isinstance(clean, bytes) and b'<p class="verdict" id="verdict">' in clean


def test_verbose_shows_every_metric_and_quiet_only_the_headline(quad: Analysis) -> None:
    """-v adds the hidden metrics (voluntary_ctx_switches); --quiet prints the verdict alone."""
    assert "voluntary_ctx_switches" not in _text(quad, 100)
    assert "voluntary_ctx_switches" in _text(quad, 100, verbose=True)
    assert _text(quad, 200, quiet=True) == quad.verdict + "\n"


def test_user_strings_are_literal_in_the_terminal() -> None:
    """A name with brackets prints as typed, the command keeps its brackets, ESC is made visible."""
    text = _text(_analysis(f"job[fast]{ESC}"), 120, verbose=True)
    assert "job[fast]" in text and "job\\[" not in text
    assert "python3 -c '[l.insert(0,i) for i in range({n})]'" in text
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b]0;pwned\\x07" in text


def test_visible_escapes_controls_and_bidi_only() -> None:
    """C0, DEL, C1 and bidi overrides become escapes; printable text, µ and → stay."""
    assert visible("a\tb\x7f\x9b\u202e µ→") == "a\\x09b\\x7f\\x9b\\u202e µ→"
    assert command_text(("sh", "-c", "echo {n}"), shell=False) == "sh -c 'echo {n}'"
    assert command_text(("echo $((1+1))",), shell=True) == "echo $((1+1))"
    assert mpl_text("cost $5") == r"cost \$5"


def test_html_and_png_titles_show_control_characters_escaped() -> None:
    """The page title and every plot title carry no raw ESC; the name is there, escaped."""
    a = _analysis(f"job{ESC}")
    page = get_renderer("html").render(a)
    assert isinstance(page, bytes)
    assert b"\x1b" not in page and b"job\\x1b]0;pwned" in page
    assert "\x1b" not in json.dumps(report_data(a).to_json_obj())


def test_host_shows_only_allow_listed_boot_flags(quad: Analysis) -> None:
    """root= and BOOT_IMAGE= never reach a report; mitigations=off does."""
    assert boot_flags("BOOT_IMAGE=/v root=/dev/x mitigations=off quiet isolcpus=1 -- x=1") \
        == "mitigations=off isolcpus=1"
    facts = dict(report_data(quad).facts)
    assert facts["host"] == "Linux 6.1, Xeon ×2, boot: mitigations=off"
    assert "secret" not in shown_host(quad.sweep.host)


def test_each_plot_is_titled_with_its_own_metric_verdict(quad: Analysis) -> None:
    """wall_s's section says n²; max_rss_bytes's says n — not the whole sweep's verdict."""
    sections = {s.metric: s for s in report_data(quad).sections}
    assert sections["wall_s"].verdict.startswith("grows as n²")
    assert sections["max_rss_bytes"].verdict.startswith("grows as n (")
    assert sections["voluntary_ctx_switches"].verdict == "constant"


def test_runs_below_the_offset_sit_on_the_floor_not_dropped() -> None:
    """On the log-log panel of y − a every run is drawn: above a as points, at or below a on the floor."""
    a = _analysis(sizes=GEOMETRIC)
    data = report_data(a)
    plot = next(p for p in data.plots if p.id == "wall_s-loglog")
    assert plot_point_count(data, plot) == len(data.rowsets["A"])
    floors = [layer for layer in plot.layers if isinstance(layer, Points) and layer.floor]
    lines = [layer for layer in plot.layers if isinstance(layer, Line)]
    assert all(layer.marker == "v" for layer in floors)
    assert any(layer.label.startswith("slope k = ") for layer in lines)
    assert plot.yunit == "s" and plot.xunit == "count"


def test_constant_metric_has_no_slope_line(quad: Analysis) -> None:
    """A constant metric's log-log panel draws the constant, never a slope."""
    data = report_data(quad)
    plot = next(p for p in data.plots if p.id == "voluntary_ctx_switches-loglog")
    assert not any("slope" in layer.label for layer in plot.layers)


def test_linearised_panel_is_log_when_sizes_are_geometric() -> None:
    """Geometric sizes (1k..64k) get log axes on the linearised panel; evenly spaced ones do not."""
    geo = report_data(_analysis(sizes=GEOMETRIC))
    even = report_data(_analysis())
    assert next(p for p in geo.plots if p.id == "wall_s-linear").xlog is True
    assert next(p for p in even.plots if p.id == "wall_s-linear").xlog is False


def test_band_holds_most_single_runs(quad: Analysis) -> None:
    """The cost panel's band is a prediction band: nearly every run lies inside it."""
    data = report_data(quad)
    plot = next(p for p in data.plots if p.id == "wall_s-cost")
    band = next(layer for layer in plot.layers if isinstance(layer, Area))
    ns, vals = data.runs["n"], data.values["wall_s"]
    inside = 0
    rows = data.rowsets["A"]
    for i in rows:
        j = min(range(len(band.x)), key=lambda k: abs(band.x[k] - ns[i]))
        inside += band.lo[j] * 0.99 <= vals[i] <= band.hi[j] * 1.01
    assert inside >= 0.9 * len(rows)


@pytest.fixture(scope="module")
def improved() -> Analysis:
    return _analysis(vs_power=1.0)


def test_change_leads_with_the_same_words_everywhere(improved: Analysis) -> None:
    """n² → n: the terminal's first line, the HTML's first paragraph and JSON's summary agree."""
    change = improved.change
    assert change is not None and change.direction == "better"
    assert "n² → n" in change.text and "faster at n = 10k" in change.text
    assert _text(improved, 120).splitlines()[0] == change.text
    page = get_renderer("html").render(improved)
    assert isinstance(page, bytes)
    body = page.decode()
    assert body.index('id="change"') < body.index('id="verdict"') < body.index("B against A")
    doc = json.loads(get_renderer("json").render(improved))
    assert doc["comparison"]["summary"] == change.text


def test_fail_on_class_fails_when_b_grows_faster() -> None:
    """A linear A against a quadratic B fails `--fail-on class` with exit 8; the reverse passes."""
    worse = _analysis(a_power=1.0, vs_power=2.0, vs_coef=2e-9)
    rules = parse_fail_on(["class=wall_s"])
    assert exit_code(decide(worse, rules)) == FAIL_EXIT
    better = _analysis(vs_power=1.0)
    assert exit_code(decide(better, rules)) == 0


def test_fail_on_slower_needs_the_whole_interval_above_the_limit(improved: Analysis) -> None:
    """B/A ≈ 0.1: passes slower=1.1; a ratio straddling the limit is undecided (exit 9)."""
    assert exit_code(decide(improved, parse_fail_on(["slower=1.1"]))) == 0
    comp = improved.comparison
    assert comp is not None
    wall = next(m for m in comp.metrics if m.metric == "wall_s")
    last = max(wall.ratios, key=lambda r: r.size_n)
    straddle = dataclasses.replace(last, ratio=1.1, lo=1.0, hi=1.2)
    wall2 = dataclasses.replace(wall, ratios=(straddle,))
    comp2 = dataclasses.replace(comp, metrics=(wall2,))
    outcomes = decide(dataclasses.replace(improved, comparison=comp2), parse_fail_on(["slower=1.1"]))
    assert exit_code(outcomes) == UNDECIDED_EXIT
    assert "--repeat" in outcomes[0].sentence
    above = dataclasses.replace(comp, metrics=(dataclasses.replace(
        wall, ratios=(dataclasses.replace(last, ratio=1.5, lo=1.3, hi=1.7),)),))
    assert exit_code(decide(dataclasses.replace(improved, comparison=above),
                            parse_fail_on(["slower=1.1"]))) == FAIL_EXIT


def test_fail_on_rejects_unknown_rules() -> None:
    """A rule that is neither class nor slower=RATIO is one sentence naming the forms."""
    with pytest.raises(UsageError, match="slower=RATIO"):
        parse_fail_on(["faster"])
    with pytest.raises(UsageError, match="largest B/A"):
        parse_fail_on(["slower=x"])


def _store_sweep(db: str, name: str, power: float) -> None:

    from quadscope.store import SqliteStore

    with SqliteStore(Path(db)) as store:
        sweep = store.create_sweep(Sweep(id=0, name=name, mode="sizes", command=("p", "{n}"),
                                         sizes=SIZES, repeat=3, status="complete"))
        for r in synth_runs(SIZES, 3, power=power, coef=2e-9 if power else 0.0, noise=0.02):
            store.add_run(dataclasses.replace(r, sweep_id=sweep.id))


@pytest.mark.slow
def test_compare_constant_against_quadratic_gates_and_json_goes_to_stdout(tmp_path: Path) -> None:
    """`compare --fail-on class --json -` exits 8 and stdout is exactly the JSON document."""
    db = str(tmp_path / "r.db")
    _store_sweep(db, "flat", 0.0)
    _store_sweep(db, "quad", 2.0)
    proc = subprocess.run([sys.executable, "-m", "quadscope", "compare", "flat", "quad",
                           "--db", db, "--fail-on", "class", "--json", "-"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == FAIL_EXIT, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["comparison"]["direction"] == "worse"
    assert "gate fail" in proc.stderr


@pytest.mark.slow
def test_list_shows_a_hostile_name_escaped(tmp_path: Path) -> None:
    """`quadscope list` prints an ESC sequence in a name as text, never raw."""
    db = str(tmp_path / "r.db")
    _store_sweep(db, f"x{ESC}", 2.0)
    proc = subprocess.run([sys.executable, "-m", "quadscope", "list", "--db", db],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0
    assert "\x1b" not in proc.stdout and "\\x1b" in proc.stdout


def test_flame_tree_colours_the_culprit_and_exports_speedscope_and_folded() -> None:
    """memmove carries the growth beyond linear, the one start-up frame none; exports agree."""
    from quadscope.profile.flametree import collapse
    from quadscope.profile.records import FlameNode
    from test_report_screens import profiled

    a = profiled()
    assert a.profile is not None
    tree = a.profile.flame_tree
    assert tree is not None

    def find(node: FlameNode, name: str) -> FlameNode | None:
        if node.name == name:
            return node
        for child in node.children:
            if (hit := find(child, name)) is not None:
                return hit
        return None

    memmove = find(tree.root, "__memmove_avx_unaligned_erms")
    startup = find(tree.root, "start-up")  # the imports and Py_InitializeEx, folded into one
    assert memmove is not None and startup is not None and not startup.children
    assert memmove.excess > 0.9 and startup.excess == 0.0
    assert find(tree.root, "Py_InitializeEx") is None
    assert [c.name for c in collapse(tree).root.children] == ["_start → … → <module>",
                                                              "start-up"]
    doc = json.loads(get_renderer("speedscope").render(a))
    names = [f["name"] for f in doc["shared"]["frames"]]
    assert "__memmove_avx_unaligned_erms" in names and doc["profiles"][0]["type"] == "sampled"
    text = get_renderer("folded").render(a)
    assert isinstance(text, bytes)
    assert b"list.insert;__memmove_avx_unaligned_erms " in text


def test_flame_tree_round_trips_in_the_profile_blob_and_collapse_keeps_its_sizes() -> None:
    """The typed tree is stored in the blob's extra, reads back equal, and a collapsed root
    still names the sizes the flame graph's tooltips show."""
    from quadscope.profile.flametree import collapse
    from quadscope.profile.records import Attribution, FlameNode, FlameTree
    from test_report_screens import profiled

    profile = profiled().profile
    assert profile is not None and profile.flame_tree is not None
    blob = json.loads(json.dumps(profile.to_dict()))
    assert blob["extra"]["flame_tree"]["sizes"] == list(profile.flame_tree.sizes)
    assert Attribution.from_dict(blob) == profile
    leaf = FlameNode("work", "a.out", 1.0, 2.0, 500, 1.0, False, cls="n^2")
    chain = FlameTree(FlameNode("all", "", 1.0, 2.0, 500, 1.0, False, children=(
        FlameNode("main", "a.out", 1.0, 2.0, 500, 1.0, False, children=(leaf,)),)), (10, 80))
    shown = collapse(chain).to_dict()
    assert (shown["name"], shown["collapsed"], shown["sizes"]) == ("all → … → work", 3, [10, 80])
    assert FlameTree.from_dict(chain.to_dict()) == chain


def test_a_profile_s_faults_and_overhead_round_trip_with_their_derived_numbers() -> None:
    """FaultReport and Overhead are typed in the blob; per_n and ratio are written, not read."""
    from dataclasses import replace

    from quadscope.profile.records import Attribution, FaultReport, Overhead
    from test_report_screens import profiled

    base = profiled().profile
    assert base is not None
    faults = FaultReport(1000, 2500, {"demand-zero": 2000, "other": 500}, {"demand-zero": "fill"},
                         ("2 demand-zero faults per n, from fill",))
    profile = replace(base, faults=faults, overhead=Overhead(1000, 0.5, 0.6, 1.2))
    blob = json.loads(json.dumps(profile.to_dict()))
    assert blob["faults"]["per_n"] == {"demand-zero": 2.0, "other": 0.5}
    assert blob["overhead"]["ratio"] == pytest.approx(1.2)
    back = Attribution.from_dict(blob)
    assert back == profile and back.fault_sentences == faults.sentences


def test_exports_of_a_sweep_without_profile_say_how_to_get_one(quad: Analysis) -> None:
    """--speedscope on an unprofiled sweep is one sentence naming --profile."""
    with pytest.raises(UsageError, match="--profile"):
        get_renderer("speedscope").render(quad)


def test_html_of_a_profile_inlines_the_flame_viewer_under_its_csp() -> None:
    """The vendored viewer and its driver are inline, each allowed by its own hash; no src= loads."""
    from test_report_screens import profiled

    page = get_renderer("html").render(profiled())
    assert isinstance(page, bytes)
    body = page.decode()
    assert body.split('<meta name="viewport"')[0].count("sha256-") == 3 and 'id="qs-flame"' in body
    assert "d3-flame-graph 5.0.0 (Apache-2.0)" in body and " src=" not in body


def _run_args(*extra: str) -> argparse.Namespace:
    from quadscope.cli import build_parser

    return build_parser().parse_args(["run", "--sizes", "1e3..8e3", *extra, "--", "./a", "{n}"])


def test_run_vs_fail_on_class_gates_the_exit(capsys: pytest.CaptureFixture[str]) -> None:
    """`run --vs B --fail-on class`: exit 8 when B grows faster, 0 when B improves, sentence said."""
    from quadscope.commands.run import finish

    args = _run_args("--vs", "./b {n}", "--fail-on", "class=wall_s")
    worse = _analysis(a_power=1.0, vs_power=2.0, vs_coef=2e-9)
    assert finish(args, worse) == FAIL_EXIT
    assert "gate fail: wall_s: B grows" in capsys.readouterr().err
    assert finish(args, _analysis(vs_power=1.0)) == 0
    assert "gate pass" in capsys.readouterr().err


def test_run_fail_on_without_vs_is_refused() -> None:
    """`run --fail-on` with no B command is one sentence before any sweep, pointing to --vs."""
    from quadscope.commands.run import check_fail_on

    with pytest.raises(UsageError, match="--vs"):
        check_fail_on(_run_args("--fail-on", "class"))
    check_fail_on(_run_args("--vs", "./b {n}", "--fail-on", "slower=1.1"))


def test_demo_story_two_says_what_the_fix_is_worth() -> None:
    """Story 2's sentence names A's class, then B's speed-up at the largest n and how it grew."""
    from quadscope.commands.demo import sizes_sentence

    analysis = _analysis(vs_power=1.0)
    text = sizes_sentence(analysis)
    # The time the headline leads with (here CPU time: wall time is the noisier of the two).
    assert analysis.verdict.startswith("quadratic: CPU time grows as n²")
    assert text.startswith("Verdict: the scanning allocator's CPU time grows as n² (k = 2.0")
    assert ("; the fixed one's wall time is 4.0× faster at n = 10k (against 2.0× slower at "
            "n = 1k)") in text
    assert text.endswith("its own time grows as n.")


def test_demo_story_two_leads_with_the_counted_work_as_the_headline_does() -> None:
    """Where the work was counted and settled B as n while B's time stayed a bracket, the
    sentence says B's work grows as n, as the headline does, never "not settled"."""
    from quadscope.analyse.headline import lead_fit
    from quadscope.commands.demo import sizes_sentence
    from quadscope.model import Measurement, Run

    sizes = (1000, 2000, 4000, 8000, 16000)
    runs, seq = [], 0
    rng = np.random.default_rng(5)
    for variant, work, wall in (("A", lambda n: 50_000 + 3 * n * n, lambda n: 1e-3 + 2e-9 * n * n),
                                ("B", lambda n: 50_000 + 40 * n, lambda n: 1e-3)):
        for rep in range(3):
            for n in sizes:
                w = wall(n) * (1 + 0.3 * rng.standard_normal()) if variant == "B" else wall(n)
                runs.append(Run(3, seq, variant, n, rep, False, 1.7e9 + seq, Measurement(
                    wall_s=abs(w), user_s=abs(w) * 0.9, instructions=work(n) if rep == 0 else None,
                    exit_code=0)))
                seq += 1
    sweep = Sweep(id=3, name="ff", mode="sizes", command=("./a", "{n}"), vs_command=("./b", "{n}"),
                  sizes=sizes, repeat=3, meter="instructions", counters="valgrind")
    analysis = analyse(sweep, runs)
    b = lead_fit(analysis.fits["B"], "instructions")
    assert b is not None and b.metric == "instructions" and b.cls == "n"
    text = sizes_sentence(analysis)
    assert text.startswith("Verdict: the scanning allocator's work grows as n² "
                           "(instructions, counted exactly, k = 2.0"), text
    assert re.search(r"; its own work grows as n \(k = [01]\.\d\d \[[^]]*\]\)\.$", text), text
    assert "not settled" not in text


def test_commands_and_default_names_read_as_typed() -> None:
    """`{n}` stays bare as typed; a default name is the quoted command, cut at 80 with `…`."""
    from quadscope.measure.clock import FakeClock
    from quadscope.run.spec import SweepSpec, new_sweep

    assert command_text(("./prog", "{n}", "a b", "{n,m}")) == "./prog {n} 'a b' '{n,m}'"
    code = "import sys; l=[]; [l.insert(0,i) for i in range(int(sys.argv[1]))]"
    spec = SweepSpec(command=("python3", "-c", code, "{n}"), mode="sizes", sizes=(1, 2, 3))
    name = new_sweep(spec, clock=FakeClock(), counters="none", counters_note="", host=Host()).name
    assert name == "python3 -c 'import sys; l=[]; [l.insert(0,i) for i in…"
    short = SweepSpec(command=("./a b", "{n}"), mode="sizes", sizes=(1, 2, 3))
    assert new_sweep(short, clock=FakeClock(), counters="none", counters_note="",
                     host=Host()).name == "'./a b' {n}"


def test_large_counts_keep_a_unit_and_never_read_as_an_exponent_of_one() -> None:
    """A deciding n of 10¹² read "1e+03G"; 999.7k rounds up to the next unit, not to "1e+03k"."""
    from quadscope.units import fmt_count

    assert fmt_count(1e12) == "1T"
    assert fmt_count(2.5e13) == "25T"
    assert fmt_count(999_700) == "1M"
    assert fmt_count(1020) == "1.02k"
    assert fmt_count(4e20) == "4e+20"


def test_demo_wide_bracket_without_an_exponent_reads_as_a_sentence() -> None:
    """A bracket up to cⁱ has no k to quote: "grows (anything from 1 to cⁱ fits)", not
    "grows (; anything …" as a loaded machine's story 1 once printed."""
    from dataclasses import replace

    from quadscope.analyse.fitting import fit_metric
    from quadscope.classes import INCONCLUSIVE
    from quadscope.commands.demo import _grows

    flat = fit_metric("wall_s", [1, 2, 4, 8, 16] * 2,
                      [1, 1.1, 0.9, 1.3, 1.0, 1.05, 0.95, 1.2, 1.1, 0.9])
    wide = replace(flat, cls=INCONCLUSIVE, at_least="1", at_most="c^n", exponent=4.0,
                   exponent_ci=(0.5, 4.0))
    assert _grows(wide, "i") == "grows (anything from 1 to cⁱ fits)"


def _killed_at_top() -> Analysis:
    """Sizes 10, 20, 40 twice each, every run at 40 killed by SIGABRT (exit_code -6): two
    sizes are left, so every metric is refused with the same sentence."""
    from conftest import measurement
    from quadscope.model import Run

    sweep = Sweep(id=5, name="abort", mode="sizes", command=("./p", "{n}"), sizes=(10, 20, 40),
                  repeat=2)
    runs = [Run(5, 3 * rep + i, "A", n, rep, False, 1.7e9 + 3 * rep + i,
                measurement(1e-3 * n, -6 if n == 40 else 0))
            for rep in range(2) for i, n in enumerate((10, 20, 40))]
    return analyse(sweep, runs)


def test_an_exit_code_of_minus_signum_reads_as_the_signal() -> None:
    """`Measurement.exit_code` holds -SIGNUM for a killed run; a person reads its name,
    a number Python does not name reads as the signal's number, a status stays a status."""
    from quadscope.units import fmt_exit

    assert fmt_exit(-6) == "killed by SIGABRT (signal 6)"
    assert fmt_exit(-9) == "killed by SIGKILL (signal 9)"
    assert fmt_exit(-200) == "killed by signal 200"
    assert fmt_exit(3) == "3"


def test_notes_name_the_signal_of_runs_killed_by_one() -> None:
    """A failure note once read "exit codes [-6]"; a status keeps its list as before."""
    from quadscope.analyse import text

    note = text.too_few_sizes(2, [-6, 1], 4, [10, 20])
    assert "(exit codes [1]; killed by SIGABRT (signal 6))" in note and "-6" not in note
    assert "(killed by SIGABRT (signal 6))" in text.nothing_to_fit([-6])
    assert "(exit codes [1, 'timeout'])" in text.nothing_to_fit([1, "timeout"])


def test_failed_runs_table_names_the_signal_and_json_keeps_the_number() -> None:
    """`show -v` lists a run that aborted as killed by SIGABRT, not "-6"; the JSON keeps -6."""
    a = _killed_at_top()
    text = _text(a, 100, verbose=True)
    assert "killed by SIGABRT (signal 6)" in text and " -6 " not in text
    doc = json.loads(get_renderer("json").render(a))
    assert {f["exit_code"] for f in doc["failures"]} == {-6}


def test_the_same_refusal_of_many_metrics_is_one_note() -> None:
    """Nine metrics refused for the same two sizes once gave nine identical notes; they are one
    note naming them, as the terminal's own notes join the metrics that share one."""
    notes = _killed_at_top().notes
    refused = [n for n in notes if "distinct size" in n]
    assert refused == ["wall_s, user_s, sys_s, cpu_s, max_rss_bytes, minor_faults, major_faults, "
                       "voluntary_ctx_switches, involuntary_ctx_switches: only 2 distinct size(s) "
                       "with finite values, and a growth class needs at least 3 sizes."]
