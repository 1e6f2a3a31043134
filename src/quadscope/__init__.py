"""quadscope: an empirical scaling profiler.

Data flows one way: spec -> plan -> runs -> sweep (stored) -> fits -> comparison
-> report -> renderer. See docs/architecture.md.

The Python API (`assert_scales`, `sweep_function` and their result and error
types, from `quadscope.api`) is loaded on first use, so `import quadscope`
(and the CLI's start) stays cheap.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_API = ("assert_scales", "sweep_function", "ScalingError", "ScalingResult", "ScalingSkipped",
        "ScalingTargetFailed", "ScalingUndecided")
__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        from quadscope import api

        return getattr(api, name)
    raise AttributeError(f"module 'quadscope' has no attribute {name!r}")
