"""The crash handler's file: saved wherever it can be, never raising while something has failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from quadscope import crash


def test_no_home_directory_still_saves_the_traceback_in_the_temporary_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without $XDG_CACHE_HOME and with Path.home() refusing, the file goes to the temp folder."""
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    monkeypatch.setattr(crash.tempfile, "gettempdir", lambda: str(tmp_path))
    saved = crash.save_traceback(ValueError("boom"), ["quadscope", "run"])
    assert saved is not None and saved.parent == tmp_path / "quadscope-crashes"
    assert "ValueError: boom" in saved.read_text()
