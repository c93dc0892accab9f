"""Links between a port and its disk that only the order of a log's lines shows."""

from diagdisk.diagnosis.analysis import analyze


def _events_of(tmp_path, text: str) -> list[dict]:
    log = tmp_path / "dmesg"
    log.write_text(text)
    analysis = analyze([str(log)])
    return [e for e in analysis.events.to_dict("records")] if hasattr(analysis.events, "to_dict") else analysis.events


def _devices_of_port(tmp_path, text: str, port: str) -> set:
    return {e.get("device") for e in _events_of(tmp_path, text) if e.get("ata_port") == port} - {None}


EH_THEN_END_REQUEST = """\
[263652.321800] ata3.00: exception Emask 0x0 SAct 0x0 SErr 0x0 action 0x0
[263652.321912] ata3.00: status: {DRDY ERR}
[263652.321931] ata3.00: error: {UNC}
[263655.430678] end_request: I/O error, dev sdb, sector 837838971
[263655.430700] ata3: EH complete
"""


def test_the_disk_completed_inside_a_port_s_error_handling_is_that_port_s(tmp_path):
    assert _devices_of_port(tmp_path, EH_THEN_END_REQUEST, "ata3") == {"sdb"}


def test_two_disks_completed_inside_one_port_s_error_handling_tie_it_to_neither(tmp_path):
    text = EH_THEN_END_REQUEST.replace("[263655.430700] ata3: EH complete\n",
                                       "[263655.430690] end_request: I/O error, dev sdc, sector 1\n"
                                       "[263655.430700] ata3: EH complete\n")
    assert _devices_of_port(tmp_path, text, "ata3") == set()


def test_old_libata_s_translated_sense_opens_the_port_s_block(tmp_path):
    text = """\
Jan 18 23:46:30 h kernel: ata8: translated ATA stat/err 0x51/40 to SCSI SK/ASC/ASCQ 0x3/11/04
Jan 18 23:46:30 h kernel: ata8: status=0x51 { DriveReady SeekComplete Error }
Jan 18 23:46:30 h kernel: ata8: error=0x40 { UncorrectableError }
Jan 18 23:46:37 h kernel: sd 7:0:0:0: SCSI error: return code = 0x8000002
Jan 18 23:46:37 h kernel: sdg: Current: sense key: Medium Error
Jan 18 23:46:37 h kernel: end_request: I/O error, dev sdg, sector 12543
"""
    events = _events_of(tmp_path, text)
    assert {e.get("hctl") for e in events if e.get("ata_port") == "ata8"} == {"7:0:0:0"}
