"""`decode nvme`, `decode asc` and what `decode line` prints: codes in hex with their meaning, fields
in one stable order."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from diagdisk.cli.decode import decode
from diagdisk.decode.nvme import STATUS_CODE_TYPES, STATUS_NAMES
from diagdisk.logs.events import EVENT_FIELDS


def run(*args, stdin=None):
    return CliRunner().invoke(decode, list(args), input=stdin)


# ---------------------------------------------------------------- decode nvme

@pytest.mark.parametrize("pasted", [
    "sct 0x2 / sc 0x81",           # the kernel's nvme_log_error
    "(sct 0x2 / sc 0x81) DNR",     # with the bits it prints after them
    "sct=2 sc=0x81", "2/81", "SCT 2h SC 81h",
    "0x4281", "status: 0x281",     # the Status Field, DNR set in the first
])
def test_decode_nvme_names_the_code_type_and_the_code(pasted):
    result = run("nvme", pasted)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("SCT 0x2 Media and Data Integrity Errors / SC 0x81 Unrecovered Read Error")
    assert ("DNR (do not retry)" in result.output) == ("DNR" in pasted or pasted == "0x4281")


def test_decode_nvme_json_and_every_named_status():
    decoded = json.loads(run("nvme", "--format", "json", "0x6002").output)
    assert decoded == {"sct": 0, "sc": 2, "sct_name": "Generic Command Status", "name": "Invalid Field in Command",
                       "crd": 0, "more": True, "dnr": True}
    lines = "".join(f"sct 0x{sct:x} / sc 0x{sc:x}\n" for sct, sc in sorted(STATUS_NAMES))
    shown = run("nvme", "-", stdin=lines).output.splitlines()
    assert shown == [f"SCT 0x{sct:X} {STATUS_CODE_TYPES[sct]} / SC 0x{sc:02X} {STATUS_NAMES[sct, sc]}"
                     for sct, sc in sorted(STATUS_NAMES)]
    assert run("nvme", "sct 0x0 / sc 0x7f").output.strip().endswith("SC 0x7F not assigned")


@pytest.mark.parametrize("bad", ["zzz", "sct 9 / sc 1", "0x12345", "sct 0x2 / sc 0x81 maybe"])
def test_decode_nvme_refuses_what_is_no_status(bad):
    result = run("nvme", bad)
    assert result.exit_code == 2 and "not an NVMe status" in result.output


# ---------------------------------------------------------------- decode asc

@pytest.mark.parametrize("pasted", ["11 04", "11/04", "0x11 0x04", "11h/04h", "asc=0x11 ascq=0x04",
                                    "Add. Sense: Unrecovered read error - auto reallocate failed"])
def test_decode_asc_takes_the_codes_or_the_kernel_s_text(pasted):
    result = run("asc", pasted)
    assert result.exit_code == 0
    assert result.output == "11/04: Unrecovered read error - auto reallocate failed\n"


def test_decode_asc_shows_an_obsolete_code_s_historic_meaning():
    assert run("asc", "20", "05").output == "20/05: Write type operation while in read capable state (obsolete)\n"
    decoded = json.loads(run("asc", "--format", "json", "24/03").output)
    assert decoded == {"asc": 0x24, "ascq": 3, "asc_ascq": "24/03", "obsolete": True, "vendor_specific": False,
                       "text": "Invalid cdb field while in implicit block model (obsolete)"}
    assert run("asc", "90 01").output == "90/01: Vendor specific\n"
    assert json.loads(run("asc", "--format", "json", "90 01").output)["vendor_specific"] is True
    bad = run("asc", "no such sense")
    assert bad.exit_code == 2 and "not an ASC/ASCQ" in bad.output


# ---------------------------------------------------------------- decode line

NVME_LINE = "nvme0n1: I/O Cmd(0x2) @ LBA 1953520, 8 blocks, I/O Error (sct 0x2 / sc 0x81) DNR"


def test_decode_line_shows_codes_in_hex_with_their_meaning():
    assert run("line", NVME_LINE).output == (
        'kind=nvme_error device=nvme0n1 opcode=0x2 sector=1953520 nvme_status="I/O Error" '
        "sct=0x2 (Media and Data Integrity Errors) sc=0x81 (Unrecovered Read Error)\n")
    sense = run("line", "sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]").output
    assert "sense_key=0x3 (MEDIUM ERROR)" in sense and "raw=" not in sense
    detail = run("line", "sd 2:0:1:0: [sdb] tag#3 Add. Sense: Unrecovered read error - auto reallocate failed").output
    assert "asc_ascq=11/04 (Unrecovered read error - auto reallocate failed)" in detail


def test_decode_line_prints_fields_in_the_declared_order():
    order = ["kind", *(name for name in EVENT_FIELDS if name != "kind")]
    lines = [NVME_LINE, "sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]",
             "ata2.00: exception Emask 0x0 SAct 0x40000 SErr 0x0 action 0x0",
             "blk_update_request: critical medium error, dev sdb, sector 246758568",
             "nvme nvme0: I/O 123 QID 4 timeout, aborting"]
    for line in lines:
        keys = [pair.split("=", 1)[0] for pair in run("line", line).output.split() if "=" in pair
                and pair.split("=", 1)[0].isidentifier()]
        known = [key if key != "asc_ascq" else "asc" for key in keys]
        assert known == sorted(known, key=order.index), line
        (event,) = json.loads(run("line", "--format", "json", line).output)
        assert list(event) == sorted(event, key=lambda key: order.index(key) if key in order else len(order))
