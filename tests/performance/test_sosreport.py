"""A sosreport holding one day three times (the host's sarDD in its locale, sos's C-locale sarDD,
sadf -x) with proc/partitions, queue settings, lsblk -t, mdstat and dmsetup: each day's samples are
counted once, devM-N names resolve, classes and peer groups come from the tree, settings rules fire
on the settings they cite, and the JSON validates against docs/report.schema.json."""

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from diagdisk.diagnosis.analysis import analyze
from diagdisk.diagnosis.engine import evaluate_rules, load_rules
from diagdisk.diagnosis.perf import evaluate_performance_rules
from diagdisk.report.build import build_report
from diagdisk.report.html import render_html
from diagdisk.report.text import render_text

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
SCHEMA = json.loads((ROOT / "docs" / "report.schema.json").read_text())

SAR_C = """Linux 4.18.0-348.el8.x86_64 (db1) \t03/19/2024 \t_x86_64_\t(8 CPU)

00:00:01          DEV       tps     rkB/s     wkB/s   areq-sz    aqu-sz     await     svctm     %util
{rows}
Average:       dev8-0      1.00      1.00      1.00      1.00      1.00      1.00      1.00      1.00
"""
SAR_HOST = SAR_C.replace("00:00:01", "12:00:01 AM").replace("Average:", "Average:  ")


def sar_rows(minutes, twelve_hour=False):
    rows = []
    for minute in minutes:
        clock = f"00:{minute:02d}:01" if not twelve_hour else f"12:{minute:02d}:01 AM"
        rows.append(f"{clock}       dev8-0     60.00    960.00    320.00     21.33      0.50      6.00      5.50     45.00")
        rows.append(f"{clock}      dev8-16     58.00    928.00    320.00     21.52      7.90    110.00     12.40     97.00")
        rows.append(f"{clock}      dev8-32     61.00    976.00    320.00     21.25      0.50      6.00      5.60     45.00")
        rows.append(f"{clock}       dev9-0     80.00    960.00    960.00     24.00      9.00    112.00      1.00    100.00")
    return "\n".join(rows)


def build_tree(root: Path) -> Path:
    files = {
        "sos_commands/sar/sar19": SAR_C.format(rows=sar_rows(range(10, 60, 10))),
        "var/log/sa/sar19": SAR_HOST.format(rows=sar_rows(range(10, 60, 10), twelve_hour=True)),
        "var/log/sa/sa19": "\x00binary sysstat data\x00",
        "proc/partitions": "major minor  #blocks  name\n\n   8        0  1 sda\n   8       16  1 sdb\n   8       32  1 sdc\n   9        0  1 md0\n",
        "proc/mdstat": "Personalities : [raid5]\nmd0 : active raid5 sdc[2] sdb[1] sda[0]\n      2 blocks super 1.2 level 5, 512k chunk [3/3] [UUU]\n\nunused devices: <none>\n",
        "sos_commands/block/lsblk_-t": "NAME ALIGNMENT MIN-IO OPT-IO PHY-SEC LOG-SEC ROTA SCHED RQ-SIZE  RA WSAME\n"
                                       "sda          0    512      0     512     512    1 none       64 128    0B\n"
                                       "sdb          0    512      0     512     512    1 none       64 128    0B\n"
                                       "sdc          0    512      0     512     512    1 none       64 128    0B\n",
        "sys/block/sdb/queue/scheduler": "[none] mq-deadline bfq\n",
        "proc/pressure/io": "some avg10=31.00 avg60=25.00 avg300=20.00 total=1\nfull avg10=20.00 avg60=15.00 avg300=10.00 total=1\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = build_tree(tmp_path_factory.mktemp("sos") / "sosreport-db1")
    analysis = analyze([str(root)])
    rules = load_rules()
    findings, verdict = evaluate_rules(rules, analysis)
    performance = evaluate_performance_rules(rules, analysis.performance, findings, analysis.topology)
    return build_report(analysis, findings, verdict, performance)


def test_one_day_three_times_is_counted_once(report):
    sources = {s["path"]: s for s in report["performance"]["sources"]}
    assert sources["sos_commands/sar/sar19"]["status"] == "read"
    assert sources["var/log/sa/sar19"]["status"] == "duplicate"
    assert sources["var/log/sa/sar19"]["duplicate_of"] == "sos_commands/sar/sar19"
    assert sources["var/log/sa/sar19"]["locale"]["clock"] == "12h"
    assert sources["var/log/sa/sa19"]["status"] in ("duplicate", "present, not read")
    devices = {d["name"]: d for d in report["performance"]["devices"]}
    assert devices["sdb"]["samples"] == 5 and "dev8-16" in devices["sdb"]["aliases"]


def test_classes_groups_and_settings(report):
    devices = {d["name"]: d for d in report["performance"]["devices"]}
    assert devices["sda"]["class"] == "hdd" and devices["md0"]["class"] == "md"
    assert devices["md0"]["md_level"] == "raid5"
    assert devices["sdb"]["settings"]["scheduler"] == "none"
    assert devices["sdb"]["settings_origin"]["read_ahead_kb"] == "sos_commands/block/lsblk_-t:3"
    group = next(g for g in report["performance"]["groups"] if g["id"] == "md:md0")
    assert sorted(group["members"]) == ["sda", "sdb", "sdc"] and group["parent"] == "md0"


def test_findings_name_the_slow_member_and_cite_lines(report):
    found = {(f["verdict"], f["device"]): f for f in report["performance"]["findings"]}
    slow = found[("slow member", "sdb")]
    assert slow["window"]["samples"] == 5 and not slow["window"]["single_sample"]
    assert slow["evidence"][0]["source"] == "sos_commands/sar/sar19" and slow["evidence"][0]["line"] == 5
    assert slow["figures"]["await"]["median"] == 110.0 and slow["figures"]["peers_await_median"]["median"] == 6.0
    assert ("misconfigured", "sdb") in found          # no scheduler on a busy rotating disk
    assert ("saturated", "sdb") not in found        # its queue comes from its own slowness, at its peers' load
    assert not any(device in ("sda", "sdc") for _, device in found)   # the idle peers are not blamed
    assert report["performance"]["pressure"]["some"]["avg10"] == 31.0


def test_report_validates_and_renders(report):
    jsonschema.Draft202012Validator(SCHEMA).validate(report)
    text = render_text(report)
    lines = [line for line in text.splitlines() if line.startswith("  SLOW MEMBER: sdb")]
    assert len(lines) == 1 and "[sos_commands/sar/sar19:5]" in lines[0]
    page = render_html(report)
    assert "Performance" in page and "sdb" in page


def test_pasted_iostat_on_stdin():
    text = (FIXTURES / "seed004-iostat-x-4m.txt").read_text()
    result = subprocess.run([sys.executable, "-m", "diagdisk", "analyze", "-", "--format", "json"], input=text,
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode in (0, 3), result.stderr
    (report,) = json.loads(result.stdout)["reports"]
    performance = report["performance"]
    verdicts = {(f["verdict"], f["device"]) for f in performance["findings"]}
    assert verdicts == {("saturated", "sdj"), ("host-side queueing", "sdj")}
    queueing = next(f for f in performance["findings"] if f["verdict"] == "host-side queueing")
    assert queueing["figures"]["await"]["median"] == pytest.approx(14.575)
    assert queueing["figures"]["svctm"]["median"] == pytest.approx(3.225)
