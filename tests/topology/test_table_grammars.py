"""Every table grammar's own examples (grammars/<table>.examples.yml): accepted lines yield exactly
their kind and fields, rejected lines fail, and whole tables read into the records they must give,
with the line numbers of the lines reported unparsed.

Every grammar file with a start rule must carry examples and be exercised by a test: the kernel
message families in test_grammar_examples.py, smartctl in tests/topology/smart, the tables here.
"""

import dataclasses
import re

import pytest
import yaml
from lark import Lark

from diagdisk.topology.tables import TABLE_GRAMMARS, TABLE_READERS
from diagdisk.larkbuild import parse_table_line
from diagdisk.logs.grammar import kernel_families
from diagdisk.resources import grammars_dir

# grammars whose examples another test file runs, beside the kernel families and the tables
OTHER_LINE_GRAMMARS = {"smartctl": "tests/topology/smart/test_smart.py"}

GRAMMAR_FILES = sorted(p.stem for p in grammars_dir().glob("*.lark")
                       if re.search(r"^\??start\s*:", p.read_text(encoding="utf-8"), re.M))


def _examples(name: str) -> dict:
    path = grammars_dir() / f"{name}.examples.yml"
    return (yaml.safe_load(path.read_text(encoding="utf-8")) or {}) if path.exists() else {}


@pytest.mark.parametrize("name", GRAMMAR_FILES)
def test_every_grammar_carries_accepted_and_rejected_examples(name):
    examples = _examples(name)
    assert examples.get("accept"), f"grammars/{name}.lark has no accepted examples"
    assert examples.get("reject"), f"grammars/{name}.lark has no rejected examples"


def test_every_grammar_is_run_by_a_test():
    tested = set(kernel_families()) | set(OTHER_LINE_GRAMMARS) | set(TABLE_GRAMMARS)
    assert set(GRAMMAR_FILES) - tested == set(), "grammar files whose examples no test runs"
    assert set(TABLE_GRAMMARS) <= set(GRAMMAR_FILES)


@pytest.mark.parametrize("name", TABLE_GRAMMARS)
def test_every_table_grammar_has_whole_table_examples(name):
    assert _examples(name).get("tables"), f"grammars/{name}.examples.yml has no tables"


def _cases(section: str):
    for name in TABLE_GRAMMARS:
        for index, example in enumerate(_examples(name).get(section) or []):
            yield pytest.param(name, example, id=f"{name}-{section}-{index}")


@pytest.mark.parametrize("grammar,example", list(_cases("accept")))
def test_accepted_line_yields_its_kind_and_fields(grammar, example):
    parsed = parse_table_line(grammar, example["line"])
    assert parsed is not None, f"{grammar} rejected: {example['line']!r}"
    kind, fields = parsed
    assert kind == example["kind"]
    if "fields" in example:
        assert fields == example["fields"]


@pytest.mark.parametrize("grammar,line", list(_cases("reject")))
def test_rejected_line_is_not_accepted(grammar, line):
    assert parse_table_line(grammar, line) is None


@pytest.mark.parametrize("grammar,table", list(_cases("tables")))
def test_table_reads_into_its_records(grammar, table):
    result = TABLE_READERS[grammar](table["text"])
    expected = table["records"]
    if isinstance(result.records, dict):
        assert result.records == expected
    else:
        assert len(result.records) == len(expected), result.records
        for got, want in zip(result.records, expected):
            record = dataclasses.asdict(got)
            for key, value in want.items():
                assert record[key] == value, f"{key}: {record[key]!r} != {value!r} in {record}"
    assert [number for number, _ in result.unparsed] == table.get("unparsed", [])


@pytest.mark.parametrize("name", TABLE_GRAMMARS)
def test_every_alias_has_an_accepted_example(name):
    aliases = set(re.findall(r"->\s*([a-z_]+)", (grammars_dir() / f"{name}.lark").read_text(encoding="utf-8")))
    seen = {example["kind"] for example in _examples(name).get("accept") or []}
    assert aliases - seen == set(), f"aliases without an accepted example in {name}"


@pytest.mark.parametrize("name", TABLE_GRAMMARS)
def test_grammar_builds_without_terminal_collisions(name):
    pytest.importorskip("interegular", reason="lark's strict collision check needs interegular (test extra)")
    # strict=True raises on two terminals that can match the same text at the same priority
    Lark((grammars_dir() / f"{name}.lark").read_text(encoding="utf-8"), parser="lalr", lexer="contextual",
         maybe_placeholders=False, strict=True)
