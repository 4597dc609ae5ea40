"""Syntax highlighting of script text: ANSI colours for terminals (used by `show`), HTML spans
for pages (used by `graphc.report`).

>>> highlight("x = 1  # one") == "x = 1  # one"
False
>>> strip_ansi(highlight("for i in range(4):")) == "for i in range(4):"
True
>>> print(highlight_html("x = T.max(a, 1)  # <1>").replace("</span>", "</span>\\n"))
x = <span class="hl-namespace">T</span>
.max(a, <span class="hl-number">1</span>
)  <span class="hl-comment"># &lt;1&gt;</span>
<BLANKLINE>
"""

from __future__ import annotations

import html
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


def _spans(text: str) -> dict[int, list[tuple[int, int, str]]] | None:
    """(start column, end column, kind) of each highlighted token, by line; None if `text` does
    not tokenize."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    spans: dict[int, list] = {}
    prev = None
    for tok in tokens:
        kind = _kind(tok, prev)
        prev = tok
        if kind is None or tok.start[0] != tok.end[0]:
            continue
        spans.setdefault(tok.start[0] - 1, []).append((tok.start[1], tok.end[1], kind))
    return spans


def highlight(text: str) -> str:
    """`text` with ANSI colour codes around keywords, names, strings, numbers and comments."""
    lines = text.split("\n")
    spans = _spans(text)
    if spans is None:
        return text
    for row, found in spans.items():
        line = lines[row]
        for start, end, kind in sorted(found, reverse=True):
            line = line[:start] + _COLORS[kind] + line[start:end] + _RESET + line[end:]
        lines[row] = line
    return "\n".join(lines)


def highlight_html(text: str) -> str:
    """`text` escaped for HTML, with `<span class="hl-KIND">` around the highlighted tokens."""
    lines = text.split("\n")
    spans = _spans(text) or {}
    out = []
    for row, line in enumerate(lines):
        pieces, at = [], 0
        for start, end, kind in sorted(spans.get(row, ())):
            pieces.append(html.escape(line[at:start], quote=False))
            pieces.append(f'<span class="hl-{kind}">{html.escape(line[start:end], quote=False)}</span>')
            at = end
        pieces.append(html.escape(line[at:], quote=False))
        out.append("".join(pieces))
    return "\n".join(out)
