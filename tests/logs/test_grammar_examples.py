"""Every grammar's own examples: accepted lines yield their kind and fields, rejected lines fail.

A grammar alias (event kind) that no accepted example exercises is a failure too: a shape nobody
has seen in a log is a shape nobody has tested.
"""

import re

import pytest

from diagdisk.logs.events import split_alias
from diagdisk.logs.grammar import MessageParser, grammar_specs, kernel_families, parser_for

KERNEL = kernel_families()


def _accept_cases():
    for name in KERNEL:
        for index, example in enumerate(grammar_specs()[name].accept):
            yield pytest.param(name, example, id=f"{name}-accept-{index}")


def _reject_cases():
    for name in KERNEL:
        for index, line in enumerate(grammar_specs()[name].reject):
            yield pytest.param(name, line, id=f"{name}-reject-{index}")


@pytest.mark.parametrize("family,example", list(_accept_cases()))
def test_accepted_example_yields_kind_and_fields(family, example):
    event = MessageParser([family]).parse(example["line"])
    assert event is not None, f"{family} rejected: {example['line']}"
    alias = example["kind"]
    kind, detail = split_alias(alias)
    assert event["kind"] == kind
    if detail:
        assert event.get("detail") == detail
    for key, value in (example.get("fields") or {}).items():
        assert event.get(key) == value, f"{key}: {event.get(key)!r} != {value!r} in {example['line']}"


@pytest.mark.parametrize("family,line", list(_reject_cases()))
def test_rejected_example_is_not_accepted(family, line):
    assert MessageParser([family]).parse(line) is None


@pytest.mark.parametrize("family", KERNEL)
def test_every_alias_has_an_accepted_example(family):
    grammar_text = grammar_specs()[family].path.read_text()
    aliases = set(re.findall(r"->\s*([a-z_]+)", grammar_text))
    seen = {example["kind"] for example in grammar_specs()[family].accept}
    assert aliases - seen == set(), f"aliases without an accepted example in {family}"


@pytest.mark.parametrize("family", KERNEL)
def test_grammar_builds_without_collisions(family):
    pytest.importorskip("interegular", reason="lark's strict collision check needs interegular (test extra)")
    # strict=True raises on two terminals that can match the same text at the same priority
    parser_for(family, strict=True)


@pytest.mark.parametrize("family", KERNEL)
def test_every_example_line_contains_a_keyword(family):
    spec = grammar_specs()[family]
    for example in spec.accept:
        assert any(k in example["line"] for k in spec.keywords) or example.get("context_only"), \
            f"no prefilter keyword in {example['line']!r}: the line would never be parsed"
