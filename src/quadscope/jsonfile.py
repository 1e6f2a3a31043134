"""Reading a JSON file someone else wrote: bounded in size and depth, interruptible, one sentence.

Contract: `read_json(path, what)` returns the parsed document of `path`, or
raises `UsageError` with one sentence naming `what` (`import FILE`, `--vs
FILE`) when the file cannot be read, is larger than `MAX_JSON_BYTES`, is not
UTF-8 JSON, or nests deeper than Python's parser can follow. A regular file
is refused by its size before a byte is read; anything else (`/dev/zero`, a
pipe from `<(hyperfine ...)`) is read in chunks and refused once it passes
the limit, so no input grows memory without bound. Reading in chunks also
returns to the interpreter between them, so Ctrl-C and SIGTERM stop a read
that never ends (a pipe whose writer waits) as they stop anything else.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

from quadscope.errors import UsageError

# Far above any export quadscope writes or hyperfine and pytest-benchmark produce
# (a 10,000-size sweep's export is a few tens of MB), far below what hurts a machine.
MAX_JSON_BYTES = 256 * 2**20
_CHUNK_BYTES = 2**20


def read_json(path: str, what: str, max_bytes: int | None = None) -> Any:
    """The JSON document in `path`; UsageError (one sentence about `what`) otherwise."""
    limit = MAX_JSON_BYTES if max_bytes is None else max_bytes
    text = _read_bounded(path, what, limit)
    try:
        return json.loads(text)
    except RecursionError:
        raise UsageError(f"{what} nests too deeply to be a report (thousands of levels of "
                         "brackets): it is not hyperfine's, pytest-benchmark's or "
                         "quadscope's JSON") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{what} is not JSON ({exc.msg} at line {exc.lineno})") from None


def _read_bounded(path: str, what: str, limit: int) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise UsageError(f"cannot read {what}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise UsageError(f"cannot read {what}: it is a directory; name the JSON file")
        if stat.S_ISREG(info.st_mode) and info.st_size > limit:
            raise UsageError(_too_large(what, limit))
        data = bytearray()
        while chunk := os.read(fd, _CHUNK_BYTES):
            data += chunk
            if len(data) > limit:
                raise UsageError(_too_large(what, limit))
    except OSError as exc:
        raise UsageError(f"cannot read {what}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} is not JSON text (not UTF-8 at byte {exc.start})") from None


def _too_large(what: str, limit: int) -> str:
    return (f"{what} is larger than {limit // 2**20} MiB, more than any report JSON "
            "should be; is it the right file?")
