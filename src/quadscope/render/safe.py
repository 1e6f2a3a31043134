"""What a format needs to carry any value or text literally: one home for each format's rule.

Contract: `finite(obj)` is a JSON value with every non-finite float as None
(JSON has no inf/nan); `md(text)` is text as literal Markdown (controls made
visible, special characters escaped, newlines flattened); `safe_name(text)` a
file-name stem of [A-Za-z0-9_.-] only; `cell(value)` one CSV cell (None
empty, text made visible). The renderers (`json`, `markdown`, `png`, `csv`)
and their several-size and fleet forms (`multi`, `multi_markdown`,
`multi_png`, `multi_csv`, `fleet`) import them from here, so neither imports
the other.
"""

from __future__ import annotations

import math
import re
from typing import Any

from quadscope.textsafe import visible

# Characters Markdown (or the HTML GitHub allows in it) could read as syntax: `&` starts an
# entity (`&lt;` would show as `<`), `$` GitHub's math (`$x^2$` is typeset).
_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~&$])")


def cell(value: object) -> object:
    """One CSV cell: None empty, text made visible (control characters escaped, as
    `textsafe.visible` does for a terminal), else as is."""
    if value is None:
        return ""
    return visible(value) if isinstance(value, str) else value


def finite(obj: Any) -> Any:
    """`obj` with every non-finite float as None: JSON has no inf/nan (a score of inf, a
    model not fittable, or an AICc with too few points becomes null)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [finite(v) for v in obj]
    return obj


def md(text: object) -> str:
    """`text` as literal Markdown: control characters visible (`textsafe.visible`), special
    characters escaped, newlines flattened."""
    return _SPECIAL.sub(r"\\\1", visible(" ".join(str(text).split())))


def safe_name(text: str) -> str:
    """A file-name stem from a metric or probe name: [A-Za-z0-9_.-] only."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("._") or "plot"


__all__ = ["finite", "md", "safe_name"]
