"""Reports printed over several lines become one event (diagdisk/logs/stitch.py)."""

from diagdisk.logs.reader import LogReader
from diagdisk.logs.stitch import stitch


def _stitched(tmp_path, text: str) -> list[dict]:
    path = tmp_path / "messages"
    path.write_text(text, encoding="utf-8")
    return stitch(LogReader().read(path, "messages").events)


def test_unit_not_ready_takes_the_sense_sd_prints_after_it(tmp_path):
    events = _stitched(tmp_path, "\n".join([
        "[ 10.1] sd 2:0:0:0: [sdb] Unit Not Ready",
        "[ 10.1] sd 2:0:0:0: [sdb] Sense Key : Not Ready [current] ",
        "[ 10.1] sd 2:0:0:0: [sdb] Add. Sense: Logical unit not ready, initializing command required",
    ]) + "\n")
    assert [(e["kind"], e.get("detail"), e["device"], e["sense_key"], e["asc"], e["ascq"]) for e in events] \
        == [("sense", "not_ready", "sdb", 2, 0x04, 0x02)]


def test_2_6_9_unit_not_ready_takes_the_nameless_sense_lines(tmp_path):
    events = _stitched(tmp_path, "\n".join([
        "[ 10.1] sdb: Unit Not Ready, sense:",
        "[ 10.1] Current : sense key Not Ready",
        "[ 10.1] Additional sense: Logical unit not ready, manual intervention required",
    ]) + "\n")
    assert [(e["kind"], e["device"], e["sense_key"], e["asc"], e["ascq"]) for e in events] == [("sense", "sdb", 2, 0x04, 0x03)]


def test_two_sense_reports_stay_two_when_the_first_has_its_additional_sense(tmp_path):
    events = _stitched(tmp_path, "\n".join([
        "[ 10.1] sd 2:0:0:0: [sdb] Unit Not Ready",
        "[ 10.1] sd 2:0:0:0: [sdb] Sense Key : Not Ready [current] ",
        "[ 10.1] sd 2:0:0:0: [sdb] Add. Sense: Logical unit not ready, initializing command required",
        "[ 11.1] sd 2:0:0:0: [sdb] Sense Key : Not Ready [current] ",
        "[ 11.1] sd 2:0:0:0: [sdb] Add. Sense: Medium not present",
    ]) + "\n")
    assert [(e["kind"], e["asc"]) for e in events] == [("sense", 0x04), ("sense", 0x3A)]
