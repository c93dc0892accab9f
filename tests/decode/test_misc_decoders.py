import pytest

from diagdisk.decode import DecodeError, parse_hex
from diagdisk.decode.cdb import decode_cdb
from diagdisk.decode.nvme import critical_warning_names, decode_nvme_status, nvme_status_name
from diagdisk.decode.result import decode_result


@pytest.mark.parametrize("hex_text,name,lba,length", [
    ("08 01 02 03 00 00", "READ(6)", 0x010203, 256),
    ("a8 00 00 00 10 00 00 00 00 20 00 00", "READ(12)", 0x1000, 0x20),
    ("35 00 00 00 00 00 00 00 00 00", "SYNCHRONIZE CACHE(10)", 0, 0),
    ("2f 00 00 00 00 64 00 00 08 00", "VERIFY(10)", 100, 8),
    ("00 00 00 00 00 00", "TEST UNIT READY", None, None),
    ("12 00 00 00 24 00", "INQUIRY", None, None),
    ("42 00 00 00 00 00 00 00 18 00", "UNMAP", None, None),
    ("9e 10 00 00 00 00 00 00 00 00 00 00 00 20 00 00", "READ CAPACITY(16)", None, None),
    ("7f 00 00 00 00 00 00 18 00 0b 00 00 00 00 00 00 00 00 00 40"
     " 00 00 00 00 00 00 00 00 00 00 00 10", "WRITE(32)", 0x40, 0x10),
    ("c5 00", "VENDOR SPECIFIC", None, None),
])
def test_cdb_table(hex_text, name, lba, length):
    cdb = decode_cdb(parse_hex(hex_text))
    assert (cdb.name, cdb.lba, cdb.length) == (name, lba, length)


def test_truncated_cdb_reports_missing_fields():
    cdb = decode_cdb(parse_hex("28 00 00 00"))
    assert (cdb.name, cdb.lba, cdb.missing) == ("READ(10)", None, ["lba", "length"])
    with pytest.raises(DecodeError):
        decode_cdb(b"")


def test_nvme_names():
    assert nvme_status_name(0x2, 0x81) == "Unrecovered Read Error"
    assert nvme_status_name(0x0, 0x04) == "Data Transfer Error"
    assert nvme_status_name(0x7, 0x01) == "Vendor Specific"
    assert nvme_status_name(0x5, 0x01) is None
    status = decode_nvme_status(0x4281)
    assert (status["sct"], status["sc"], status["dnr"], status["name"]) == (
        2, 0x81, True, "Unrecovered Read Error")
    assert critical_warning_names(0x05) == ["available_spare_below_threshold",
                                            "reliability_degraded"]
    assert critical_warning_names(0) == []


@pytest.mark.parametrize("bad", ["zz", "hostbyte=DID_NOPE", "123456789", -1, 1 << 32, None])
def test_bad_results_raise_decode_error(bad):
    with pytest.raises(DecodeError):
        decode_result(bad)
