"""One line of news for the user on stderr, wrapped at the terminal's width with a hanging indent.

Contract: `notice(text)` prints "quadscope: " + `text` on stderr, each paragraph
(a line of `text`) wrapped at `stderr_width()` with later lines indented under
the text, never breaking a word (a path, a URL or an option stays whole, so it
can be copied, and a class such as "n log n" stays on one line).
`wrapped(text, width)` is that text, for tests and callers that print
elsewhere. `stderr_width()` is `$COLUMNS` when set, else the
terminal's width when stderr is one, else 80, so piped output and CI logs
wrap as an 80-column terminal would. Warnings, gate sentences and the
rescue note go through it, their control characters made visible
(`textsafe.visible_lines`). `error(text)` prints an error the same way
when stderr is a terminal, where a person reads it; piped or captured it
stays the one line scripts, logs and tests read (`cli.main`'s errors
and argparse's go through it). Standard library only (and textsafe, which is
too).
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
from typing import TextIO

from quadscope.textsafe import visible_lines

PREFIX = "quadscope: "
DEFAULT_WIDTH = 80
MIN_WIDTH = 40  # narrower than this and a hanging indent leaves no room for words
# A class written with spaces ("n log n", "log² n", "i log i") is one word to the reader:
# kept on one line, as a path is. textwrap breaks only at ASCII whitespace.
_CLASS = re.compile(r"(?:\b[ni] )?\blog\S? [ni]\b")
_KEEP = "\u00a0"


def stderr_width(stream: TextIO | None = None) -> int:
    """The columns a notice may use (see the module docstring)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isascii() and columns.isdigit() and int(columns) > 0:  # COLUMNS=² was exit 70
        return max(MIN_WIDTH, int(columns))
    stream = stream or sys.stderr
    try:
        if stream.isatty():
            return max(MIN_WIDTH, os.get_terminal_size(stream.fileno()).columns)
    except (AttributeError, OSError, ValueError):
        pass  # not a real file (a test's capture): as when piped
    return DEFAULT_WIDTH


def wrapped(text: str, width: int, prefix: str = PREFIX, hang: str | None = None) -> str:
    """`prefix + text`, each of its lines wrapped at `width`, continuations indented by
    `hang` (as deep as `prefix` when None)."""
    indent = " " * len(prefix) if hang is None else hang
    out = []
    for i, line in enumerate(text.split("\n")):
        line = _CLASS.sub(lambda m: m.group(0).replace(" ", _KEEP), line)
        out.append(textwrap.fill(line, width=width, initial_indent=prefix if i == 0 else indent,
                                 subsequent_indent=indent, break_long_words=False,
                                 break_on_hyphens=False).replace(_KEEP, " ")
                   or (prefix if i == 0 else ""))
    return "\n".join(out)


def notice(text: str, stream: TextIO | None = None) -> None:
    """Print `text` on stderr (or `stream`) as "quadscope: …", wrapped (see the docstring)."""
    stream = stream or sys.stderr
    # Warnings and gate sentences quote others' text (commands, names, paths).
    print(wrapped(visible_lines(text), stderr_width(stream)), file=stream, flush=True)


def error(text: str, stream: TextIO | None = None) -> None:
    """Print the error `text` as "quadscope: …" on stderr (or `stream`): wrapped with a
    hanging indent on a terminal, one line elsewhere (see the module docstring)."""
    stream = stream or sys.stderr
    print(error_text(text, stream), file=stream, flush=True)


def error_text(text: str, stream: TextIO) -> str:
    """What `error` prints on `stream`: wrapped only when `stream` is a terminal."""
    try:
        tty = stream.isatty()
    except (AttributeError, OSError, ValueError):
        tty = False
    text = visible_lines(text)
    return wrapped(text, stderr_width(stream)) if tty else PREFIX + text


__all__ = ["DEFAULT_WIDTH", "PREFIX", "error", "error_text", "notice", "stderr_width",
           "wrapped"]
