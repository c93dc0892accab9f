"""Build lark parsers from grammars/ (LALR, contextual lexer), and read one table line with them.

lark checks every pair of terminals for collisions with interegular whenever that package can be
imported, strict or not. The check proves a property of the grammar files, not of the input, and
costs seconds to minutes per grammar (an md grammar build took 80 s with it, 20 ms without), so it
runs only where it is asked for: `strict=True`, which the test suite uses on every grammar. Every
other build skips it, whether or not interegular happens to be installed.

Building a parser from its grammar (LALR tables, lexer states) costs 0.1-0.3 s a grammar, more
than a small input takes to analyse. So the package ships every parser the program builds already
made: `diagdisk/_parsers/` holds each one as lark's own serialised form (plain Python literals,
loaded like any module of the package; never a pickle, never a file outside the package). A
shipped parser is used only when its fingerprint (the grammar text, the text of every grammar file
it imports, the build options and the lark version) is the one of the build asked for; otherwise,
after a grammar was edited or with another lark, the parser is built from its grammar as before:
slower, never wrong. tests/logs/grammars/test_shipped_parsers.py fails while a shipped parser is
stale; `python -m diagdisk.cli.parsers` writes them anew.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import re
import threading
from functools import cache
from typing import Any

import lark
from lark import Lark, Token, Tree
from lark.exceptions import LarkError

from .resources import grammars_dir

_BUILD_LOCK = threading.Lock()
# The package that holds the generated parsers, and the layout of what it holds.
SHIPPED_PACKAGE = "diagdisk._parsers"
SHIPPED_FORMAT = 1


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


class BuildLog:
    """What this process built from grammar text and what it loaded ready-made (for tests and
    the generator: every fingerprint asked for, with the text and options it stands for)."""

    def __init__(self):
        self.asked: dict[str, tuple[str, dict]] = {}
        self.built: list[str] = []
        self.loaded: list[str] = []


BUILD_LOG = BuildLog()


def build_lark(text: str, *, strict: bool = False, **options) -> Lark:
    """A parser for grammar `text`: the shipped one when it is fresh, else built from the text.

    Never lark's cache=True: it loads a pickle from a predictable temp path, a code-execution
    risk when run as root."""
    options.setdefault("parser", "lalr")
    options.setdefault("lexer", "contextual")
    if not strict:
        fingerprint = parser_fingerprint(text, options)
        BUILD_LOG.asked.setdefault(fingerprint, (text, dict(options)))
        shipped = _shipped_parser(fingerprint)
        if shipped is not None:
            BUILD_LOG.loaded.append(fingerprint)
            return shipped
        BUILD_LOG.built.append(fingerprint)
    options.setdefault("import_paths", [grammars_dir()])
    with _collision_check(strict):
        return Lark(text, strict=strict, **options)


def parser_fingerprint(text: str, options: dict) -> str:
    """What a built parser depends on: its grammar, the grammar files it imports, the options
    and lark's version (the serialised form is lark's own, and may change between versions)."""
    digest = hashlib.sha256()
    settings = {k: v for k, v in options.items() if k != "import_paths"}
    for part in (f"format {SHIPPED_FORMAT}", f"lark {lark.__version__}", repr(sorted(settings.items())), text,
                 *_imported_texts(text)):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


_IMPORT = re.compile(r"^[ \t]*%import[ \t]+(\.?[\w.]+)[ \t]*(\()?", re.MULTILINE)


def _imported_texts(text: str, seen: frozenset = frozenset()) -> list[str]:
    """The text of every grammar file under grammars/ that `text` imports, directly or not, in
    the order of the imports (lark's own grammars, such as `common`, go with lark's version)."""
    texts = []
    for match in _IMPORT.finditer(text):
        path, listed = match.group(1).lstrip("."), match.group(2)
        module = path if listed else path.rpartition(".")[0]
        if not module or module in seen:
            continue
        imported = _grammar_file_text(module)
        if imported is not None:
            seen = seen | {module}
            texts += [imported, *_imported_texts(imported, seen)]
    return texts


@cache
def _grammar_file_text(module: str) -> str | None:
    path = grammars_dir() / (module.replace(".", "/") + ".lark")
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


@cache
def _shipped_index() -> dict[str, str]:
    try:
        package = importlib.import_module(SHIPPED_PACKAGE)
    except ImportError:
        return {}
    return dict(getattr(package, "INDEX", {}))


def _shipped_parser(fingerprint: str) -> Lark | None:
    module_name = _shipped_index().get(fingerprint)
    if module_name is None:
        return None
    try:
        module = importlib.import_module(f"{SHIPPED_PACKAGE}.{module_name}")
        if getattr(module, "FINGERPRINT", None) != fingerprint:
            return None
        return Lark.load({"data": module.DATA, "memo": module.MEMO})
    except (ImportError, LarkError, KeyError, TypeError, ValueError, AttributeError):
        return None  # a shipped parser this lark cannot load: build it from its grammar


def serialised_parser(text: str, options: dict) -> tuple[dict, dict]:
    """lark's serialised form of a parser built from `text` (DATA and MEMO of a shipped module),
    as plain literals: token names as str, no paths."""
    options = {**options, "import_paths": [grammars_dir()]}
    with _collision_check(False):
        parser = Lark(text, **options)
    from lark.grammar import Rule
    from lark.lexer import TerminalDef
    data, memo = parser.memo_serialize([TerminalDef, Rule])
    data["options"] = {k: v for k, v in data["options"].items() if k not in ("import_paths", "source_path")}
    return _plain(data), _plain(memo)


def _plain(value: Any) -> Any:
    if isinstance(value, Token):
        return str(value)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


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
