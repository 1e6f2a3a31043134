"""Renderers: one output format each, declared once, read by everything else.

Contract: a renderer is a class (see `Renderer`) that declares its `name`,
its command-line `flag` ("" for the terminal, which the CLI prints instead of
writing), the flag's `metavar` and `help`, its file `extension`, and whether
it writes a `folder` (one file per plot) instead of one file; its one method
`render(analysis)` returns bytes, or for a folder renderer a mapping of file
name -> bytes, writes nothing and never re-computes a fit. `RENDERERS` lists
them in the order their files are written. The CLI adds one option per
renderer with a flag, checks their paths before a sweep starts and writes
what was asked by looping over this tuple (`commands.common`), so a new
format is one module plus one line here. `get_renderer(name, **options)`
makes one with its own options (the terminal's `color` and `width`). A doctor
summary (an `Analysis` whose `doctor` is a `DoctorReport`) goes through the
same renderers: the terminal prints the doctor's table, JSON writes the
report `doctor --vs` reads. `DEFAULT_REPORT` is the renderer `quadscope
report` uses when no output option is given. A renderer that also has a
`render_fleet(fleet) -> bytes` method writes `doctor --fleet`'s machine ×
probe table (`render.fleet`); `doctor --fleet` refuses the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from quadscope.render.csv import CsvRenderer
from quadscope.render.folded import FoldedRenderer
from quadscope.render.html import HtmlRenderer
from quadscope.render.json import JsonRenderer
from quadscope.render.junit import JunitRenderer
from quadscope.render.markdown import MarkdownRenderer
from quadscope.render.png import PngRenderer
from quadscope.render.speedscope import SpeedscopeRenderer
from quadscope.render.terminal import TerminalRenderer


class Renderer(Protocol):
    # Declared as constants on each renderer class; the CLI reads them off the class.
    name: str
    flag: str  # e.g. "--json"; "" when the format is not written to a file
    metavar: str
    help: str
    extension: str  # of the file, or of each file in the folder
    folder: bool

    def render(self, analysis: Analysis) -> bytes | Mapping[str, bytes]: ...


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

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis

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
