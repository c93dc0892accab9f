"""Every layout is read or refused loudly: iostat rows whose values wrapped onto the next line (a
narrow terminal, a book, a web page), columns of one report split over several headers, localized
decimal commas, headers repeated mid-stream, partitions (-p ALL). A value that was not read is
unknown (None) in every output and named in a warning, and never gives an all-clear."""

from pathlib import Path

import pytest

from diagdisk.diagnosis.analysis import analyze
from diagdisk.diagnosis.engine import evaluate_rules, load_rules
from diagdisk.diagnosis.perf import evaluate_performance_rules
from diagdisk.performance.sysstat import read_sysstat_text
from diagdisk.report.build import build_report
from diagdisk.report.performance import performance_text

RULES = load_rules()
BANNER = "Linux 3.10.0-957.el7.x86_64 (db1) \t03/19/2024 \t_x86_64_\t(8 CPU)\n\n"
HEADER = ("Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz   await r_await "
          "w_await  svctm  %util")
HEADER_TOP = "Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz"
HEADER_REST = "                avgqu-sz   await r_await w_await  svctm  %util"
BUSY = ("sda               0.00     5.00  180.00   20.00  2880.00   160.00    30.40",
        "                    8.70   45.00   45.00   30.00   4.95  99.00")
IDLE = ("sdb               0.00     0.00    1.00    0.00    16.00     0.00    32.00",
        "                    0.01    5.00    5.00    0.00   5.00   0.50")


def report_of(tmp_path: Path, text: str) -> dict:
    path = tmp_path / "iostat.txt"
    path.write_text(text)
    analysis = analyze([str(path)])
    findings, verdict = evaluate_rules(RULES, analysis)
    performance = evaluate_performance_rules(RULES, analysis.performance, findings, analysis.topology)
    return build_report(analysis, findings, verdict, performance)


def reports(*blocks: str) -> str:
    """iostat -x 1 N: the since-boot report first, then the interval reports."""
    return BANNER + "".join(f"avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n"
                            f"           2.00    0.00    1.00   30.00    0.00   67.00\n\n{block}\n\n" for block in blocks)


def wrapped(rows) -> str:
    return "\n".join([HEADER_TOP, HEADER_REST] + [line for row in rows for line in row])


def unwrapped(rows) -> str:
    return "\n".join([HEADER] + [" ".join(row) for row in rows])


def findings_of(report: dict) -> list[tuple[str, str]]:
    return sorted((f["verdict"], f["device"]) for f in report["performance"]["findings"])


def test_wrapped_header_and_rows_read_as_the_unwrapped_report(tmp_path):
    flat = report_of(tmp_path, reports(unwrapped([IDLE, IDLE]), unwrapped([BUSY, IDLE]), unwrapped([BUSY, IDLE])))
    folded = report_of(tmp_path, reports(wrapped([IDLE, IDLE]), wrapped([BUSY, IDLE]), wrapped([BUSY, IDLE])))
    assert findings_of(folded) == findings_of(flat) != []
    assert folded["performance"]["series"]["sda"]["util"] == flat["performance"]["series"]["sda"]["util"] == [99.0, 99.0]
    assert folded["performance"]["series"]["sda"]["aqu"] == [8.7, 8.7]
    assert not [w for s in folded["performance"]["sources"] for w in s["warnings"] if "not read" in w]


def test_wrapped_rows_whose_values_never_came_are_unknown_named_and_give_no_verdict(tmp_path):
    # the second line of every row was lost (a page that kept only the first line of each)
    cut = "\n".join([HEADER_TOP, HEADER_REST, BUSY[0], IDLE[0]])
    report = report_of(tmp_path, reports(cut, cut, cut))
    section = report["performance"]
    assert section["findings"] == []
    sda = section["series"]["sda"]
    assert sda["util"] == [None, None] and sda["aqu"] == [None, None] and sda["await"] == [None, None]
    assert sda["mb_s"] == [pytest.approx(2.97, abs=0.01)] * 2         # what was read is kept
    warnings = [w for s in section["sources"] for w in s["warnings"]]
    assert any("avgqu-sz await r_await w_await svctm %util not read" in w for w in warnings)
    devices = {d["name"]: d for d in section["devices"]}
    assert devices["sda"]["unread"] == ["aqu", "await", "util"]
    text = "\n".join(performance_text(section))
    assert "no device is saturated" not in text
    assert "sda: aqu-sz, await, %util not read (unknown): not judged" in text


def test_rows_that_fit_no_column_are_counted_and_named(tmp_path):
    body = "\n".join([HEADER, " ".join(BUSY), " ".join(IDLE).replace("sdb", "sdc") + "  7.00", " ".join(IDLE)])
    report = report_of(tmp_path, reports(body, body))
    warnings = [w for s in report["performance"]["sources"] for w in s["warnings"]]
    assert any("rows under a disk header fit none of its columns" in w for w in warnings)
    assert "sdc" not in report["performance"]["series"]


def test_columns_no_reader_knows_are_named(tmp_path):
    body = "\n".join([HEADER + "  %wtf", " ".join(BUSY) + "  1.00"])
    report = report_of(tmp_path, reports(body, body))
    warnings = [w for s in report["performance"]["sources"] for w in s["warnings"]]
    assert any("columns %wtf are not ones sysstat prints" in w for w in warnings)
    assert report["performance"]["series"]["sda"]["util"] == [99.0]


def test_read_columns_only_leave_iops_and_await_unknown_not_reads_alone():
    lines = ["Device            r/s     rMB/s   rrqm/s  %rrqm r_await rareq-sz  %util",
             "nvme0n1         43.00      2.71     0.00   0.00    0.42    64.56   4.00"]
    _, samples = read_sysstat_text(lines, "iostat.txt")
    from diagdisk.performance.series import INDEX, normalise
    sample, _ = normalise(samples[0].values, None, None)
    assert sample[INDEX["r_s"]] == 43.0
    for name in ("iops", "mb_s", "await", "w_s"):
        assert sample[INDEX[name]] != sample[INDEX[name]], name      # NaN: unknown, never 0


def test_decimal_commas_repeated_headers_and_partitions(tmp_path):
    comma = HEADER + "\n" + " ".join(BUSY).replace(".", ",")
    report = report_of(tmp_path, reports(comma, comma + "\n" + comma.replace("sda", "sda1")))
    section = report["performance"]
    assert section["series"]["sda"]["util"] == [99.0]
    assert section["series"]["sda1"]["util"] == [99.0]
    assert section["sources"][0]["locale"]["decimal_comma"] is True


def test_iostat_json_output_is_read_by_its_keys(tmp_path):
    path = Path(__file__).parent / "fixtures" / "iostat-12.x-o-json.json"
    analysis = analyze([str(path)])
    findings, verdict = evaluate_rules(RULES, analysis)
    report = build_report(analysis, findings, verdict,
                          evaluate_performance_rules(RULES, analysis.performance, findings, analysis.topology))
    section = report["performance"]
    assert section["sources"][0]["kind"] == "iostat -o JSON"
    assert any("since boot" in w for w in section["sources"][0]["warnings"])
    assert section["series"]["sda"]["util"] == [99.0] and section["series"]["sda"]["aqu"] == [8.7]
    assert ("saturated", "sda") in findings_of(report)


def test_mail_quoted_text_is_read_under_its_quote_marks(tmp_path):
    quoted = "\n".join("> " + line if line else ">" for line in reports(unwrapped([BUSY, IDLE]),
                                                                        unwrapped([BUSY, IDLE])).splitlines())
    report = report_of(tmp_path, quoted.replace("> Device:", ">> Device:"))
    assert report["performance"]["series"]["sda"]["util"] == [99.0]
    assert ("saturated", "sda") in findings_of(report)


def test_a_busy_share_past_the_interval_is_not_judged_and_is_named(tmp_path):
    row = ("hda  0.00 50.00 0.00 18.18 0.00 545.45 30.00 2.35 129.00 0.00 129.00 86.25 156.82")
    report = report_of(tmp_path, reports(HEADER + "\n" + row, HEADER + "\n" + row, HEADER + "\n" + row))
    assert report["performance"]["findings"] == []
    warnings = [w for s in report["performance"]["sources"] for w in s["warnings"]]
    assert any("hda: %util 156.82" in w and "cannot be true" in w for w in warnings)


def test_rows_pasted_above_the_first_header_are_read_with_it_or_named(tmp_path):
    row = " ".join(BUSY)
    report = report_of(tmp_path, row + "\n\n" + HEADER + "\n" + row + "\n\n" + HEADER + "\n" + row + "\n")
    section = report["performance"]
    assert section["series"]["sda"]["util"] == [99.0, 99.0, 99.0]
    assert any("1 rows above the first disk header" in w for s in section["sources"] for w in s["warnings"])
    source, samples = read_sysstat_text([row, row.replace("sda", "sdb")], "iostat.txt")
    assert samples == [] and any("2 rows of figures (from line 1) under no disk header" in w for w in source.warnings)
