"""Where `profile` and `run --profile` write their stacks: one folder per sweep per store."""

from __future__ import annotations

import argparse
from pathlib import Path

from quadscope.commands.profile import _out_dir, footer, profile_dir_name
from quadscope.model import Sweep
from quadscope.profile.records import Attribution


def _sweep(sweep_id: int) -> Sweep:
    return Sweep(id=sweep_id, name="s", mode="sizes", command=("./p", "{n}"), sizes=(1, 2, 4))


def test_two_stores_side_by_side_never_share_a_profile_folder(tmp_path: Path) -> None:
    """Sweep ids count from 1 in every store: `--db a.db` and `--db b.db` in one folder both
    had `profile/sweep-1`, the second profile overwriting (or mixing with) the first."""
    a = _out_dir(argparse.Namespace(db=str(tmp_path / "a.db")), _sweep(1))
    b = _out_dir(argparse.Namespace(db=str(tmp_path / "b.db")), _sweep(1))
    assert a != b and a.parent == b.parent == tmp_path / "profile"
    assert (a.name, b.name) == ("a-sweep-1", "b-sweep-1")
    assert _out_dir(argparse.Namespace(db=str(tmp_path / "a.db")), _sweep(2)).name == "a-sweep-2"


def test_a_server_store_is_named_by_its_database_and_odd_names_stay_one_folder() -> None:
    assert profile_dir_name("postgresql://u@host:5432/perf", 7) == "perf-sweep-7"
    assert profile_dir_name("postgresql://u@host", 7) == "host-sweep-7"
    assert profile_dir_name(Path("/x/../weird name.db"), 3) == "weird_name-sweep-3"
    assert "/" not in profile_dir_name("postgresql://h/a/../b", 1)


def test_an_explicit_out_is_used_as_given(tmp_path: Path) -> None:
    given = argparse.Namespace(db=None, profile_out=str(tmp_path / "prof"))
    assert _out_dir(given, _sweep(1)) == tmp_path / "prof"


def test_the_footer_says_where_the_profile_went_in_lines_of_the_width() -> None:
    note = "call stacks unwound with DWARF debug information " * 4
    a = Attribution(sweep_id=1, sampler="perf", sizes=(100, 200, 400, 800), event="cpu-clock",
                    samples=(100, 100, 100, 100), culprits=(), flame_svg="", superlinear=False,
                    flame_svg_path="/tmp/p/a-sweep-1/flame-diff.svg",
                    folded=("/tmp/p/a-sweep-1/folded-n100.txt",), notes=(note,))
    lines = [t.plain for t in footer(a, 60)]
    assert lines[0] == "flame graph: /tmp/p/a-sweep-1/flame-diff.svg"
    assert lines[1].startswith("folded stacks: /tmp/p/a-sweep-1/folded-n<N>.txt")
    assert all(len(row) <= 60 for row in lines[2].splitlines())
    assert all(row.startswith("  ") for row in lines[2].splitlines()[1:])
