"""A run reads only the keywords of each grammar's examples file; they are the keywords the whole
file gives, and the examples are still all there for the tests."""

import pytest
import yaml

from diagdisk.logs.grammar import _keywords, grammar_specs


@pytest.mark.parametrize("name", sorted(grammar_specs()))
def test_the_keywords_read_alone_are_those_of_the_whole_file(name):
    spec = grammar_specs()[name]
    whole = yaml.safe_load(spec.examples_path.read_text()) or {}
    assert spec.keywords == list(whole.get("keywords") or [])
    assert spec.accept == list(whole.get("accept") or []) and spec.reject == list(whole.get("reject") or [])


def test_keywords_in_an_unusual_layout_are_still_found():
    assert _keywords("accept: []\nkeywords: [a, 'b: c']\n") == ["a", "b: c"]
    assert _keywords("# comment\nkeywords:\n  - x\n  # note\n  - y\naccept:\n  - line: z\n") == ["x", "y"]
    assert _keywords("accept:\n  - line: 'keywords: inside'\n") == []
