"""Build a lark parser from one of our grammars: LALR, contextual lexer, grammars/ as import path.

lark checks every pair of terminals for collisions with interegular whenever that package can be
imported, strict or not. The check proves a property of the grammar files, not of the input, and
costs seconds to minutes per grammar (an md grammar build took 80 s with it, 20 ms without), so it
runs only where it is asked for: `strict=True`, which the test suite uses on every grammar. Every
other build skips it, whether or not interegular happens to be installed.
"""

from __future__ import annotations

import contextlib
import threading

from lark import Lark

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
