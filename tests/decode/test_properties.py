"""Any input gives a decode or a clean DecodeError, never another exception."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from diagdisk.decode import DecodeError, parse_hex
from diagdisk.decode.asc_ascq import describe, lookup_description
from diagdisk.decode.ata import decode_ata_taskfile
from diagdisk.decode.cdb import decode_cdb, decode_cdb_text
from diagdisk.decode.result import decode_result
from diagdisk.decode.sense import decode_sense, sense_key_from_name

SENSE_LIKE = st.one_of(
    st.binary(max_size=64),
    st.builds(lambda code, rest: bytes([code]) + rest,
              st.sampled_from([0x70, 0x71, 0x72, 0x73, 0xF0, 0xF2]), st.binary(max_size=80)),
)


def _decodes_or_refuses(function, value):
    try:
        decoded = function(value)
    except DecodeError as error:
        assert str(error)
        return None
    if hasattr(decoded, "to_dict"):
        json.dumps(decoded.to_dict(), default=str)
    return decoded


@settings(max_examples=400)
@given(SENSE_LIKE)
def test_sense_bytes(data):
    _decodes_or_refuses(decode_sense, data)


@settings(max_examples=300)
@given(st.binary(max_size=40))
def test_cdb_bytes(data):
    _decodes_or_refuses(decode_cdb, data)


@given(st.text(max_size=80))
def test_text_inputs(text):
    _decodes_or_refuses(parse_hex, text)
    _decodes_or_refuses(decode_cdb_text, text)
    _decodes_or_refuses(decode_ata_taskfile, text)
    _decodes_or_refuses(decode_result, text)
    lookup_description(text)
    sense_key_from_name(text)


@given(st.from_regex(r"(cmd|res) ([0-9a-f]{2}/)([0-9a-f]{2}:){4}[0-9a-f]{2}/([0-9a-f]{2}:){4}"
                     r"[0-9a-f]{2}/[0-9a-f]{2}( tag \d{1,3})?( Emask 0x[0-9a-f]{1,4})?",
                     fullmatch=True))
def test_well_formed_taskfiles_always_decode(text):
    taskfile = decode_ata_taskfile(text)
    assert 0 <= taskfile.lba < 1 << 48


@given(st.integers(0, 255), st.integers(0, 255))
def test_describe_is_total(asc, ascq):
    description = describe(asc, ascq)
    assert description is None or description.strip()
