"""The parsers shipped in diagdisk/_parsers/ are those of the grammars as they are now, load into
the same parsers a build from the grammar gives, and are what a run uses (it builds nothing)."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from lark import Lark
from lark.exceptions import LarkError

from diagdisk import larkbuild
from diagdisk.cli.parsers import stale_parsers, wanted_parsers

ROOT = Path(__file__).resolve().parents[3]
WANTED = wanted_parsers()


def test_no_shipped_parser_is_stale():
    problems = stale_parsers(WANTED)
    assert problems == [], ("shipped parsers differ from grammars/ (run `python -m diagdisk.cli.parsers` "
                            "and commit diagdisk/_parsers/):\n" + "\n".join(problems))


def _example_lines(name: str) -> list[str]:
    path = larkbuild.grammars_dir() / f"{name}.examples.yml"
    data = yaml.safe_load(path.read_text()) if path.exists() else {}
    lines = [example["line"] for example in data.get("accept") or [] if isinstance(example, dict)]
    return lines + [line for line in data.get("reject") or [] if isinstance(line, str)]


def _outcome(parser: Lark, line: str):
    try:
        return parser.parse(line.strip())
    except LarkError as error:
        return type(error).__name__


@pytest.mark.parametrize("name", sorted(WANTED))
def test_shipped_parser_reads_every_example_as_the_grammar_does(name):
    fingerprint, text, options = WANTED[name]
    shipped = larkbuild._shipped_parser(fingerprint)
    assert shipped is not None, f"{name}: no shipped parser loads"
    built = Lark(text, **{**options, "import_paths": [larkbuild.grammars_dir()]})
    assert [(t.name, t.pattern.to_regexp()) for t in shipped.terminals] == \
        [(t.name, t.pattern.to_regexp()) for t in built.terminals]
    lines = _example_lines(name)
    assert lines, f"{name}: no examples to compare on"
    for line in lines:
        assert _outcome(shipped, line) == _outcome(built, line), line


def test_a_parser_whose_fingerprint_differs_is_built_from_its_grammar(monkeypatch):
    grammar = 'start: WORD\nWORD: /[a-z]+/\n'
    fingerprint = larkbuild.parser_fingerprint(grammar, {"parser": "lalr", "lexer": "contextual"})
    # an index entry that points at a module made for another grammar
    monkeypatch.setattr(larkbuild, "_shipped_index", lambda: {fingerprint: "scsi"})
    built_before = len(larkbuild.BUILD_LOG.built)
    parser = larkbuild.build_lark(grammar)
    assert parser.parse("disk").children == ["disk"]
    assert len(larkbuild.BUILD_LOG.built) == built_before + 1


def test_the_fingerprint_follows_imported_grammar_files(tmp_path, monkeypatch):
    (tmp_path / "words.lark").write_text("WORD: /[a-z]+/\n")
    grammar = "%import .words (WORD)\nstart: WORD\n"
    monkeypatch.setattr(larkbuild, "grammars_dir", lambda: tmp_path)
    larkbuild._grammar_file_text.cache_clear()
    try:
        before = larkbuild.parser_fingerprint(grammar, {})
        (tmp_path / "words.lark").write_text("WORD: /[a-z0-9]+/\n")
        larkbuild._grammar_file_text.cache_clear()
        assert larkbuild.parser_fingerprint(grammar, {}) != before
    finally:
        larkbuild._grammar_file_text.cache_clear()


def test_a_run_loads_every_parser_and_builds_none():
    script = textwrap.dedent(f"""
        from diagdisk import larkbuild
        from diagdisk.diagnosis.analysis import analyze
        from diagdisk.logs.grammar import parse_line
        analyze([{str(ROOT / 'samples' / 'demo-sosreport')!r}], jobs=1)
        parse_line("sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]")
        print(len(larkbuild.BUILD_LOG.loaded), len(larkbuild.BUILD_LOG.built))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded, built = map(int, done.stdout.split())
    assert loaded > 0 and built == 0
