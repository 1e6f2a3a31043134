"""JSON export: `Analysis.to_dict()`, documented in docs/schema.md (`"schema": 2`)."""

from __future__ import annotations

import json
import math
from typing import Any

from quadscope.analyse.analysis import Analysis


def _finite(obj: Any) -> Any:
    # JSON has no inf/nan; a score of inf (model not fittable) becomes null.
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


class JsonRenderer:
    def __init__(self, indent: int | None = 2) -> None:
        self.indent = indent

    def render(self, analysis: Analysis) -> str:
        return json.dumps(_finite(analysis.to_dict()), indent=self.indent, allow_nan=False) + "\n"
