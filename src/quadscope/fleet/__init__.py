"""`--fleet ADDRESS`: run the doctor or one sweep on every node of an existing Ray cluster.

Contract: `cluster` connects (bounded) and chooses nodes, `tasks` is what runs
on each node, `collect` stores what the nodes send on the driver, `outliers`
judges the doctor's results across machines. Nothing in this package imports
Ray at import time: `cluster.import_ray()` does, on the fleet code path only.
`add_fleet_options(parser)` adds `--fleet` and `--fleet-label` to a command.
"""

from __future__ import annotations

from typing import Any


def add_fleet_options(p: Any) -> None:
    p.add_argument("--fleet", metavar="ADDRESS", default=None,
                   help="run on every node of the Ray cluster at ADDRESS (host:port, ray://, "
                        "or auto) and compare the machines; needs `pip install 'quadscope[fleet]'`")
    p.add_argument("--fleet-label", metavar="KEY=VALUE", action="append", default=[],
                   help="with --fleet: only nodes with this Ray label (KEY alone: the label or a "
                        "custom resource KEY); repeat to require several")
