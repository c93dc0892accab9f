"""Absurd numbers never crash: every number read from a log is bounded where it is parsed; a line
holding one out of range is a warning on its source, and the good lines of the log are kept."""

import pytest

from diagdisk.errors import NumberOutOfRange, bounded
from diagdisk.logs.framing import frame_line
from diagdisk.logs.grammar import CONVERTERS
from diagdisk.logs.reader import LogReader
from diagdisk.logs.source import read_log_source

GOOD_SENSE = "sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]"
GOOD_IO = "blk_update_request: I/O error, dev sdb, sector {} op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0"


def test_bounded_takes_what_fits_and_names_what_does_not():
    assert bounded("4294967295", 1 << 32, "tag") == 2**32 - 1
    assert bounded("000000000000000000000000007", 1 << 32, "tag") == 7
    assert bounded("0xffffffff", 1 << 32, "result", 16) == 2**32 - 1
    for text, base in (("4294967296", 10), ("9" * 5000, 10), ("0x100000000", 16), ("f" * 4000, 16)):
        with pytest.raises(NumberOutOfRange, match="tag"):
            bounded(text, 1 << 32, "tag", base)
    with pytest.raises(NumberOutOfRange) as raised:
        bounded("9" * 5000, 1 << 63, "sector")
    assert len(str(raised.value)) < 60  # the message shows the start of the number only


@pytest.mark.parametrize("terminal, text", [
    ("HCTL", "99999999999:0:4294967296:18446744073709551617"), ("HCTL", "0:0:0:18446744073709551616"),
    ("SECTOR", str(2**80)), ("SECTOR", str(2**63)), ("SECTOR__HEX", "0x" + "f" * 17), ("TAG", "4294967296"),
    ("LUN", str(2**64)), ("QID", "9" * 5000), ("COUNT", "99999999999999999999"), ("MAJMIN", "99999999999:1"),
    ("HOSTNUM", "4294967296"), ("SCSIHOST", "scsi4294967296"), ("RESULT__HEX", "0x" + "f" * 20),
])
def test_converters_refuse_numbers_their_field_cannot_hold(terminal, text):
    with pytest.raises(NumberOutOfRange):
        CONVERTERS[terminal](text)


def test_converters_keep_the_largest_real_values():
    assert CONVERTERS["HCTL"]("4294967295:4294967295:4294967295:18446744073709551615")["lun"] == 2**64 - 1
    assert CONVERTERS["SECTOR"](str(2**63 - 1)) == {"sector": 2**63 - 1}


def test_framing_reads_an_impossible_header_time_as_no_time_and_says_so():
    framed = frame_line("Mar 99 99:99:99 host kernel: " + GOOD_SENSE)
    assert framed.header == "syslog" and framed.month_day_time is None
    assert framed.bad_header == "syslog stamp Mar 99 99:99:99" and framed.message == GOOD_SENSE
    framed = frame_line("[12345678901234567890.123456] " + GOOD_SENSE)
    assert framed.header == "dmesg" and framed.uptime is None and "uptime stamp" in framed.bad_header
    framed = frame_line("6,1234," + "9" * 30 + ",-;" + GOOD_SENSE)
    assert framed.header == "kmsg" and framed.uptime is None and "kmsg time" in framed.bad_header
    assert frame_line("Mar  3 10:00:00 host kernel: last message repeated " + "9" * 5000 + " times").repeat is None
    assert frame_line("Mar  3 23:59:60 host kernel: x").month_day_time == (3, 3, "23:59:60", "")  # a leap second


LOG = "\n".join([
    "Mar  3 10:00:00 host kernel: " + GOOD_SENSE,
    "Mar  3 10:00:01 host kernel: " + GOOD_IO.format(2**80),
    "Mar  3 10:00:02 host kernel: sd 99999999999:0:4294967296:18446744073709551617: [sdc] tag#3 Sense Key : Medium Error [current]",
    "Mar 99 99:99:99 host kernel: " + GOOD_IO.format(12345),
    "Mar  3 10:00:03 host kernel: " + GOOD_IO.format(12346),
]) + "\n"


@pytest.mark.parametrize("use_plans", [True, False])
def test_a_log_with_absurd_numbers_keeps_its_good_lines_and_warns(tmp_path, use_plans):
    path = tmp_path / "messages"
    # the good lines many times over, so that plans are learnt and then meet the absurd lines
    path.write_text(LOG * 30)
    reader = LogReader(use_plans=use_plans)
    result = read_log_source(path, "messages", None, reader=reader)
    assert result.read.out_of_range == 90
    assert result.read.warnings[:3] == [
        f"messages: line 2: sector {str(2**80)[:24]}... out of range; line not read",
        "messages: line 3: H:C:T:L host 99999999999 out of range; line not read",
        "messages: line 4: syslog stamp Mar 99 99:99:99 is out of range; read without a time"]
    assert result.read.warnings[-1] == "messages: 85 more lines with a number out of range"
    assert result.events == 90  # lines 1, 4 (without a time) and 5 of each copy
    sectors = sorted(s for record in result.records for s in record.get("_sectors") or ())
    assert sectors == [12345, 12346]


def test_an_uptime_of_twenty_digits_is_read_without_a_time(tmp_path):
    path = tmp_path / "dmesg"
    path.write_text("[    1.000000] " + GOOD_SENSE + "\n[12345678901234567890.123456] " + GOOD_SENSE + "\n"
                    "[    2.000000] " + GOOD_IO.format(7) + "\n")
    result = read_log_source(path, "dmesg", None)
    assert result.events == 3
    assert result.read.warnings == ["dmesg: line 2: uptime stamp [12345678901234567890.123...] is out of range; "
                                    "read without a time"]
