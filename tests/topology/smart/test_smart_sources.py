"""Several smartctl files for one disk, as current sos stores them (plugins ata.py and nvme.py:
`smartctl -a DEV`, `smartctl -a DEV -j`, `smartctl -l scterc DEV`, `smartctl -l scterc DEV -j`):
which are SMART sources, and which report speaks for the disk."""

import json
import shutil
from pathlib import Path

from diagdisk.diagnosis.analysis import analyze
from diagdisk.topology.smart import best_report, options_from_source, parse_smartctl_json, parse_smartctl_text, run_scope
from diagdisk.inputs.sources import classify_in_tree

DEMO = Path(__file__).resolve().parents[3] / "samples" / "demo-sosreport"
ATA = "sos_commands/ata"

# `smartctl -l scterc /dev/sdc` of smartctl 7.1 (ataprint.cpp ataPrintSCTErrorRecoveryControl)
SCTERC_TEXT = """\
smartctl 7.1 2020-04-05 r5049 [x86_64-linux-4.18.0-372.9.1.el8.x86_64] (local build)
Copyright (C) 2002-19, Bruce Allen, Christian Franke, www.smartmontools.org

SCT Error Recovery Control:
           Read:     70 (7.0 seconds)
          Write:     70 (7.0 seconds)

"""

_SMARTCTL = {"version": [7, 1], "svn_revision": "5049",
             "platform_info": "x86_64-linux-4.18.0-372.9.1.el8.x86_64", "build_info": "(local build)"}

# The demo's sdb and sdc as `smartctl -a -j` prints them: the same counters as their text files.
# (id, name, flags value, prefailure, value, worst, thresh, when_failed, raw)
_ATTRIBUTES = [
    (1, "Raw_Read_Error_Rate", 15, True, 77, 63, 44, "", 52416712),
    (5, "Reallocated_Sector_Ct", 51, True, 100, 100, 10, "", None),
    (9, "Power_On_Hours", 50, False, 52, 52, 0, "", 42371),
    (187, "Reported_Uncorrect", 50, False, None, None, 0, "", None),
    (188, "Command_Timeout", 50, False, 100, 100, 0, "", 0),
    (197, "Current_Pending_Sector", 18, False, 100, 100, 0, "", None),
    (198, "Offline_Uncorrectable", 16, False, 100, 100, 0, "", None),
    (199, "UDMA_CRC_Error_Count", 62, False, 200, 200, 0, "", 0),
]


def smartctl_a_json(device: str, serial: str, wwn_id: int, bad: int, pending: int, errors: list[int]) -> str:
    table = []
    for ident, name, flags, prefail, value, worst, thresh, when_failed, raw in _ATTRIBUTES:
        if raw is None:
            raw = {5: bad, 187: len(errors), 197: pending, 198: pending}[ident]
        if value is None:
            value = worst = 100 - len(errors)
        table.append({"id": ident, "name": name, "value": value, "worst": worst, "thresh": thresh,
                      "when_failed": when_failed,
                      "flags": {"value": flags, "string": "", "prefailure": prefail, "updated_online": True,
                                "performance": False, "error_rate": False, "event_count": False,
                                "auto_keep": False},
                      "raw": {"value": raw, "string": str(raw)}})
    error_table = [{"error_number": number, "lifetime_hours": 42377,
                    "error_description": f"Error: UNC at LBA = 0x{lba:08x} = {lba}"}
                   for number, lba in zip(range(len(errors), 0, -1), errors)]
    return json.dumps({
        "json_format_version": [1, 0],
        "smartctl": {**_SMARTCTL, "argv": ["smartctl", "-a", f"/dev/{device}", "-j"],
                     "exit_status": 64 if errors else 0},
        "device": {"name": f"/dev/{device}", "info_name": f"/dev/{device} [SAT]", "type": "sat", "protocol": "ATA"},
        "model_family": "Seagate Constellation ES.3",
        "model_name": "ST4000NM0033-9ZM170",
        "serial_number": serial,
        "wwn": {"naa": 5, "oui": 3152, "id": wwn_id},
        "firmware_version": "SN06",
        "smart_status": {"passed": True},
        "ata_smart_attributes": {"revision": 10, "table": table},
        "ata_smart_error_log": {"summary": {"revision": 1, "count": len(errors), "logged_count": len(errors),
                                            "table": error_table}},
        "ata_smart_self_test_log": {"standard": {"revision": 1, "count": 0}},
    }, indent=2)


def scterc_json(device: str) -> str:
    return json.dumps({
        "json_format_version": [1, 0],
        "smartctl": {**_SMARTCTL, "argv": ["smartctl", "-l", "scterc", f"/dev/{device}", "-j"], "exit_status": 0},
        "device": {"name": f"/dev/{device}", "info_name": f"/dev/{device} [SAT]", "type": "sat", "protocol": "ATA"},
        "ata_sct_erc": {"read": {"enabled": True, "deciseconds": 70}, "write": {"enabled": True, "deciseconds": 70}},
    }, indent=2)


def demo_with_every_smartctl_file(tmp_path: Path) -> Path:
    tree = tmp_path / "sosreport"
    shutil.copytree(DEMO, tree)
    ata = tree / ATA
    (ata / "smartctl_-a_.dev.sdb_-j").write_text(smartctl_a_json("sdb", "Z1Z3K3CD", 0x0795A1A07, 0, 0, []))
    (ata / "smartctl_-a_.dev.sdc_-j").write_text(
        smartctl_a_json("sdc", "Z1Z3K4LM", 0x0795A1B2C, 8, 24, [247101568, 247101568, 247095296]))
    for device in ("sdb", "sdc"):
        (ata / f"smartctl_-l_scterc_.dev.{device}").write_text(SCTERC_TEXT)
        (ata / f"smartctl_-l_scterc_.dev.{device}_-j").write_text(scterc_json(device))
    return tree


def test_scterc_and_scan_outputs_are_not_smart_sources():
    assert classify_in_tree(f"{ATA}/smartctl_-l_scterc_.dev.sda") is None
    assert classify_in_tree(f"{ATA}/smartctl_-l_scterc_.dev.sda_-j") is None
    assert classify_in_tree("sos_commands/smart/smartctl_--scan") is None
    assert classify_in_tree(f"{ATA}/smartctl_-a_.dev.sda") == "smartctl_text"
    assert classify_in_tree(f"{ATA}/smartctl_-a_.dev.sda_-j") == "smartctl_json"
    assert classify_in_tree("sos_commands/nvme/smartctl_--all_.dev.nvme0n1_-j") == "smartctl_json"


def test_every_smartctl_file_of_sos_keeps_the_warning_of_the_health_report(tmp_path):
    analysis = analyze([str(demo_with_every_smartctl_file(tmp_path))], jobs=1)
    names = {s.name: s.format for s in analysis.sources}
    assert not [name for name in names if "scterc" in name]
    assert names[f"{ATA}/smartctl_-a_.dev.sdc_-j"] == "smartctl_json"
    devices = {d.name: d for d in analysis.topology.devices.values()}
    assert devices["sdc"].smart["health"] == "warning"
    assert devices["sdc"].smart["flags"] == ["reallocated_sectors:8", "reported_uncorrect:3", "pending_sectors:24",
                                             "offline_uncorrectable:24", "error_log_entries:3"]
    assert devices["sdb"].smart["health"] == "passed"
    assert (devices["sdc"].serial, devices["sdc"].wwn) == ("Z1Z3K4LM", "0x5000c500795a1b2c")
    # no source left unread or unparsed (dmesg's events that messages also holds are only noted)
    assert all("counted once" in w for s in analysis.sources for w in s.warnings)


def test_sos_json_runs_are_read_as_json(tmp_path):
    analysis = analyze([str(demo_with_every_smartctl_file(tmp_path))], jobs=1)
    read_as_json = {s.source for s in analysis.smart if s.from_json}
    assert read_as_json == {f"{ATA}/smartctl_-a_.dev.sdb_-j", f"{ATA}/smartctl_-a_.dev.sdc_-j"}
    assert all(s.health != "unknown" for s in analysis.smart)


# smartctl before 7.0 does not know -j: it prints its banner and a usage error (smartctl.cpp)
OLD_SMARTCTL_J = """\
smartctl 6.6 2016-05-31 r4324 [x86_64-linux-4.15.0-213-generic] (local build)
Copyright (C) 2002-16, Bruce Allen, Christian Franke, www.smartmontools.org

=======> UNRECOGNIZED OPTION: j

Use smartctl -h to get a usage summary

"""


def test_a_json_run_of_a_smartctl_without_json_is_no_damage_and_hides_nothing(tmp_path):
    tree = tmp_path / "sosreport"
    shutil.copytree(DEMO, tree)
    (tree / ATA / "smartctl_-a_.dev.sdc_-j").write_text(OLD_SMARTCTL_J)
    analysis = analyze([str(tree)], jobs=1)
    source = next(s for s in analysis.sources if s.name.endswith("sdc_-j"))
    assert (source.format, source.warnings) == ("smartctl_text", [])
    assert analysis.complete
    sdc = next(d for d in analysis.topology.devices.values() if d.name == "sdc")
    assert sdc.smart["health"] == "warning"


def _text(device="sdc", options="-a", health="PASSED", pending=24):
    text = (f"Device Model:     ST4000NM0033-9ZM170\nSerial Number:    Z1Z3K4LM\n"
            f"SMART overall-health self-assessment test result: {health}\n"
            f"197 Current_Pending_Sector  0x0012   100   100   000    Old_age   Always       -       {pending}\n")
    return parse_smartctl_text(text, f"{ATA}/smartctl_{options}_.dev.{device}")


def test_a_report_that_knows_less_never_replaces_one_that_knows_more():
    health_report = _text()
    assert health_report.health == "warning"
    scterc = parse_smartctl_json(scterc_json("sdc"), f"{ATA}/smartctl_-l_scterc_.dev.sdc_-j")
    scterc_text = parse_smartctl_text(SCTERC_TEXT, f"{ATA}/smartctl_-l_scterc_.dev.sdc")
    identity_only = parse_smartctl_text("Device Model:     ST4000NM0033-9ZM170\nSerial Number:    Z1Z3K4LM\n",
                                        f"{ATA}/smartctl_-i_.dev.sdc")
    for other in (scterc, scterc_text, identity_only):
        assert other.health == "unknown"
        assert best_report([health_report, other]) is health_report
        assert best_report([other, health_report]) is health_report


def test_the_most_complete_health_report_speaks_for_the_disk():
    text_a = _text(pending=24)
    json_a = parse_smartctl_json(smartctl_a_json("sdc", "Z1Z3K4LM", 0x0795A1B2C, 8, 32, [247101568]),
                                 f"{ATA}/smartctl_-a_.dev.sdc_-j")
    text_x = _text(options="-x", pending=40)
    health_only = _text(options="-H", health="FAILED")
    assert best_report([text_a, json_a]) is json_a                 # JSON over text of the same run
    assert best_report([json_a, text_x]) is text_x                 # -x over -a
    assert best_report([health_only, text_a]) is text_a            # -a over -H
    assert best_report([text_a, _text(pending=0)]) is text_a       # equals: the worse health


def test_options_and_scope_of_smartctl_runs():
    assert options_from_source(f"{ATA}/smartctl_-l_scterc_.dev.sda_-j") == ["-l", "scterc", "-j"]
    assert options_from_source("smartctl/sda.json") == []
    assert options_from_source("tests/smart-healthy-wd5002abys-gsc.smartctl_-x_.dev.sda") == ["-x"]
    assert [run_scope(o) for o in (["-x"], ["--all", "-j"], ["-H"], ["--log=scterc"], ["-i"], ["-j"])] == [
        3, 2, 1, 0, 0, 1]
    collector = parse_smartctl_json(json.dumps({"smartctl": {"argv": ["smartctl", "--json=c", "-x", "/dev/sda"]},
                                                "device": {"name": "/dev/sda"}}), "smartctl/sda.json")
    assert collector.options == ["--json=c", "-x"] and collector.from_json
