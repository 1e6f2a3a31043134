"""A sweep over several sizes cut into one line per axis through its base point (profile/axes)."""

from __future__ import annotations

from quadscope.model import Measurement, Run, Sweep
from quadscope.profile.axes import axis_lines, axis_sentence, base_point
from quadscope.run.design import Axis, design

N = (1000, 2000, 4000, 8000)
M = (10, 20, 40, 80)


def _sweep(points: tuple[tuple[int, ...], ...]) -> Sweep:
    return Sweep(id=3, name="t", mode="sizes", command=("./prog", "--rows={n}", "{m}", "{m}x"),
                 sizes=N, axes=(("n", N), ("m", M)), points=points)


def _runs(points: tuple[tuple[int, ...], ...], repeats: int = 2) -> list[Run]:
    out = []
    for p in points:
        for r in range(repeats):
            out.append(Run(3, len(out), "A", p[0], r, False, 0.0,
                           Measurement(wall_s=p[0] * 1e-6 + p[1] ** 2 * 1e-6, exit_code=0),
                           axes=(("m", p[1]),)))
    return out


def test_a_star_is_cut_at_its_centre() -> None:
    points = design((Axis("n", N), Axis("m", M)), max_points=9)
    sweep = _sweep(points)
    lines = axis_lines(sweep, _runs(points))
    assert [line.axis for line in lines] == ["n", "m"]
    along_n, along_m = lines
    centre = base_point(points)
    assert along_n.base == (("m", centre[1]),) and along_m.base == (("n", centre[0]),)
    assert along_n.sweep.command == ("./prog", "--rows={n}", str(centre[1]), f"{centre[1]}x")
    assert along_m.sweep.command == ("./prog", f"--rows={centre[0]}", "{n}", "{n}x")
    assert along_n.sweep.sizes == tuple(sorted({p[0] for p in points if p[1] == centre[1]}))
    assert along_m.sweep.sizes == tuple(sorted({p[1] for p in points if p[0] == centre[0]}))
    assert len(along_n.sweep.sizes) >= 3 and len(along_m.sweep.sizes) >= 3
    assert along_n.sweep.axes == () and along_n.sweep.points == ()
    # The runs on each line, renamed to one size: m's runs carry m as size_n, twice each.
    assert sorted(r.size_n for r in along_m.runs) == sorted(along_m.sweep.sizes * 2)
    assert all(r.axes == () for r in along_m.runs)
    assert along_m.where() == f"n = {centre[0]}"


def test_a_grid_is_cut_at_its_middle_and_short_lines_are_left_out() -> None:
    grid = tuple((n, m) for n in N for m in M)
    assert base_point(grid) == (4000, 10)  # every point ties: the middle one of 16
    lines = axis_lines(_sweep(grid), _runs(grid))
    assert len(lines) == 2 and all(len(line.sweep.sizes) == 4 for line in lines)
    # A line with two sizes through the base point fits nothing: that axis is left out.
    sparse = ((1000, 10), (2000, 10), (4000, 10), (1000, 20))
    lines = axis_lines(_sweep(sparse), _runs(sparse))
    assert [line.axis for line in lines] == ["n"]
    assert lines[0].base == (("m", 10),)


def test_variant_b_and_nothing_measured_give_no_line() -> None:
    points = design((Axis("n", N), Axis("m", M)), max_points=9)
    b_only = [Run(3, i, "B", r.size_n, 0, False, 0.0, r.measurement, axes=r.axes)
              for i, r in enumerate(_runs(points))]
    lines = axis_lines(_sweep(points), b_only)
    assert lines == ()


def test_a_line_s_sentence_names_its_axis_not_n() -> None:
    said = ("pair_cols (grid) makes it grow: its time with what it calls grows as about "
            "n^2.1, 56% of the growth beyond linear (time samples at n = 8k)")
    assert axis_sentence(said, "cols") == (
        "pair_cols (grid) makes it grow: its time with what it calls grows as about "
        "cols^2.1, 56% of the growth beyond linear (time samples at cols = 8k)")
    exact = "n (n.c:3) does the most growing work: its calls to strlen are n log n, n²"
    assert axis_sentence(exact, "rows") == (
        "n (n.c:3) does the most growing work: its calls to strlen are rows log rows, rows²")
    assert axis_sentence("no verb here: n", "rows") == "no verb here: n"
