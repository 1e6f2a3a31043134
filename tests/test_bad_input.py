"""Over a hundred bad invocations: each is one sentence, its exit code, and never a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bad_inputs import ROWS, expand, guard_measuring, make_sandbox, run_argv
from quadscope.cli import CRASH_EXIT
from quadscope.store import SqliteStore


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    root = tmp_path_factory.mktemp("bad-inputs")
    yield make_sandbox(root)


@pytest.fixture(autouse=True)
def crash_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    with guard_measuring():
        yield tmp_path / "cache"  # matplotlib keeps its own cache there too


def test_the_table_holds_at_least_80_rows() -> None:
    """The proof the issue asks for is at least 80 bad invocations."""
    assert len(ROWS) >= 80


@pytest.mark.parametrize(("argv", "code", "phrase"), ROWS,
                         ids=[f"{i}:{' '.join(r[0])[:60]}" for i, r in enumerate(ROWS)])
def test_bad_input_is_one_sentence(sandbox: dict[str, str], crash_files: Path,
                                   argv: tuple[str, ...], code: int, phrase: str) -> None:
    """The row's exit code and phrase, on one `quadscope:` line, no traceback, no crash file."""
    got, _, err = run_argv(expand(argv, sandbox))
    assert "Traceback" not in err
    assert got != CRASH_EXIT, err
    assert not (crash_files / "quadscope").exists(), err
    assert (got, phrase in err) == (code, True), err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("quadscope: "), err


def test_no_bad_run_is_saved_as_a_sweep(sandbox: dict[str, str]) -> None:
    """After every row has run, the store holds only the two sweeps the sandbox made."""
    for argv, _, _ in ROWS:
        run_argv(expand(argv, sandbox))
    with SqliteStore(Path(sandbox["db"])) as store:
        assert sorted(s.name for s, _ in store.list_sweeps()) == ["allfailed", "good"]
