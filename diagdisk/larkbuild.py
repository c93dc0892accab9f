"""Build lark parsers from grammars/ (LALR, contextual lexer), and read one table line with them.

lark checks every pair of terminals for collisions with interegular whenever that package can be
imported, strict or not. The check proves a property of the grammar files, not of the input, and
costs seconds to minutes per grammar (an md grammar build took 80 s with it, 20 ms without), so it
runs only where it is asked for: `strict=True`, which the test suite uses on every grammar. Every
other build skips it, whether or not interegular happens to be installed.
"""

from __future__ import annotations

import contextlib
import threading
from functools import cache
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import LarkError

from .resources import grammars_dir

_BUILD_LOCK = threading.Lock()


@contextlib.contextmanager
def _collision_check(enabled: bool):
    import lark.lexer as lark_lexer
    if enabled or not getattr(lark_lexer, "has_interegular", False):
        yield
        return
    with _BUILD_LOCK:  # the switch is module-wide: one build at a time while it is off
        lark_lexer.has_interegular = False
        try:
            yield
        finally:
            lark_lexer.has_interegular = True


def build_lark(text: str, *, strict: bool = False, **options) -> Lark:
    """A parser for grammar `text`; never lark's cache=True (it loads a pickle from a predictable
    temp path, a code-execution risk when run as root)."""
    options.setdefault("parser", "lalr")
    options.setdefault("lexer", "contextual")
    options.setdefault("import_paths", [grammars_dir()])
    with _collision_check(strict):
        return Lark(text, strict=strict, **options)


# Longer lines are no line of these tables (an lsblk -O -P line is about 1,500 characters); they are
# reported unparsed without running the grammar's lookahead patterns over them.
MAX_TABLE_LINE = 4096


# --------------------------------------------------------------------------------------------
# Lines -> (kind, fields)


@cache
def table_parser(name: str) -> Lark:
    """The line grammar of one table, built once per process."""
    text = (grammars_dir() / f"{name}.lark").read_text(encoding="utf-8")
    return build_lark(text, maybe_placeholders=False)


_INTEGER_TERMINALS = frozenset({"NUMBER"})


def _token_value(token: Token) -> Any:
    if token.type in _INTEGER_TERMINALS:
        return int(token)
    return str(token).strip()


def _singular(name: str) -> str | None:
    if name.endswith("ies"):
        return name[:-3] + "y"
    return name[:-1] if name.endswith("s") else None


def _value(tree: Tree) -> Any:
    name = str(tree.data)
    children = tree.children
    item = _singular(name)
    if item and all(isinstance(c, Tree) and c.data == item for c in children):
        return [_value(c) for c in children]
    subtrees = [c for c in children if isinstance(c, Tree)]
    if subtrees:
        return _fields(tree)
    tokens = [_token_value(c) for c in children]
    if not tokens:
        return None
    return tokens[0] if len(tokens) == 1 else " ".join(str(t) for t in tokens)


def _fields(tree: Tree) -> dict[str, Any]:
    # bare tokens beside the field rules are separators and tree branches
    return {str(c.data): _value(c) for c in tree.children if isinstance(c, Tree)}


def parse_table_line(grammar: str, line: str) -> tuple[str, dict[str, Any]] | None:
    """(kind, fields) of one table line, or None when the grammar rejects it.

    >>> parse_table_line("mdstat", "md0 : active raid1 sdc1[1](F) sdb1[0]")[1]["members"][0]
    {'device': 'sdc1', 'number': 1, 'flags': ['F']}
    """
    stripped = line.strip()
    if not stripped or len(stripped) > MAX_TABLE_LINE:
        return None
    try:
        tree = table_parser(grammar).parse(stripped)
    except LarkError:
        return None
    return str(tree.data), _fields(tree)
