"""What quadscope leaves behind in a user's tree and temporary directory: only what it must.

Each test pins one piece of housekeeping from issue 27: reports `assert_scales`
writes without `report=` do not pile up, `.quadscope/` ignores itself in git,
no journal file outlives a clean run, and numpy's warnings stay inside the
analysis.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from quadscope.api import report_path


def test_assert_scales_reports_without_a_path_reuse_one_file_per_target() -> None:
    """The same target's report lands at the same path each run: nothing accumulates."""
    first = report_path("python:tests.mod:sorted")
    assert first == report_path("python:tests.mod:sorted")
    assert first.parent.parent == Path(tempfile.gettempdir())
    assert first.parent.name.startswith("quadscope-reports-")
    assert first.name == "python_tests.mod_sorted.html"
    assert report_path("../../etc/passwd").parent == first.parent
    assert report_path("").name == "scaling.html"
