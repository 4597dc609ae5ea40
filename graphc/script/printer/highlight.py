"""ANSI syntax highlighting of script text for terminals (used by `show`).

>>> highlight("x = 1  # one") == "x = 1  # one"
False
>>> strip_ansi(highlight("for i in range(4):")) == "for i in range(4):"
True
"""

from __future__ import annotations

import io
import keyword
import re
import tokenize

_RESET = "\033[0m"
_COLORS = {
    "keyword": "\033[1;35m",   # for, with, def, if ...
    "namespace": "\033[36m",   # T.xxx / I.xxx
    "string": "\033[32m",
    "number": "\033[33m",
    "comment": "\033[2;37m",
    "decorator": "\033[1;34m",
}
_ANSI = re.compile(r"\033\[[0-9;]*m")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _kind(tok, prev) -> str | None:
    if tok.type == tokenize.COMMENT:
        return "comment"
    if tok.type == tokenize.STRING:
        return "string"
    if tok.type == tokenize.NUMBER:
        return "number"
    if tok.type == tokenize.NAME:
        if keyword.iskeyword(tok.string):
            return "keyword"
        if tok.string in ("T", "I", "R"):
            return "namespace"
        if prev is not None and prev.string == "@":
            return "decorator"
    return None


def highlight(text: str) -> str:
    """`text` with ANSI colour codes around keywords, names, strings, numbers and comments."""
    lines = text.split("\n")
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return text
    edits: dict[int, list] = {}
    prev = None
    for tok in tokens:
        kind = _kind(tok, prev)
        prev = tok
        if kind is None or tok.start[0] != tok.end[0]:
            continue
        edits.setdefault(tok.start[0] - 1, []).append((tok.start[1], tok.end[1], _COLORS[kind]))
    for row, spans in edits.items():
        line = lines[row]
        for start, end, color in sorted(spans, reverse=True):
            line = line[:start] + color + line[start:end] + _RESET + line[end:]
        lines[row] = line
    return "\n".join(lines)
