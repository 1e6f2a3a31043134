"""`Host`, a sweep's machine facts: typed, and stored in schema 2's shape.

A sweep's `host` is an object of strings in every store and export since
0.1.0; the record must read all of them (missing and unknown keys alike),
write the same object back, and keep compare's "B on another host" out of
A's machine facts.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from quadscope.analyse.analysis import analyse
from quadscope.host import FACT_NAMES, Host
from quadscope.measure.host import shown_host
from quadscope.measure.system import (
    _KINDS,
    Aslr,
    HugePages,
    StealTime,
    checks_from_host,
    with_checks,
)
from quadscope.model import Sweep
from quadscope.render import get_renderer
from quadscope.store import SqliteStore
from test_report import synth_runs


def test_facts_serialise_as_strings_in_field_order() -> None:
    """Only recorded facts are written, numbers as decimal text, in the fields' order."""
    host = Host(cpus=2, kernel="6.1", llc_bytes=32 << 20, hostname="box")
    assert list(host.to_dict().items()) == [
        ("hostname", "box"), ("kernel", "6.1"), ("cpus", "2"), ("llc_bytes", str(32 << 20))]
    assert Host.from_dict(host.to_dict()) == host
    assert Host().to_dict() == {}


def test_old_and_unknown_facts_load_and_round_trip() -> None:
    """A missing fact is None; an unknown one, or a number that is not one, is kept as written."""
    stored = {"kernel": "6.18", "cpus": "?", "gpu": "none", "l2_bytes": "524288", "aslr": None}
    host = Host.from_dict(stored)
    assert (host.kernel, host.cpus, host.l2_bytes, host.aslr) == ("6.18", None, 524288, None)
    assert host.extra == (("cpus", "?"), ("gpu", "none"))
    assert host.to_dict() == {"kernel": "6.18", "l2_bytes": "524288", "cpus": "?", "gpu": "none"}


def test_a_host_that_is_not_an_object_is_a_type_error() -> None:
    """An export whose host is a string fails in from_dict, which `import` reports as a bad file."""
    with pytest.raises(TypeError, match="host is a str, not an object"):
        Sweep.from_dict({"id": 1, "name": "x", "mode": "sizes", "command": ["p"], "host": "box"})


def test_every_check_names_a_host_field() -> None:
    """Each measure.system check stores its value in the Host field its `key` names."""
    assert {kind.key for kind in _KINDS} <= set(FACT_NAMES)
    host = with_checks(Host(kernel="6.1"), (HugePages("always"), Aslr("2"), StealTime("0.3")))
    assert (host.kernel, host.thp, host.aslr, host.steal_pct) == ("6.1", "always", "2", "0.3")
    assert checks_from_host(host) == (HugePages("always"), Aslr("2"), StealTime("0.3"))


def test_vs_host_is_the_pair_s_fact_written_where_compare_always_wrote_it() -> None:
    """`Sweep.vs_host` is exported inside host (schema 2's shape) and read back out of it."""
    sweep = Sweep(id=1, name="a vs b", mode="sizes", command=("a",), vs_command=("b",),
                  host=Host(hostname="here", kernel="6.1"), vs_host="there")
    d = sweep.to_dict()
    assert d["host"] == {"hostname": "here", "kernel": "6.1", "vs_host": "there"}
    assert "vs_host" not in d
    back = Sweep.from_dict(json.loads(json.dumps(d)))
    assert back == sweep and back.host == Host(hostname="here", kernel="6.1")
    assert shown_host(back.host, vs_host=back.vs_host) == "Linux 6.1, B on another host"
    assert shown_host(back.host) == "Linux 6.1"


def test_host_survives_the_store_and_the_json_export(tmp_path: Path) -> None:
    """A stored sweep's host comes back equal; its export is the same object of strings."""
    host = Host(hostname="box", kernel="6.1", cpus=2, l2_bytes=1 << 19, thp="always",
                run_cleanup="group", extra=(("future_fact", "x"),))
    with SqliteStore(tmp_path / "q.db") as store:
        sweep = store.create_sweep(Sweep(id=0, name="s", mode="sizes", command=("p", "{n}"),
                                         sizes=(1000, 2000, 4000), host=host))
        for run in synth_runs((1000, 2000, 4000), 3):
            store.add_run(dataclasses.replace(run, sweep_id=sweep.id))
        got = store.get_sweep(str(sweep.id))
        assert got.host == host
        doc = json.loads(get_renderer("json").render(analyse(got, store.runs(got.id))))
    assert doc["sweep"]["host"] == {"hostname": "box", "kernel": "6.1", "cpus": "2",
                                    "l2_bytes": "524288", "thp": "always",
                                    "run_cleanup": "group", "future_fact": "x"}
