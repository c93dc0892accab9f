"""Differential test against sg_decode_sense (Debian package sg3-utils).

For several hundred generated valid sense buffers, fixed and descriptor format, our sense key,
ASC/ASCQ text and information field must agree with sg3_utils. Skipped only when the tool is
missing and DIAGDISK_REQUIRE_ORACLES is unset; CI sets it so a missing oracle fails loudly.
"""

import os
import random
import re
import shutil
import subprocess

import pytest

from diagdisk.decode.asc_ascq import VENDOR_SPECIFIC, table
from diagdisk.decode.sense import decode_sense, sense_key_from_name

ORACLE = shutil.which("sg_decode_sense")
if ORACLE is None:
    if os.environ.get("DIAGDISK_REQUIRE_ORACLES"):
        pytest.fail("sg_decode_sense (apt package sg3-utils) is required by DIAGDISK_REQUIRE_ORACLES",
                    pytrace=False)
    pytest.skip("sg_decode_sense not installed (apt package sg3-utils)", allow_module_level=True)

BUFFERS_PER_FORMAT = 200
# T10 withdrew these: the kernel table says "Obsolete", sg3_utils and we say what they meant, marked
# "(obs)" there and "(obsolete)" here.
OBSOLETE_CODES = {(0x20, 0x05), (0x24, 0x02), (0x24, 0x03)}


def _normalize(text):
    return re.sub(r"[^a-z0-9]", "", text.lower().replace("0x", ""))


def _pick_code(rng):
    codes = table()
    roll = rng.random()
    if roll < 0.7:
        return rng.choice(sorted(codes.exact))
    if roll < 0.85:
        entry = rng.choice(codes.ranges)
        return entry.asc, rng.randint(entry.ascq_first, entry.ascq_last)
    asc, ascq = rng.randint(0, 0xFF), rng.randint(0x80, 0xFF)
    return (asc, ascq) if rng.random() < 0.5 else (rng.randint(0x80, 0xFF), rng.randint(0, 0xFF))


def _fixed(rng):
    asc, ascq = _pick_code(rng)
    valid = rng.random() < 0.7
    buffer = bytearray(18)
    buffer[0] = (0x80 if valid else 0) | rng.choice([0x70, 0x71])
    buffer[2] = rng.randint(0, 15)
    buffer[3:7] = rng.getrandbits(32).to_bytes(4, "big")
    buffer[7] = 10
    buffer[12], buffer[13], buffer[14] = asc, ascq, rng.randint(0, 0xFF)
    return bytes(buffer)


def _descriptor(rng):
    asc, ascq = _pick_code(rng)
    header = bytes([rng.choice([0x72, 0x73]), rng.randint(0, 15), asc, ascq, 0, 0, 0])
    descriptors = b""
    if rng.random() < 0.8:
        valid = 0x80 if rng.random() < 0.8 else 0
        descriptors += bytes([0x00, 0x0A, valid, 0]) + rng.getrandbits(64).to_bytes(8, "big")
    if rng.random() < 0.3:
        descriptors += bytes([0x03, 0x02, 0, rng.randint(1, 0xFF)])
    return header + bytes([len(descriptors)]) + descriptors


def _oracle(buffer):
    completed = subprocess.run([ORACLE, *(f"{byte:02x}" for byte in buffer)], capture_output=True, text=True,
                               timeout=10, check=False)
    return completed.stdout


def _parse_oracle(output):
    lines = output.splitlines()
    key_name = re.search(r"Sense key: (.+)$", lines[0]).group(1)
    key_name = re.sub(r"\(\d+\)$", "", key_name).strip()
    asc_line = lines[1].removeprefix("Additional sense: ")
    information = None
    for line in lines[2:]:
        if "Info fld=" in line or "Information:" in line:
            if "Valid=0" not in line:
                information = int(re.findall(r"0x([0-9a-fA-F]+)", line)[-1], 16)
    return sense_key_from_name(key_name), asc_line, information


def _texts_agree(asc, ascq, ours, theirs):
    if (asc, ascq) in OBSOLETE_CODES:
        return ours.endswith(" (obsolete)") and theirs.endswith(" (obs)") and \
            _normalize(ours.removesuffix(" (obsolete)")) == _normalize(theirs.removesuffix(" (obs)"))
    if ours == VENDOR_SPECIFIC:
        return "vendor specific" in theirs.lower()
    if (asc, ascq) not in table().exact:
        # Range rows: the kernel and sg3_utils print the number differently; compare the words.
        words = ours.split("(")[0].rstrip("0123456789abcdef ")
        return _normalize(theirs).startswith(_normalize(words))
    return _normalize(ours) == _normalize(theirs)


@pytest.mark.parametrize("make", [_fixed, _descriptor], ids=["fixed", "descriptor"])
def test_agrees_with_sg_decode_sense(make):
    rng = random.Random(20261121 + (make is _descriptor))
    disagreements = []
    for _ in range(BUFFERS_PER_FORMAT):
        buffer = make(rng)
        ours = decode_sense(buffer)
        key, asc_text, information = _parse_oracle(_oracle(buffer))
        problems = []
        if key != ours.sense_key:
            problems.append(f"sense key {ours.sense_key} vs {key}")
        if not _texts_agree(ours.asc, ours.ascq, ours.description, asc_text):
            problems.append(f"text {ours.description!r} vs {asc_text!r}")
        if information != ours.information:
            problems.append(f"information {ours.information} vs {information}")
        if problems:
            disagreements.append(f"{buffer.hex(' ')}: {'; '.join(problems)}")
    assert not disagreements, "\n".join(disagreements[:20])


@pytest.mark.parametrize("asc, ascq", sorted(OBSOLETE_CODES))
def test_an_obsolete_code_shows_its_historic_meaning_as_sg3_utils_does(asc, ascq):
    buffer = bytes([0x70, 0, 0x05, 0, 0, 0, 0, 10, 0, 0, 0, 0, asc, ascq, 0, 0, 0, 0])
    ours = decode_sense(buffer).description
    _, theirs, _ = _parse_oracle(_oracle(buffer))
    assert ours != "Obsolete" and _texts_agree(asc, ascq, ours, theirs), (ours, theirs)
