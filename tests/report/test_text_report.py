"""The terminal report reads as an engineer reads a log: the verdict first, rsyslog's #012 as a
line break, cut lines marked, event kinds by name, failing LBAs only from medium errors."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from diagdisk.logs.events import EVENT_KINDS
from diagdisk.report.build import is_medium_error
from diagdisk.report.labels import KIND_LABELS, kind_label
from diagdisk.report.text import clip, evidence_lines, render_text, verdict_line

from end_to_end.test_corpus import run_case

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo() -> dict:
    return run_case(REPO / "samples" / "demo-sosreport")


def test_every_event_kind_has_a_label():
    assert set(EVENT_KINDS) <= set(KIND_LABELS), sorted(set(EVENT_KINDS) - set(KIND_LABELS))
    assert kind_label("reset", "host") == "reset (host)"
    assert kind_label("some_new_kind") == "some new kind"


def test_rsyslog_line_breaks_are_shown_as_lines():
    text = "md/raid1:md0: Disk failure on sdc1, disabling device.#012md/raid1:md0: Operation continuing on 1 devices."
    assert evidence_lines(text) == ["md/raid1:md0: Disk failure on sdc1, disabling device.",
                                    "md/raid1:md0: Operation continuing on 1 devices."]


def test_a_cut_line_ends_with_an_ellipsis():
    assert clip("x" * 200, 150) == "x" * 149 + "\u2026"
    assert clip("short", 150) == "short"


def test_evidence_of_md_shows_the_second_sentence_on_its_own_line(demo):
    text = render_text(demo)
    assert "#012" not in text
    failure = text.index("Disk failure on sdc1")
    assert "| md/raid1:md0: Operation continuing on 1 devices." in text[failure:failure + 400]


def test_long_evidence_lines_are_cut_with_an_ellipsis(demo):
    report = copy.deepcopy(demo)
    report["findings"][0]["evidence"][0]["text"] = "sd 2:0:2:0: [sdc] " + "A" * 400
    line = next(line for line in render_text(report).splitlines() if "AAAA" in line)
    assert line.endswith("\u2026") and len(line) < 200


def test_smart_evidence_cites_its_line(demo):
    text = render_text(demo)
    assert "sos_commands/ata/smartctl_-a_.dev.sdc:30: 5 Reallocated_Sector_Ct" in text


def test_events_are_listed_by_label(demo):
    text = render_text(demo)
    assert "SCSI sense data" in text and "md member failed" in text
    assert " md_failure " not in text


def test_the_verdict_line_is_the_first_line(demo):
    assert render_text(demo).splitlines()[0] == verdict_line(demo)
    assert render_text(demo, brief=True) == verdict_line(demo) + "\n"


def test_reasons_wrap_to_the_width(demo):
    report = copy.deepcopy(demo)
    report["verdict"]["reasons"] = ["word " * 60]
    lines = render_text(report, width=60).splitlines()
    reason_lines = lines[1:lines.index("")]
    assert len(reason_lines) > 1 and all(len(line) <= 60 for line in reason_lines)
    assert reason_lines[0].startswith("  - ") and reason_lines[1].startswith("    ")


# -- failing LBAs only from medium errors ------------------------------------------------------------------


@pytest.mark.parametrize("event, medium", [
    ({"kind": "sense", "sense_key": 3}, True),
    ({"kind": "sense", "sense_key": 4, "asc": 0x11}, True),
    ({"kind": "sense", "sense_key": 6, "asc": 0x29}, False),
    ({"kind": "io_error", "text": "critical medium error"}, True),
    ({"kind": "io_error", "text": "I/O error"}, False),
    ({"kind": "ata_exception", "ata_error": "UNC"}, True),
    ({"kind": "ata_exception", "ata_error": "ICRC ABRT"}, False),
    ({"kind": "nvme_error", "sct": 2, "sc": 0x81}, True),
    ({"kind": "nvme_error", "sct": 0, "sc": 0x04}, False),
    ({"kind": "timeout"}, False),
])
def test_medium_errors_are_told_from_other_failed_io(event, medium):
    assert is_medium_error(event) is medium


def test_a_cable_fault_names_no_failing_lba():
    report = run_case(REPO / "tests/corpus/ata-icrc-abrt-sdc-superuser641219")
    assert report["sectors"]            # the failed I/O's sector is still reported
    assert not report["failing_lbas"]   # but it is no failing LBA: the link corrupted the transfer


def test_a_medium_error_names_its_failing_lba(demo):
    assert 2931456128 in demo["failing_lbas"]["sdc"]


def test_the_html_card_lists_failing_lbas_apart_from_other_failed_io(demo):
    from diagdisk.report.html import render_html
    report = copy.deepcopy(demo)
    report["sectors"]["sdc"] = [*report["sectors"]["sdc"], 12345]   # say, a sector a link error named
    page = render_html(report)
    failing = page[page.index("Failing LBAs"):]
    failing = failing[:failing.index("</p>")]
    other = page[page.index("Sectors of other failed I/O"):]
    other = other[:other.index("</p>")]
    assert ">2931456128<" in failing and ">12345<" not in failing
    assert ">12345<" in other and ">2931456128<" not in other
