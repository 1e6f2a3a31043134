"""User-supplied text made safe to show: control characters visible, commands shell-quoted.

Contract: pure string functions used by every renderer and by `quadscope list`.
`visible(s)` returns `s` with every character that a terminal or a viewer would
act on instead of showing (C0 and C1 controls, DEL, and the Unicode bidi
overrides that reorder what is displayed) written as a `\\xNN`/`\\uNNNN`
escape, so an ANSI or OSC sequence in a sweep's name, a command or a child's
stderr is printed as text and never reaches the terminal raw. Rich markup is
not this module's business: renderers put user text in `rich.text.Text`,
which never parses markup. `command_text(argv, shell)` is the command as the
user would type it in bash (`shlex.quote` per argument; an argument holding a
control character in bash's `$'...'` form, so it stays one safe line).
`visible_lines(s)` is `visible` line by line, keeping the line breaks (a stderr
tail). `shorten(s, width)` cuts a long label at a word boundary with `…`. `mpl_text(s)`
is `visible(s)` with matplotlib's mathtext dollar signs escaped, for PNG titles.
`html_text(value)` is `visible(str(value))` escaped for HTML text and attributes.
"""

from __future__ import annotations

import html
import re
import shlex
from collections.abc import Sequence

# C0 controls (tab and newline included: a one-line field must stay one line),
# DEL, C1 controls, and the bidi embedding/override/isolate characters.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with control and bidi characters written as escapes; everything else as is."""
    return _UNSAFE.sub(_escape, text)


def visible_lines(text: str) -> str:
    """Like `visible`, but keeps line breaks (for multi-line text such as a stderr tail)."""
    return "\n".join(visible(line) for line in text.split("\n"))


# {n}, {i}, and any axis of a sweep over several sizes ({m}, {rows}: run/axes.py).
_PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_C_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\", "'": "\\'"}


def _quote(arg: str) -> str:
    """shlex.quote, or bash's $'...' quoting when the argument holds a control character.

    The size placeholders (`{n}`, `{i}`, `{m}`, ...) stay bare, as typed: bash expands
    braces only around a comma or `..`, so `./prog {n}` means what it shows.
    """
    if not _UNSAFE.search(arg):
        bare = _PLACEHOLDER.sub("n", arg)
        return arg if bare and shlex.quote(bare) == bare else shlex.quote(arg)
    body = "".join(_C_ESCAPES.get(ch) or (_escape(m) if (m := _UNSAFE.fullmatch(ch)) else ch)
                   for ch in arg)
    return f"$'{body}'"


def command_text(argv: Sequence[str], shell: bool = False) -> str:
    """The command as a user would type it in bash: shlex quoting, $'...' for control characters.

    A shell command (`--shell`) is the one string the user gave, made visible.
    """
    if shell and len(argv) == 1:
        return visible(argv[0])
    return " ".join(_quote(a) for a in argv)


def shorten(text: str, width: int) -> str:
    """`text` cut to at most `width` characters: at the last space that keeps half of it, then `…`."""
    if len(text) <= width:
        return text
    cut = text[: max(width - 1, 0)]
    space = cut.rfind(" ")
    return (cut[:space] if space >= width // 2 else cut).rstrip() + "…"


def mpl_text(text: str) -> str:
    """`visible(text)` with `$` escaped, so matplotlib draws it literally instead of as math."""
    return visible(text).replace("$", r"\$")


def html_text(value: object) -> str:
    """`value` as HTML text or an attribute value: controls visible, then `html.escape`d."""
    return html.escape(visible(str(value)), quote=True)


__all__ = ["command_text", "html_text", "mpl_text", "shorten", "visible", "visible_lines"]
