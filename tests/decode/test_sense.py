import json

import pytest

from diagdisk.decode import DecodeError, parse_hex
from diagdisk.decode.asc_ascq import describe, table
from diagdisk.decode.sense import SENSE_KEY_NAMES, decode_sense
from diagdisk.errors import DiagdiskError

JSON_KEYS = {"format", "current", "sense_key", "sense_key_name", "asc", "ascq", "asc_ascq",
             "description", "information", "fru_code"}


def test_table_entry_count_matches_generated_source():
    # 756 SENSE_CODE lines in the pinned sense_codes.h plus 6 ranges from constants.c.
    codes = table()
    assert len(codes.exact) == 756
    assert len(codes.ranges) == 6
    assert "2555693dd85c7a726eed570736bf6e1c4c7116ed" in codes.source


def test_vendor_specific_and_unassigned():
    assert describe(0x80, 0x00) == "Vendor specific"
    assert describe(0x11, 0x80) == "Vendor specific"
    assert describe(0x5D, 0xFF) == "Failure prediction threshold exceeded (false)"
    assert describe(0x12, 0x05) is None


def test_sense_key_names_cover_all_keys():
    assert sorted(SENSE_KEY_NAMES) == list(range(16))
    assert SENSE_KEY_NAMES[0xB] == "ABORTED COMMAND"


def test_fixed_deferred_with_valid_information_and_retry_count():
    sense = decode_sense(parse_hex("f1 00 03 06 1d 3a 0d 0a 00 00 00 00 0c 02 0c 80 00 05"))
    data = sense.to_dict()
    assert JSON_KEYS <= set(data)
    json.dumps(data)
    assert (data["format"], data["current"]) == ("fixed", False)
    assert (data["asc_ascq"], data["information"], data["fru_code"]) == ("0C/02", 0x061D3A0D, 0x0C)
    assert data["sense_key_specific"] == {"kind": "actual retry count", "retry_count": 5}


def test_fixed_progress_and_field_pointer_and_flags():
    progress = decode_sense(parse_hex("70 00 02 00 00 00 00 0a 00 00 00 00 04 04 00 80 40 00"))
    assert progress.sense_key_specific["progress_percent"] == 25.0
    pointer = decode_sense(parse_hex("70 00 05 00 00 00 00 0a 00 00 00 00 24 00 00 cf 00 02"))
    assert pointer.sense_key_specific == {"kind": "field pointer", "in": "cdb", "byte": 2, "bit": 7}
    flags = decode_sense(parse_hex("70 00 e8 00 00 00 00 0a 00 00 00 00 00 00 00 00 00 00"))
    assert (flags.filemark, flags.eom, flags.ili, flags.sense_key) == (True, True, True, 8)


def test_descriptor_with_all_common_descriptors():
    buffer = parse_hex(
        "72 04 44 00 00 00 00 32"
        " 00 0a 80 00 00 00 00 00 00 00 12 34"     # information
        " 01 0a 00 00 00 00 00 00 00 00 00 07"     # command-specific
        " 02 06 00 00 80 00 03 00"                 # sense key specific: retry count 3
        " 03 02 00 2a"                             # FRU
        " 09 0c 01 40 00 08 00 01 00 02 00 03 40 51"  # ATA status return
    )
    sense = decode_sense(buffer)
    assert (sense.information, sense.command_specific, sense.fru_code) == (0x1234, 7, 0x2A)
    assert sense.sense_key_specific == {"kind": "actual retry count", "retry_count": 3}
    assert sense.ata_status_return["error_bits"] == ["UNC"]
    assert sense.ata_status_return["status_bits"] == ["DRDY", "DSC", "ERR"]
    assert sense.ata_status_return["lba"] == 0x030201
    assert [d["type"] for d in sense.descriptors] == [0, 1, 2, 3, 9]
    assert not sense.truncated


def test_truncated_fixed_decodes_what_is_present():
    sense = decode_sense(parse_hex("70 00 03 00 00 00 00 0a 00 00 00 00 11"))
    assert (sense.sense_key, sense.asc, sense.ascq, sense.description) == (3, 0x11, None, None)
    assert sense.missing == ["ascq", "fru_code", "sense_key_specific"]
    assert sense.truncated


def test_truncated_descriptor_names_the_cut_descriptor():
    sense = decode_sense(parse_hex("72 03 11 00 00 00 00 0c 00 0a 80 00 00 00"))
    assert sense.asc_ascq == "11/00"
    assert sense.information is None
    assert any("descriptor type 0x00" in item for item in sense.missing)


def test_short_additional_length_is_absent_not_missing():
    sense = decode_sense(parse_hex("70 00 06 00 00 00 00 06 00 00 00 00 29 00"))
    assert (sense.asc_ascq, sense.fru_code, sense.missing) == ("29/00", None, [])


@pytest.mark.parametrize("hex_text,message", [
    ("700", "odd number of hex digits"),
    ("70 0g", "not hexadecimal"),
    ("", "no hex bytes"),
    ("12 00 03", "unknown sense response code 0x12"),
    ("70 00", "too short"),
    ("72", "too short"),
])
def test_malformed_input_raises_decode_error(hex_text, message):
    with pytest.raises(DecodeError, match=message) as caught:
        decode_sense(parse_hex(hex_text))
    assert isinstance(caught.value, DiagdiskError)


def test_parse_hex_accepts_common_spellings():
    assert parse_hex("0x70,0x00 03h") == b"\x70\x00\x03"
    assert parse_hex(["7000", "03"]) == b"\x70\x00\x03"
