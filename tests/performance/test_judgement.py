"""Judging what the user has: one pasted report is judged, at lower confidence and saying so; the
queue is checked against IOPS x await (Little's law) and a figure that cannot be true is named."""

from pathlib import Path

from diagdisk.diagnosis.analysis import analyze
from diagdisk.diagnosis.engine import evaluate_rules, load_rules
from diagdisk.diagnosis.perf import evaluate_performance_rules, short_record_confidence
from diagdisk.report.build import build_report
from diagdisk.report.performance import finding_line

RULES = load_rules()
HEADER = ("Device            r/s     w/s     rkB/s     wkB/s   rrqm/s   wrqm/s  %rrqm  %wrqm r_await w_await aqu-sz "
          "rareq-sz wareq-sz  svctm  %util")


def report_of(tmp_path: Path, rows: list[list[str]], name: str = "iostat_-x_-t_-y_1_1") -> dict:
    text = ["Linux 4.18.0-348.el8.x86_64 (db1) \t03/19/2024 \t_x86_64_\t(8 CPU)", ""]
    for index, report in enumerate(rows):
        text += [f"03/19/2024 10:00:0{index} AM", HEADER, *report, ""]
    path = tmp_path / "sos_commands" / "diagdisk" / name
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(text) + "\n")
    analysis = analyze([str(tmp_path)])
    findings, verdict = evaluate_rules(RULES, analysis)
    return build_report(analysis, findings, verdict,
                        evaluate_performance_rules(RULES, analysis.performance, findings, analysis.topology))


SATURATED_DISK = "sda  180.00 20.00 2880.00 160.00 0.00 0.00 0.00 0.00 45.00 30.00 8.70 16.00 8.00 4.95 99.00"


def test_one_report_is_judged_at_lower_confidence_with_its_sample_count(tmp_path):
    report = report_of(tmp_path, [[SATURATED_DISK]])
    finding = next(f for f in report["performance"]["findings"] if f["rule"] == "DD601")
    rule = next(r for r in RULES if r.id == "DD601")
    assert finding["window"]["single_sample"] and finding["window"]["device_samples"] == 1
    assert finding["confidence"] == short_record_confidence(rule.confidence, 1, 2) < rule.confidence
    assert "single sample: 1 of 1 read" in finding_line(finding)


def test_two_reports_are_a_sustained_run_at_the_rule_s_confidence(tmp_path):
    report = report_of(tmp_path, [[SATURATED_DISK], [SATURATED_DISK]], name="iostat_-x_-t_-y_1_2")
    finding = next(f for f in report["performance"]["findings"] if f["rule"] == "DD601")
    assert not finding["window"]["single_sample"]
    assert finding["confidence"] == next(r for r in RULES if r.id == "DD601").confidence


def test_a_queue_little_s_law_contradicts_is_named_and_not_trusted(tmp_path):
    # 1,700 reads a second of 1.1 ms each keep 1.9 requests in flight, not the 0.08 printed
    row = "sda  1632.00 63.00 16580.00 1772.00 0.00 0.00 0.00 0.00 1.09 1.19 0.08 10.16 28.13 0.60 100.00"
    report = report_of(tmp_path, [[row], [row]], name="iostat_-x_-t_-y_1_2")
    warnings = [w for s in report["performance"]["sources"] for w in s["warnings"]]
    assert any("sda: aqu-sz 0.08 against IOPS x await 1.85" in w and "Little's law" in w for w in warnings)
    assert not any(f["verdict"] == "saturated" for f in report["performance"]["findings"])
