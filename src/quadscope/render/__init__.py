"""Renderers: one output format each, one method, `render(analysis)`.

Contract: a renderer turns an `Analysis` into text or bytes and never
re-computes a fit. A new format is one module and one line in `RENDERERS`.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from quadscope.analyse.analysis import Analysis


class Renderer(Protocol):
    def render(self, analysis: Analysis) -> Any: ...


# format name -> "module:Class"
RENDERERS: dict[str, str] = {
    "terminal": "quadscope.render.terminal:TerminalRenderer",
    "json": "quadscope.render.json:JsonRenderer",
    "csv": "quadscope.render.csv:CsvRenderer",
    "html": "quadscope.render.html:HtmlRenderer",
    "png": "quadscope.render.png:PngRenderer",
}


def get_renderer(name: str, **options: Any) -> Renderer:
    module, cls = RENDERERS[name].split(":")
    return getattr(importlib.import_module(module), cls)(**options)
