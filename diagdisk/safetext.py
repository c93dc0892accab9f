"""Text from logs made safe to print: control characters shown as escapes, never sent raw.

Log lines, file names inside archives, host names and drive model strings are written by whoever
made the input. Sent raw to a terminal, ESC and the C1 controls start escape sequences (retitle the
window, clear the screen, move the cursor, rewrite what was printed before), BEL rings, CR and BS
overwrite, and the Unicode bidirectional controls reorder what the reader sees. Every text output
(the terminal report, stderr messages, CSV, the decoders, the HTML page's text) passes through
`escape_control`, which writes each such character the way Python writes it in a string literal
(`\\x1b`, `\\u202e`); the JSON report escapes them by itself.

    >>> escape_control("sd 2:0:0:0: \\x1b]0;owned\\x07 [sdb]")
    'sd 2:0:0:0: \\\\x1b]0;owned\\\\x07 [sdb]'
"""

from __future__ import annotations

import re

# C0 controls but TAB, DEL and C1, the bidi embeddings, overrides, isolates and marks, and the
# Unicode line and paragraph separators (a terminal or editor may break the line there).
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escaped(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_control(text: str) -> str:
    """`text` with every control character escaped (a newline too: the result is one line)."""
    if text.isprintable():
        return text
    return _UNSAFE.sub(_escaped, text)


def escape_lines(text: str) -> str:
    """Each line of `text` escaped on its own, the line breaks kept."""
    return "\n".join(escape_control(line) for line in text.split("\n"))
