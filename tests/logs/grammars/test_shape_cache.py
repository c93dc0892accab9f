"""The shape cache is an optimisation, never a second opinion: whatever a message is, parsing it
after a same-shaped message was learnt gives exactly what a fresh lark parse gives."""

import random
import re

import pytest

from diagdisk.logs.grammar import MessageParser, grammar_specs, kernel_families

FAMILIES = kernel_families()
_DIGIT_RUN = re.compile(r"\d+")


def _examples():
    for family in FAMILIES:
        for example in grammar_specs()[family].accept:
            yield family, example["line"]


_HEX_LETTER = re.compile(r"[a-fA-F]")
_WORD = re.compile(r"[A-Za-z]{2,}")


def _mutations(line: str, rng: random.Random, count: int = 6):
    """The line with its digit runs replaced (other lengths, leading zeros, other values), its hex
    letters changed (sda -> sdb, 0xff -> 0xfa), a word changed: what the shape cache must tell apart."""
    runs = list(_DIGIT_RUN.finditer(line))
    for _ in range(count):
        yield _DIGIT_RUN.sub(lambda m: rng.choice(
            [m.group(), "0", "7", "12", "255", "4096", "99999999", "00", m.group() + "1"]), line)
        yield _HEX_LETTER.sub(lambda m: rng.choice([m.group(), "a", "b", "c", "d", "e", "f", "A", "F", "1"]), line)
    if runs:
        yield line[:runs[0].start()] + "x" + line[runs[0].end():]  # a digit run that is not a number any more
    for word in _WORD.finditer(line):
        yield line[:word.start()] + word.group().swapcase() + line[word.end():]
        yield line[:word.start()] + word.group()[:-1] + line[word.end():]


@pytest.mark.parametrize("family", FAMILIES)
def test_learnt_shapes_parse_like_lark(family):
    rng = random.Random(family)
    learner = MessageParser()
    for example_family, line in _examples():
        if example_family != family:
            continue
        learner.parse(line, [family])
        for variant in _mutations(line, rng):
            fresh = MessageParser([family])
            assert learner.parse(variant, [family]) == fresh.parse(variant, [family]), variant


def test_a_shape_is_learnt_and_reused():
    parser = MessageParser()
    first = parser.parse("blk_update_request: I/O error, dev sdb, sector 1000", ["block"])
    lark_calls = []
    original = parser._parse_family
    parser._parse_family = lambda *args: lark_calls.append(args) or original(*args)
    second = parser.parse("blk_update_request: I/O error, dev sdc, sector 123456789", ["block"])
    third = parser.parse("blk_update_request: I/O error, dev sde, sector 42", ["block"])
    assert first["sector"] == 1000 and (second["device"], second["sector"]) == ("sdc", 123456789)
    assert (third["device"], third["sector"]) == ("sde", 42)
    assert lark_calls == []
    other_words = parser.parse("blk_update_request: critical medium error, dev sdc, sector 7", ["block"])
    assert other_words["text"] == "critical medium error" and len(lark_calls) == 1


def test_a_refused_message_is_tried_once():
    parser = MessageParser()
    calls = []
    original = parser._parse_family
    parser._parse_family = lambda *args: calls.append(args) or original(*args)
    for _ in range(3):
        assert parser.parse("md/raid1:md0: Disk failure on, a wording no grammar knows", ["md"]) is None
    assert len(calls) == 1
