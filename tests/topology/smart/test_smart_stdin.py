"""smartctl text pasted or piped on stdin names its disk as smartctl does (the device on the
command line that printed it) or by its serial number, never as `<stdin>`."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from diagdisk.cli.main import main
from diagdisk.topology.smart import parse_smartctl_text

SDC = Path(__file__).resolve().parents[3] / "samples" / "demo-sosreport" / "sos_commands" / "ata" / "smartctl_-a_.dev.sdc"


def _report(text: str) -> tuple[str, dict]:
    shown = CliRunner().invoke(main, ["analyze", "-"], input=text).stdout
    report = json.loads(CliRunner().invoke(main, ["analyze", "-", "--format", "json"], input=text).stdout)["reports"][0]
    return shown, report


def test_smartctl_text_on_stdin_is_named_by_its_serial():
    shown, report = _report(SDC.read_text())
    assert [d["name"] for d in report["devices"]] == ["Z1Z3K4LM"]
    assert report["coverage"]["smart_devices"] == ["Z1Z3K4LM"]
    assert "SMART data for Z1Z3K4LM" in shown and "<stdin>  " not in shown


def test_smartctl_text_after_its_command_line_is_named_by_the_device_it_was_run_on():
    shown, report = _report("root@db1:~# smartctl -a /dev/sdc\n" + SDC.read_text())
    assert [d["name"] for d in report["devices"]] == ["sdc"]
    assert report["coverage"]["smart_devices"] == ["sdc"] and "SMART data for sdc" in shown


def test_a_file_name_that_names_the_disk_still_wins():
    assert parse_smartctl_text("# smartctl -a /dev/sdz\n" + SDC.read_text(), "sos_commands/ata/smartctl_-a_.dev.sdc").device == "sdc"
    assert parse_smartctl_text("Smartctl open device: /dev/sdq failed: No such device\n", "<stdin>").device == "sdq"
