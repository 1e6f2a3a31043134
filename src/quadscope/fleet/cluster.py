"""The Ray cluster as the fleet sees it: connect within a bounded wait, list and choose nodes.

Contract: `import_ray()` is the one place Ray is imported (only fleet code
paths call it, so `quadscope --help` never loads it); without Ray it raises
`ToolMissingError` naming the install command. `connect(address, timeout_s)`
first opens a plain TCP connection to the address (a cluster that does not
answer is one sentence within `timeout_s`, not a hang: `ray.init` retries its
GCS connection for a long time), then runs `ray.init` in a daemon thread
joined with the same bound; either failure is a `FleetError`. While it
connects, file descriptor 2 goes to a log file: Ray's C++ client writes a
line per failed attempt straight to it, which would bury the one sentence.
The log is deleted on success and named in the sentence on failure; after a
timeout (the thread still retrying) fd 2 stays on it and `sys.stderr` moves
to a copy of the terminal's descriptor. `alive_nodes(ray)`
lists the cluster's live nodes as `FleetNode` records with a short unique
`label` (the hostname, plus the node id's first 8 hex digits when two nodes
share a hostname, as a head and a worker on one machine do);
`select_nodes(nodes, wants, address)` keeps those matching every
`--fleet-label`, and raises a `FleetError` naming `address` when none is left;
`pinned(node_id)` is the `.options()` that runs a task on that node and
nowhere else (`NodeAffinitySchedulingStrategy(soft=False)`), never retried:
a sweep split across two machines, or replayed on a second one, would
confound its fit.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from quadscope.errors import FleetError, ToolMissingError, UsageError

INSTALL = "pip install 'quadscope[fleet]' (or pip install 'ray>=2.40')"
CONNECT_TIMEOUT_S = 20.0
DEFAULT_GCS_PORT = 6379  # `ray start --head`'s default --port


def import_ray() -> ModuleType:
    """Ray, or `ToolMissingError` with the install command."""
    try:
        import ray
    except ImportError:
        raise ToolMissingError(f"--fleet needs Ray on this machine and on every node: {INSTALL}") \
            from None
    return ray


@dataclass(frozen=True, slots=True)
class FleetNode:
    """One live Ray node: its id, host name, address, resources and labels."""

    node_id: str
    hostname: str
    address: str
    resources: Mapping[str, float] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    label: str = ""  # how reports name it; unique within the fleet


@dataclass(frozen=True, slots=True)
class LabelWant:
    """One `--fleet-label KEY=VALUE` (value None: `--fleet-label KEY`)."""

    key: str
    value: str | None

    def matches(self, node: FleetNode) -> bool:
        """A Ray label KEY equal to VALUE; without a value, the label or a custom resource KEY."""
        if self.value is not None:
            return node.labels.get(self.key) == self.value
        return self.key in node.labels or node.resources.get(self.key, 0.0) > 0


def parse_label(text: str) -> LabelWant:
    key, eq, value = text.partition("=")
    if not key.strip():
        raise UsageError(f"--fleet-label {text!r} names no key: give KEY=VALUE or KEY")
    return LabelWant(key.strip(), value.strip() if eq else None)


def host_port(address: str) -> tuple[str, int]:
    """The host and port a Ray address names: `ray://h:10001`, `h:6379` or `h`."""
    text = address.strip().removeprefix("ray://").rstrip("/")
    host, colon, port = text.rpartition(":")
    if not colon:
        return text, DEFAULT_GCS_PORT
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
        raise UsageError(f"--fleet {address!r}: the port must be a number, e.g. head-node:6379")
    return host.strip("[]"), int(port)


def _answers(address: str, timeout_s: float) -> None:
    host, port = host_port(address)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except (OSError, UnicodeError) as e:  # UnicodeError: a host name no resolver accepts
        why = ("no answer" if isinstance(e, TimeoutError)
               else getattr(e, "strerror", None) or str(e))
        raise FleetError(f"the Ray cluster at {address} does not answer ({why}); check the "
                         "address, or start one with `ray start --head`") from None


class _Fd2Log:
    """File descriptor 2 redirected to a log file until `restore()` (see the module docstring)."""

    def __init__(self) -> None:
        fd, self.path = tempfile.mkstemp(prefix="quadscope-ray-connect-", suffix=".log")
        sys.stderr.flush()
        self._saved = os.dup(2)
        os.dup2(fd, 2)
        os.close(fd)

    def restore(self, keep: bool) -> str:
        """Put fd 2 back; the log's path when `keep` and it holds anything, else ""."""
        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)
        return self._kept(keep)

    def abandon(self) -> str:
        """Leave fd 2 on the log (a thread still writes there); `sys.stderr` to the terminal."""
        if sys.stderr is sys.__stderr__:
            sys.stderr = os.fdopen(self._saved, "w", buffering=1)
            return self._kept(True)
        return self.restore(keep=True)  # stderr is captured (tests): nothing to move

    def _kept(self, keep: bool) -> str:
        if keep and os.path.getsize(self.path):
            return self.path
        os.unlink(self.path)
        return ""


def _see(log: str) -> str:
    return f" (Ray's messages: {log})" if log else ""


def connect(address: str, timeout_s: float | None = None) -> ModuleType:
    """Join the running cluster at `address` within `timeout_s` (CONNECT_TIMEOUT_S); Ray, connected."""
    timeout_s = CONNECT_TIMEOUT_S if timeout_s is None else timeout_s
    ray = import_ray()
    if address.strip() != "auto":
        _answers(address, timeout_s)
    failure: list[BaseException] = []

    def init() -> None:
        try:
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False,
                     ignore_reinit_error=True)
        except BaseException as e:  # handed to the caller's thread below
            failure.append(e)

    worker = threading.Thread(target=init, name="quadscope-ray-init", daemon=True)
    log = _Fd2Log()
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise FleetError(f"the Ray cluster at {address} answered but did not accept a driver "
                         f"within {timeout_s:.0f} s; check that it runs Ray "
                         f"{ray.__version__}{_see(log.abandon())}")
    kept = log.restore(keep=bool(failure))
    if failure:
        first = (str(failure[0]).strip().splitlines() or [type(failure[0]).__name__])[0]
        raise FleetError(f"cannot join the Ray cluster at {address}: {first[:300]}{_see(kept)}")
    return ray


def label_nodes(nodes: Sequence[FleetNode]) -> tuple[FleetNode, ...]:
    """Each node with its label: the hostname, made unique by the node id where shared."""
    seen = Counter(n.hostname for n in nodes)
    out = []
    for n in nodes:
        label = n.hostname if seen[n.hostname] == 1 else f"{n.hostname}:{n.node_id[:8]}"
        out.append(FleetNode(n.node_id, n.hostname, n.address, n.resources, n.labels, label))
    return tuple(sorted(out, key=lambda n: n.label))


def nodes_from_ray(listing: Sequence[Mapping[str, Any]]) -> tuple[FleetNode, ...]:
    """`ray.nodes()` as labelled `FleetNode`s, the live ones only."""
    return label_nodes([
        FleetNode(
            node_id=str(n["NodeID"]),
            hostname=str(n.get("NodeManagerHostname") or n.get("NodeManagerAddress") or "?"),
            address=str(n.get("NodeManagerAddress") or ""),
            resources={str(k): float(v) for k, v in (n.get("Resources") or {}).items()},
            labels={str(k): str(v) for k, v in (n.get("Labels") or {}).items()},
        )
        for n in listing if n.get("Alive")
    ])


def alive_nodes(ray: ModuleType) -> tuple[FleetNode, ...]:
    return nodes_from_ray(ray.nodes())


def select_nodes(nodes: Sequence[FleetNode], wants: Sequence[LabelWant],
                 address: str) -> tuple[FleetNode, ...]:
    """The nodes matching every want; `FleetError` when none is left."""
    chosen = tuple(n for n in nodes if all(w.matches(n) for w in wants))
    if not chosen:
        which = " and ".join(w.key + ("" if w.value is None else f"={w.value}") for w in wants)
        raise FleetError(f"no live node of the Ray cluster at {address} "
                         + (f"has {which}" if wants else "is alive"))
    return chosen


def pinned(node_id: str) -> dict[str, Any]:
    """Task options that run on `node_id` only, once, without taking a CPU slot.

    num_cpus=0: the task never waits behind other work for a slot (a node
    started with --num-cpus 0 would otherwise never run it); it measures
    whatever else the node runs, as any sweep on a shared machine does.
    """
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return {"scheduling_strategy": NodeAffinitySchedulingStrategy(node_id, soft=False),
            "num_cpus": 0, "max_retries": 0}
