"""The PNG plots' log axes: labelled however many decades they span.

matplotlib's LogLocator with subs (1, 2, 5) draws no major tick at all once an axis
spans more than 7 decades, and a log-log panel whose floor point sat at 1e-15 s had no
label on its y axis; a positive tick that `fmt_seconds` rounds to "0 s" kept that text.
Pinned on one plot record drawn on an Agg canvas, no sweep run.
"""

from __future__ import annotations

from typing import Any, cast

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from quadscope.render.plotmodel import Line, Plot
from quadscope.render.png import draw_plot


def _labels(ys: tuple[float, ...]) -> list[str]:
    plot = Plot(id="p", kind="loglog", metric="wall_s", title="t", xlabel="n", ylabel="y",
                xlog=True, ylog=True, xunit="count", yunit="s",
                layers=(Line(x=(1.0, 2000.0), y=ys, color="#000", label="fit"),))
    fig = Figure(figsize=(4, 3), dpi=50)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    draw_plot(ax, cast(Any, None), plot)  # a Line needs no run data
    fig.canvas.draw()
    lo, hi = ax.get_ylim()
    return [t.get_text() for t, v in zip(ax.get_yticklabels(), ax.get_yticks(), strict=True)
            if lo <= v <= hi]


def test_an_axis_over_many_decades_is_labelled_at_powers_of_ten() -> None:
    """14 decades, 1e-16 s to 0.01 s: labels at powers of ten (every other one, as
    numticks allows), none of them "0 s"."""
    assert _labels((1e-16, 1e-2)) == ["1e-07 ns", "1e-05 ns", "0.001 ns", "0.1 ns", "10 ns",
                                      "1 µs", "100 µs", "10 ms"]


def test_an_axis_over_a_few_decades_keeps_one_two_five() -> None:
    """Two decades, 1 ms to 100 ms: ticks at 1, 2 and 5 of each, as before."""
    assert _labels((1e-3, 1e-1)) == ["1 ms", "2 ms", "5 ms", "10 ms", "20 ms", "50 ms",
                                     "100 ms"]
