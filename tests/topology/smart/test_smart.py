"""SMART parsers: real smartctl JSON and text (fixtures/SOURCES.md) against the documented health policy."""

import doctest
import json
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Lark

import diagdisk.topology.smart
from diagdisk.decode.smartctl import decode_smartctl_exit_status
from diagdisk.errors import InputError
from diagdisk.resources import grammars_dir
from diagdisk.topology.smart import (
    device_from_source,
    parse_line,
    parse_smartctl_json,
    parse_smartctl_text,
)

FIXTURES = Path(__file__).parent / "fixtures"
EXAMPLES = yaml.safe_load((grammars_dir() / "smartctl.examples.yml").read_text())


def text_fixture(case):
    path = FIXTURES / f"{case}.smartctl_-x_.dev.sda"
    return parse_smartctl_text(path.read_text(), path.name)


def json_fixture(name):
    path = FIXTURES / name
    return parse_smartctl_json(path.read_text(), f"smartctl/{name}")


# ---------------------------------------------------------------- corpus cases (expected.json)


def test_failed_reallocating_seagate_text_is_failed_with_its_counters_and_lba():
    report = text_fixture("smart-failed-realloc-st910021as-gsc")
    assert (report.device, report.protocol, report.model, report.serial, report.firmware) == (
        "sda", "ata", "ST910021AS", "3MH05H05", "3.07")
    assert report.health == "failed"
    for flag in ("health_failed", "prefail_below_threshold:Reallocated_Sector_Ct", "reallocated_sectors:16642",
                 "pending_sectors:614", "offline_uncorrectable:614", "reported_uncorrect:65535",
                 "error_log_entries:7731"):
        assert flag in report.flags
    assert not any(f.startswith("udma_crc_errors") for f in report.flags)
    assert report.failing_lbas == [2340290]
    assert (report.reallocated_sectors, report.pending_sectors, report.udma_crc_errors) == (16642, 614, 0)
    assert report.self_tests_failed == 14


def test_healthy_wd_text_passes_without_flags():
    report = text_fixture("smart-healthy-wd5002abys-gsc")
    assert report.health == "passed"
    assert report.flags == []
    assert report.error_log_entries == 0
    assert report.to_dict() == {"health": "passed", "serial": "WD-WCASY1367905", "wwn": None,
                                "firmware": "02.03B02", "flags": [], "source": report.source, "evidence": []}


def test_udma_crc_errors_are_a_flag_that_does_not_fail_the_disk():
    report = text_fixture("smart-udma-crc21-st3500630sv-gsc")
    assert report.health == "passed"
    assert report.flags == ["udma_crc_errors:21"]
    # 187 is "Unknown_Attribute" in smartctl 5.36: identified by id, not by name.
    assert report.reported_uncorrect == 0


def test_nvme_media_errors_fail_the_drive():
    report = json_fixture("nvme-samsung970-media-errors.json")
    assert (report.device, report.protocol, report.serial) == ("nvme0", "nvme", "S466NX0M776250H")
    assert report.health == "failed"
    assert "nvme_media_errors:7" in report.flags
    assert report.nvme_media_errors == 7 and report.nvme_critical_warning == 0
    assert (report.available_spare, report.available_spare_threshold, report.percentage_used) == (99, 10, 3)


# ---------------------------------------------------------------- smartctl-samples


def test_failing_hitachi_json():
    report = json_fixture("ata-hitachi-hds721050-failing.json")
    assert report.device == "sdc" and report.protocol == "ata"
    assert report.health == "failed"
    assert report.wwn == "0x5000cca37fca81a8"
    assert report.smartctl_exit_status == 216
    assert decode_smartctl_exit_status(216) == [
        "disk_failing", "prefail_below_threshold", "error_log_has_errors", "self_test_log_has_errors"]
    assert report.flags[:3] == ["health_failed", "prefail_below_threshold:Reallocated_Sector_Ct",
                                "reallocated_sectors:1975"]
    assert "pending_sectors:8" in report.flags and "error_log_entries:56" in report.flags
    assert report.self_tests_failed == 3
    assert report.failing_lbas[0] == 116751080


def test_healthy_wdc_json():
    report = json_fixture("ata-wdc-wd140edfz-healthy.json")
    assert (report.health, report.flags, report.model) == ("passed", [], "WDC WD140EDFZ-11A0VA0")
    assert (report.reallocated_sectors, report.pending_sectors, report.udma_crc_errors) == (0, 0, 0)


def test_healthy_intel_nvme_json():
    report = json_fixture("nvme-intel660p-healthy.json")
    assert (report.protocol, report.health, report.flags) == ("nvme", "passed", [])


def test_sas_grown_defects_warn():
    report = json_fixture("sas-seagate-st4000nm0043-grown-defects.json")
    assert (report.device, report.protocol, report.model, report.firmware) == (
        "sdg", "scsi", "SEAGATE ST4000NM0043", "MS03")
    assert report.health == "warning"
    assert report.flags == ["grown_defects:56"]
    assert report.scsi_uncorrected_errors == 0


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.json")))
def test_every_sample_yields_contract_smart_object(name):
    smart = json_fixture(name).to_dict()
    assert set(smart) == {"health", "serial", "wwn", "firmware", "flags", "source", "evidence"}
    assert smart["health"] in ("passed", "warning", "failed", "unknown")
    assert all(isinstance(flag, str) and flag for flag in smart["flags"])


# ---------------------------------------------------------------- policy on shaped inputs


def test_nvme_critical_warning_reliability_bit_fails_and_is_hex_flag():
    report = parse_smartctl_text(
        "Model Number:                       X\n"
        "SMART overall-health self-assessment test result: FAILED!\n"
        "Critical Warning:                   0x04\n"
        "Available Spare:                    3%\n"
        "Available Spare Threshold:          10%\n"
        "Media and Data Integrity Errors:    0\n"
        "Error Information Log Entries:      5\n",
        "sos_commands/nvme/smartctl_--all_.dev.nvme0n1",
    )
    assert report.device == "nvme0n1" and report.protocol == "nvme"
    assert report.health == "failed"
    assert {"health_failed", "nvme_critical_warning:0x04", "spare_below_threshold", "error_log_entries:5"} <= set(report.flags)


def test_nvme_error_log_entries_alone_do_not_warn():
    data = json.loads((FIXTURES / "nvme-intel660p-healthy.json").read_text())
    data["nvme_smart_health_information_log"]["num_err_log_entries"] = 12
    report = parse_smartctl_json(json.dumps(data), "nvme0.json")
    assert report.health == "passed" and report.flags == ["error_log_entries:12"]


def test_scsi_text_health_defects_and_uncorrected_errors():
    report = parse_smartctl_text(
        "Vendor:               SEAGATE\nProduct:              ST4000NM0043\nRevision:             MS03\n"
        "Logical Unit id:      0x5000C500A1B2C3D4\nSerial number:        Z1Z5DWJK\n"
        "SMART Health Status: OK\nElements in grown defect list: 0\n"
        "read:   300357663        0         0  300357663          0     176987.332           2\n"
        "write:         0        0         0         0          0      86472.611           0\n",
        "sos_commands/block/smartctl_-x_.dev.sdg",
    )
    assert (report.protocol, report.model, report.firmware, report.wwn) == (
        "scsi", "SEAGATE ST4000NM0043", "MS03", "0x5000c500a1b2c3d4")
    assert report.health == "warning" and report.flags == ["scsi_uncorrected_errors:2"]


def test_scsi_health_other_than_ok_fails():
    report = parse_smartctl_text("Vendor: HP\nSMART Health Status: FAILURE PREDICTION THRESHOLD EXCEEDED [asc=5d, ascq=10]\n", "x.dev.sdb")
    assert report.health == "failed" and report.flags == ["health_failed"]


def test_usage_attribute_failing_now_warns_but_does_not_fail():
    report = parse_smartctl_text(
        "SMART overall-health self-assessment test result: PASSED\n"
        "190 Airflow_Temperature_Cel 0x0022   040   039   045    Old_age   Always   FAILING_NOW 60\n",
        "smartctl_-a_.dev.sdc",
    )
    assert report.health == "warning"
    assert report.flags == ["usage_attribute_failing:Airflow_Temperature_Cel"]


def test_brief_attribute_format_of_x_output():
    report = parse_smartctl_text(
        "Device Model:     WDC WD140EDFZ\nLU WWN Device Id: 5 000cca 264eb01d7\n"
        "SMART overall-health self-assessment test result: PASSED\n"
        "  5 Reallocated_Sector_Ct   PO--CK   100   100   005    -    8\n"
        "197 Current_Pending_Sector  -O--CK   100   100   000    -    0\n",
        "smartctl_-x_.dev.sdb",
    )
    assert report.wwn == "0x5000cca264eb01d7"
    assert report.health == "warning" and report.flags == ["reallocated_sectors:8"]


def test_no_health_information_is_unknown():
    report = parse_smartctl_text("Smartctl open device: /dev/sda failed: Permission denied\n", "smartctl_-a_.dev.sda")
    assert (report.health, report.flags, report.protocol) == ("unknown", [], None)


def test_smartctl_json_of_a_failed_open_is_unknown_with_message():
    text = json.dumps({"smartctl": {"exit_status": 2, "messages": [
        {"string": "Smartctl open device: /dev/sda failed: Permission denied", "severity": "error"}]},
        "device": {"name": "/dev/sda", "protocol": "ATA"}})
    report = parse_smartctl_json(text, "smartctl/sda.json")
    assert report.health == "unknown"
    assert report.messages == ["Smartctl open device: /dev/sda failed: Permission denied"]
    assert decode_smartctl_exit_status(report.smartctl_exit_status) == ["device_open_failed"]


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", ""])
def test_bad_json_is_a_one_line_input_error(text):
    with pytest.raises(InputError) as caught:
        parse_smartctl_json(text, "smartctl/sda.json")
    assert "\n" not in caught.value.one_line()
    assert caught.value.one_line().startswith("smartctl/sda.json: not smartctl JSON")


@pytest.mark.parametrize("source,device", [
    ("sos_commands/ata/smartctl_-a_.dev.sda", "sda"),
    ("sos_commands/block/smartctl_-x_.dev.sdX", "sdX"),
    ("sos_commands/ata/smartctl_-a_.dev.sdb_-j", "sdb"),
    ("sos_commands/nvme/smartctl_--all_.dev.nvme0n1_-j", "nvme0n1"),
    ("smartctl/nvme0.json", "nvme0"),
    ("smartctl/scan-open.json", "scan-open"),
])
def test_device_from_source(source, device):
    assert device_from_source(source) == device


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([e["line"] for e in EXAMPLES["accept"]] + EXAMPLES["reject"]) | st.text(), max_size=5).map(
    lambda lines: "\n".join(lines if isinstance(lines, list) else [lines])))
def test_text_parser_never_raises(text):
    report = parse_smartctl_text(text, "smartctl_-a_.dev.sda")
    assert report.health in ("passed", "warning", "failed", "unknown")


def test_module_doctests():
    assert doctest.testmod(diagdisk.topology.smart).failed == 0


# ---------------------------------------------------------------- grammars/smartctl.examples.yml


@pytest.mark.parametrize("example", EXAMPLES["accept"], ids=lambda e: e["line"].strip()[:40])
def test_grammar_accepts_example_with_kind_and_fields(example):
    parsed = parse_line(example["line"])
    assert parsed is not None, example["line"]
    assert parsed == (example["kind"], example["fields"])


@pytest.mark.parametrize("line", EXAMPLES["reject"])
def test_grammar_rejects_example(line):
    assert parse_line(line) is None


def test_every_alias_has_an_accepted_example():
    aliases = set(re.findall(r"->\s*([a-z_]+)", (grammars_dir() / "smartctl.lark").read_text()))
    assert aliases == {e["kind"] for e in EXAMPLES["accept"]}


def test_grammar_builds_strict_without_terminal_collisions():
    pytest.importorskip("interegular", reason="lark strict mode needs interegular (lark[interegular])")
    Lark((grammars_dir() / "smartctl.lark").read_text(), parser="lalr", lexer="contextual", strict=True)


# ---------------------------------------------------------------- the ATA error log: medium or link

_ERROR_LOG = """smartctl 7.2 2020-12-30 r5155 [x86_64-linux-5.15.0-91-generic] (local build)
=== START OF INFORMATION SECTION ===
Device Model:     WDC WD40EFRX-68N32N0
Serial Number:    WD-WCC7K4HJ2R3N
=== START OF READ SMART DATA SECTION ===
SMART overall-health self-assessment test result: PASSED
ID# ATTRIBUTE_NAME          FLAG     VALUE WORST THRESH TYPE      UPDATED  WHEN_FAILED RAW_VALUE
  5 Reallocated_Sector_Ct   0x0033   200   200   140    Pre-fail  Always       -       0
199 UDMA_CRC_Error_Count    0x0032   200   200   000    Old_age   Always       -       47
SMART Error Log Version: 1
ATA Error Count: 2
Error 2 occurred at disk power-on lifetime: 22084 hours (920 days + 4 hours)
  84 41 08 48 aa 07 4b  Error: {types} at LBA = 0x0b07aa48 = 185051720
Error 1 occurred at disk power-on lifetime: 22084 hours (920 days + 4 hours)
  84 41 40 80 51 2b 46  Error: ICRC, ABRT at LBA = 0x062b5180 = 103502208
"""


def test_an_error_log_of_link_errors_is_no_disk_warning_and_names_no_bad_sector():
    report = parse_smartctl_text(_ERROR_LOG.format(types="ICRC, ABRT"), "sos_commands/ata/smartctl_-a_.dev.sdb")
    assert report.health == "passed"
    assert "logged_errors_are_link_errors" in report.flags and "udma_crc_errors:47" in report.flags
    assert report.failing_lbas == []


def test_a_media_error_in_the_log_is_a_warning_with_its_sector():
    report = parse_smartctl_text(_ERROR_LOG.format(types="UNC"), "sos_commands/ata/smartctl_-a_.dev.sdb")
    assert report.health == "warning"
    assert report.failing_lbas == [185051720]


# ---------------------------------------------------------------- evidence: the lines behind the flags


def test_flags_cite_the_smartctl_lines_they_were_read_from():
    path = Path(__file__).resolve().parents[3] / "samples/demo-sosreport/sos_commands/ata/smartctl_-a_.dev.sdc"
    lines = path.read_text().splitlines()
    report = parse_smartctl_text(path.read_text(), "sos_commands/ata/smartctl_-a_.dev.sdc")
    cited = {flag: item for item in report.evidence() for flag in item["flags"]}
    assert set(cited) == {flag.partition(":")[0] for flag in report.flags}
    for item in report.evidence():
        assert lines[item["line"] - 1].strip() == item["text"]
    assert "Reallocated_Sector_Ct" in cited["reallocated_sectors"]["text"]
    assert "Error Count" in cited["error_log_entries"]["text"]


def test_a_device_rule_cites_the_lines_of_the_flags_it_asks_about():
    from diagdisk.diagnosis.analysis import analyze
    from diagdisk.diagnosis.engine import evaluate_rules, load_rules
    sample = Path(__file__).resolve().parents[3] / "samples/sata-cable-icrc-link-downgrade-sdb"
    findings, _ = evaluate_rules(load_rules(), analyze([str(sample)], jobs=1))
    crc = [f for f in findings if f["rule"] == "DD502"]
    assert crc, [f["rule"] for f in findings]
    assert all(item["line"] > 0 and "UDMA_CRC_Error_Count" in item["text"] for item in crc[0]["evidence"])
