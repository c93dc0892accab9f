"""The analysis is the same whatever the chunk size, the number of workers, where a large log is
cut into segments, and the order the inputs are named in."""

import re

import pytest

from diagdisk.diagnosis.analysis import analyze
from diagdisk.inputs.limits import Limits
from diagdisk.logs.reader import default_prefilter
from diagdisk.logs.source import plan_segments
from diagdisk.report.build import build_report
from diagdisk.diagnosis.engine import evaluate_rules, load_rules
from perf_data import generated_log

_MONTHS = [b"Nov 29", b"Dec 31", b"Jan  1", b"Feb  2"]
_STAMP = re.compile(rb"^[A-Z][a-z]{2} [ \d]\d", re.M)


def _report(paths, **options) -> dict:
    analysis = analyze([str(p) for p in paths], **options)
    findings, verdict = evaluate_rules(load_rules(), analysis)
    report = build_report(analysis, findings, verdict)
    report.pop("generated")
    report.pop("input")
    return report


@pytest.fixture(scope="module")
def sosreport(tmp_path_factory):
    """A storm whose syslog stamps cross a year end, with a quieter older rotation beside it."""
    root = tmp_path_factory.mktemp("determinism") / "sosreport"
    (root / "var/log").mkdir(parents=True)
    (root / "date").write_text("Mon Feb  3 10:00:00 UTC 2025\n")
    storm = generated_log(3_000_000, 0.3, seed=21)
    quarter = len(storm) // 4
    parts = []
    for index, month in enumerate(_MONTHS):
        part = storm[index * quarter:(index + 1) * quarter if index < 3 else len(storm)]
        parts.append(_STAMP.sub(month, part))
    (root / "var/log/messages").write_bytes(b"".join(parts))
    (root / "var/log/messages-20250101").write_bytes(_STAMP.sub(b"Oct 12", generated_log(400_000, 0.02, seed=4)))
    return root


@pytest.fixture(scope="module")
def whole(sosreport):
    return _report([sosreport], jobs=1)


def test_the_fixture_means_something(whole):
    assert sum(row["count"] for row in whole["event_summary"]) > 3000
    assert whole["verdict"]["suspects"]
    years = {row[end][:4] for row in whole["event_summary"] for end in ("first", "last") if row[end]}
    assert {"2024", "2025"} <= years


@pytest.mark.parametrize("chunk_size", [4096, 65536, 1 << 20])
def test_chunk_size_changes_nothing(sosreport, whole, chunk_size):
    assert _report([sosreport], jobs=1, chunk_size=chunk_size) == whole


@pytest.mark.parametrize("segment_bytes", [16 << 10, 64 << 10, 256 << 10])
def test_workers_and_segments_change_nothing(sosreport, whole, segment_bytes):
    segments = plan_segments(sosreport / "var/log/messages", "messages", 3, default_prefilter(), Limits(),
                             segment_bytes)
    assert segments and len(segments) >= 2  # the log really is read in pieces
    assert _report([sosreport], jobs=2, segment_bytes=segment_bytes) == whole
    assert _report([sosreport], jobs=3, segment_bytes=segment_bytes, chunk_size=65536) == whole


def test_the_order_of_inputs_changes_nothing(sosreport):
    logs = [sosreport / "var/log/messages", sosreport / "var/log/messages-20250101"]
    assert _report(logs, jobs=1) == _report(list(reversed(logs)), jobs=2, segment_bytes=64 << 10)


def test_every_event_is_kept_alike_by_one_worker_or_several(sosreport):
    log = sosreport / "var/log/messages"
    one = analyze([str(log)], jobs=1, keep_each=True).events
    several = analyze([str(log)], jobs=2, keep_each=True, segment_bytes=32 << 10).events
    assert len(one) > 3000
    assert one == several
