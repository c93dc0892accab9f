"""How a rule's selection reads a row (the condition language of docs/rules.md), on plain rows."""

from __future__ import annotations

import math

import pytest

from diagdisk.diagnosis.selection import matches as _matches

ROW = {"kind": "sense", "sense_key": 3, "asc": 0x11, "text": "Unrecovered read error", "device": "sdb",
       "lun": 2, "detail": None, "smart_udma_crc_errors": "21", "nan": math.nan}


@pytest.mark.parametrize("selection, expected", [
    ({"kind": "sense"}, True),
    ({"kind": ["io_error", "sense"]}, True),                 # a list is OR
    ({"kind": "sense", "device": "sdc"}, False),             # a map is AND
    ({"sense_key": 3}, True),
    ({"sense_key": "3"}, False),                             # equality keeps types
    ({"text|contains": "read err"}, True),
    ({"text|contains": ["write", "read"]}, True),
    ({"sense_key|contains": "3"}, True),                     # contains reads a number as its digits
    ({"device|re": "^sd[a-z]$"}, True),
    ({"device|re": ["^nvme", "^hd"]}, False),
    ({"lun|gte": 2}, True), ({"lun|gt": 2}, False), ({"lun|lt": 3}, True), ({"lun|lte": 1}, False),
    ({"smart_udma_crc_errors|gte": 20}, True),               # a number written as text compares as one
    ({"text|gte": 1}, False),                                # text that is no number never compares
    ({"detail|not": "host"}, True),                          # a missing field is not any value
    ({"kind|not": ["sense", "io_error"]}, False),
    ({"detail|exists": True}, False), ({"detail|exists": False}, True),
    ({"nan|exists": True}, False),                            # NaN is missing
    ({"absent": "x"}, False), ({"absent|not": "x"}, True),
])
def test_a_selection_reads_a_row_as_the_rules_document_says(selection, expected):
    assert _matches(ROW, selection) is expected
