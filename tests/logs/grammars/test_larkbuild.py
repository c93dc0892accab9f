"""Parsers are built without lark's interegular collision check unless strict mode asks for it."""

import pytest

from diagdisk.larkbuild import build_lark

interegular = pytest.importorskip("interegular", reason="the check only runs where interegular is installed")

_GRAMMAR = 'start: WORD\nWORD: /[a-z]+/\n'


def _forbid_comparator(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("collision check ran")
    monkeypatch.setattr(interegular.Comparator, "from_regexes", refuse)


def test_default_build_skips_the_collision_check(monkeypatch):
    _forbid_comparator(monkeypatch)
    assert build_lark(_GRAMMAR).parse("disk").children == ["disk"]


def test_strict_build_runs_the_collision_check(monkeypatch):
    _forbid_comparator(monkeypatch)
    with pytest.raises(AssertionError, match="collision check ran"):
        build_lark(_GRAMMAR, strict=True)


def test_the_switch_is_restored_after_a_build():
    import lark.lexer
    build_lark(_GRAMMAR)
    assert lark.lexer.has_interegular
