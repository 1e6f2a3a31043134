"""Renderers: one output format each, declared once, read by everything else.

Contract: a renderer is a subclass of `Renderer` (`render.base`) that
declares its `name`, `flag`, `metavar`, `help`, `extension`, whether it
writes a `folder`, and its abilities (`reads_gates`, `step_summary`,
`writes_fleet`), all as class constants; its one method `render(analysis)`
returns bytes, or for a folder renderer a mapping of file name -> bytes,
writes nothing and never re-computes a fit. `RENDERERS` lists
them in the order their files are written. The CLI adds one option per
renderer with a flag, checks their paths before a sweep starts and writes
what was asked by looping over this tuple (`commands.common`), so a new
format is one module plus one line here. `file_renderers()` are those with a
flag (the terminal has none), `renderer_class(name)` the class called so (a
KeyError otherwise), and `get_renderer(name, **options)` makes one with its
own options (the terminal's `color` and `width`). A doctor
summary (an `Analysis` whose `doctor` is a `DoctorReport`) goes through the
same renderers: the terminal prints the doctor's table, JSON writes the
report `doctor --vs` reads. `DEFAULT_REPORT` is the renderer `quadscope
report` uses when no output option is given. The CLI reads a renderer's
abilities off its class and never probes for a method: a renderer that
declares `writes_fleet` writes `doctor --fleet`'s machine × probe table with
`render_fleet(fleet)`, and `doctor --fleet` refuses the others.
A renderer that declares `renders_multi` writes a sweep over several sizes
with `render_multi(report, gates)` (`commands.multi`); the others are refused
for one in a sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from quadscope.render.base import Renderer
from quadscope.render.csv import CsvRenderer
from quadscope.render.folded import FoldedRenderer
from quadscope.render.html import HtmlRenderer
from quadscope.render.json import JsonRenderer
from quadscope.render.junit import JunitRenderer
from quadscope.render.markdown import MarkdownRenderer
from quadscope.render.png import PngRenderer
from quadscope.render.speedscope import SpeedscopeRenderer
from quadscope.render.terminal import TerminalRenderer

RENDERERS: tuple[type[Renderer], ...] = (
    TerminalRenderer,
    JsonRenderer,
    CsvRenderer,
    HtmlRenderer,
    PngRenderer,
    MarkdownRenderer,
    JunitRenderer,
    SpeedscopeRenderer,
    FoldedRenderer,
)

DEFAULT_REPORT = "html"


def file_renderers() -> tuple[type[Renderer], ...]:
    """The renderers the CLI offers as options, in the order it writes them."""
    return tuple(r for r in RENDERERS if r.flag)


def renderer_class(name: str) -> type[Renderer]:
    for r in RENDERERS:
        if r.name == name:
            return r
    raise KeyError(f"no renderer named {name!r}")


def get_renderer(name: str, **options: Any) -> Renderer:
    """An instance of the renderer `name`, with its own options (e.g. color=, width=)."""
    make: Callable[..., Renderer] = renderer_class(name)
    return make(**options)


__all__ = ["DEFAULT_REPORT", "RENDERERS", "Renderer", "file_renderers", "get_renderer",
           "renderer_class"]
