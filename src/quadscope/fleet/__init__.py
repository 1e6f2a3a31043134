"""`--fleet ADDRESS`: run the doctor or one sweep on every node of an existing Ray cluster.

Contract: `cluster` connects (bounded) and chooses nodes, `tasks` is what runs
on each node, `collect` stores what the nodes send on the driver, `outliers`
judges the doctor's results across machines. Nothing in this package imports
Ray at import time: `cluster.import_ray()` does, on the fleet code path only.
`add_fleet_options(parser)` adds `--fleet` and `--fleet-label` to a command;
`check_resume_here(sweep, hostname)` refuses to resume, on another machine, a
sweep a fleet node measured: its remaining runs would mix two machines in one
fit. Resume it on that machine, against the same store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from quadscope.errors import UsageError

if TYPE_CHECKING:
    from quadscope.model import Sweep


def add_fleet_options(p: Any) -> None:
    p.add_argument("--fleet", metavar="ADDRESS", default=None,
                   help="run on every node of the Ray cluster at ADDRESS (host:port, ray://, "
                        "or auto) and compare the machines; needs `pip install 'quadscope[fleet]'`")
    p.add_argument("--fleet-label", metavar="KEY=VALUE", action="append", default=[],
                   help="with --fleet: only nodes with this Ray label (KEY alone: the label or a "
                        "custom resource KEY); repeat to require several")


def check_resume_here(sweep: Sweep, hostname: str) -> None:
    """`UsageError` when `sweep` ran on a fleet node other than `hostname` (this machine)."""
    node_id = sweep.host.ray_node_id
    there = sweep.host.hostname or "?"
    if node_id and there != hostname:
        raise UsageError(f"sweep {sweep.id} was measured on fleet node {there} (Ray node "
                         f"{node_id[:8]}); resuming it here would mix two machines in one fit: "
                         f"run `quadscope run --resume {sweep.id}` on {there} with the same "
                         "--db, or measure again with `quadscope run --fleet ADDRESS`")
