"""Calls that may run at once, each on one of a few resources (an exact meter's counts).

Contract: `each_on(calls, resources)` runs every call with one of `resources`
(a resource is given to one call at a time: a `ProcessExecutor` runs one
process at a time through its resident launcher), on as many threads as there
are resources, and returns the results in the order of `calls` once all have
ended. The first call's exception, by position, is raised once every call has
ended, so nothing a call started is left running behind a caller that goes on.
An interrupt (Ctrl-C) in the waiting thread is raised at once: the threads are
daemons, each call bounded by its own timeout, and a process they started is
stopped when quadscope exits (its launcher sees its request pipe close).

Only counts run this way: an exact count does not depend on what else runs
(instructions retired by one process), a timed run does, so timed runs stay
one at a time.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

R = TypeVar("R")
T = TypeVar("T")


def each_on(calls: Sequence[Callable[[R], T]], resources: Sequence[R]) -> list[T]:
    """Each of `calls` given one of `resources`, at most one call per resource at a time;
    the results in order (module docstring)."""
    if not resources:
        raise ValueError("each_on needs at least one resource")
    if len(calls) <= 1 or len(resources) == 1:
        return [call(resources[0]) for call in calls]
    todo: queue.SimpleQueue[tuple[int, Callable[[R], T]]] = queue.SimpleQueue()
    for item in enumerate(calls):
        todo.put(item)
    results: dict[int, T] = {}
    errors: dict[int, BaseException] = {}

    def work(resource: R) -> None:
        while True:
            try:
                k, call = todo.get_nowait()
            except queue.Empty:
                return
            try:
                results[k] = call(resource)
            except BaseException as exc:  # raised in the caller's thread, below
                errors[k] = exc

    threads = [threading.Thread(target=work, args=(r,), name="quadscope-count", daemon=True)
               for r in resources[:len(calls)]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[min(errors)]
    return [results[k] for k in range(len(calls))]
