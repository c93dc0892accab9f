"""Property tests: any text or bytes gives a result or a clean refusal, never another exception.

Random text rarely gets past a grammar's first token, so the strategies start from real inputs (the
grammars' example lines, the samples' command outputs, smartctl fixtures) and mutate them: cut,
splice, duplicate, insert odd characters, and replace numbers with absurd ones (2^80, negative,
hex with 30 digits). Inputs that once broke a parser are pinned with @example.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from diagdisk.topology import tables as inventory
from diagdisk.inputs.chunks import iter_chunks
from diagdisk.decode import DecodeError
from diagdisk.decode.asc_ascq import describe, format_asc_ascq, is_vendor_specific
from diagdisk.decode.ata import decode_ata_taskfile, emask_names, serror_names
from diagdisk.decode.cdb import decode_cdb_text
from diagdisk.decode.nvme import critical_warning_names, decode_nvme_status, nvme_status_name
from diagdisk.decode.result import decode_result
from diagdisk.logs.enrich import enrich_event
from diagdisk.errors import DiagdiskError, InputError, NumberOutOfRange
from diagdisk.logs.events import EVENT_KINDS
from diagdisk.logs.framing import frame_line
from diagdisk.logs.grammar import default_parser, kernel_families, parse_line
from diagdisk.logs.reader import LogReader
from diagdisk.topology.smart import parse_smartctl_json, parse_smartctl_text
from diagdisk.topology.smart import parse_line as parse_smartctl_line
from diagdisk.inputs.sources import classify_in_tree

REPO = Path(__file__).resolve().parents[2]
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ABSURD_NUMBERS = ["0", "-1", "00000000000000000001", str(2**32), str(2**64), str(2**80), "9" * 40,
                  "0x" + "f" * 30, "ffffffffffffffffffff", "1e400", "NaN", "\u0663"]


def _grammar_lines() -> list[str]:
    lines = []
    for examples in sorted((REPO / "grammars").glob("*.examples.yml")):
        if examples.name.startswith("smartctl"):
            continue  # smartctl output lines have their own parser, tested below
        data = yaml.safe_load(examples.read_text()) or {}
        lines += [entry["line"] for entry in data.get("accept") or []]
        lines += [str(line) for line in data.get("reject") or []]
    return lines


def _command_outputs() -> dict[str, list[str]]:
    outputs: dict[str, list[str]] = {}
    roots = [*REPO.glob("samples/*"), *REPO.glob("tests/corpus/*/input"), *REPO.glob("tests/corpus/*")]
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                fmt = classify_in_tree(path.relative_to(root).as_posix())
                if fmt not in (None, "log", "date", "hostname", "uname", "sos_manifest", "bundle_manifest"):
                    outputs.setdefault(fmt, []).append(path.read_text(errors="replace"))
    for path in sorted((REPO / "tests/topology/smart/fixtures").iterdir()):
        if path.suffix == ".json":
            outputs.setdefault("smartctl_json", []).append(path.read_text())
        elif "smartctl" in path.name:
            outputs.setdefault("smartctl_text", []).append(path.read_text())
    return outputs


GRAMMAR_LINES = _grammar_lines()
COMMAND_OUTPUTS = _command_outputs()
SMARTCTL_LINES = [entry["line"] for entry in
                  (yaml.safe_load((REPO / "grammars/smartctl.examples.yml").read_text()).get("accept") or [])]


@st.composite
def mutated(draw, seeds: list[str], max_steps: int = 4) -> str:
    """A seed text changed a few times in ways real damage and real oddities change text."""
    text = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(0, max_steps))):
        where = draw(st.integers(0, len(text)))
        step = draw(st.sampled_from(["cut", "drop", "insert", "number", "repeat", "splice", "line"]))
        if step == "cut":
            text = text[:where]
        elif step == "drop":
            text = text[:where] + text[where + draw(st.integers(1, 20)):]
        elif step == "insert":
            odd = draw(st.text(alphabet=":[]()/.,=-# \t\x00\r\u00e9\ufffd{}<>0123456789abcdefxUF", max_size=4))
            text = text[:where] + odd + text[where:]
        elif step == "number":
            numbers = list(re.finditer(r"\d+", text))
            if numbers:
                number = draw(st.sampled_from(numbers))
                text = text[: number.start()] + draw(st.sampled_from(ABSURD_NUMBERS)) + text[number.end():]
        elif step == "repeat":
            text = text[:where] + text[where:] * 2
        elif step == "splice":
            text = text[:where] + draw(st.sampled_from(seeds))[draw(st.integers(0, 40)):]
        elif step == "line":
            lines = text.splitlines(keepends=True)
            if lines:
                index = draw(st.integers(0, len(lines) - 1))
                lines.insert(index, draw(st.sampled_from(lines)) if draw(st.booleans()) else "")
                del lines[draw(st.integers(0, len(lines) - 1))]
                text = "".join(lines)
    return text


KERNEL_MESSAGES = mutated(GRAMMAR_LINES)


def _assert_event(event: dict) -> None:
    assert event["kind"] in EVENT_KINDS
    json.dumps(event, default=str)


# -- line grammars and framing -----------------------------------------------------------------------


@pytest.mark.parametrize("family", kernel_families())
@FAST
@given(message=KERNEL_MESSAGES)
def test_every_family_grammar_parses_or_declines_any_message(family, message):
    try:
        event = default_parser().parse(message, [family])
    except NumberOutOfRange:
        return  # a number no kernel field holds: the reader makes it a warning on the line's source
    if event is not None:
        _assert_event(enrich_event(event))


@FAST
@given(line=st.one_of(KERNEL_MESSAGES, st.text(max_size=300)))
@example("sd 1208925819614629174706176:0:0:0: [sdb] tag#1 Sense Key : Medium Error [current]")
@example("blk_update_request: I/O error, dev sdc, sector 99999999999999999999999999")
@example("ata1.00: cmd 25/00:08:ff:ff:ff/00:ff:ff:00:00/e0 tag 0 dma 4096 in")
def test_parse_line_gives_events_or_nothing(line):
    """... or, for a number no kernel field holds, an error that says which (one line, exit 2)."""
    try:
        events = parse_line(line)
    except DiagdiskError as error:
        assert str(error).endswith("out of range: no such value in a kernel message")
        return
    for event in events:
        _assert_event(event)


@FAST
@given(prefix=st.sampled_from(["", "Mar  2 18:07:17 db1 kernel: ", "2024-03-02T18:07:17.123+01:00 db1 kernel: ",
                               "[ 12.345678] ", "[Sat Mar  2 18:07:17 2024] ", "<3>", "Feb 30 99:99:99 h k: ",
                               "9999-99-99T99:99:99+99:99 h kernel: ", "[99999999999999999999.1] "]),
       message=st.one_of(KERNEL_MESSAGES, st.text(max_size=200)))
def test_framing_accepts_any_line(prefix, message):
    framed = frame_line(prefix + message)
    assert isinstance(framed.message, str)


# -- the log reader -----------------------------------------------------------------------------------


LOG_TEXT = st.lists(st.tuples(st.sampled_from(["", "Mar  2 18:07:17 db1 kernel: ", "[ 1.5] ",
                                               "2024-03-02T18:07:17+00:00 db1 kernel: "]),
                              KERNEL_MESSAGES), max_size=30).map(
    lambda lines: "\n".join(prefix + message for prefix, message in lines))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(text=LOG_TEXT, ending=st.sampled_from(["\n", "\r\n", "\n\x00", "\n\xe9"]),
       damage=st.sampled_from(["none", "gzip", "gzip cut", "binary tail"]), chunk_size=st.sampled_from([7, 64, 4096]))
def test_the_log_reader_reads_any_log_or_says_why_not(tmp_path, text, ending, damage, chunk_size):
    data = text.replace("\n", ending).encode("utf-8", errors="surrogatepass")
    if damage == "gzip":
        data = gzip.compress(data)
    elif damage == "gzip cut":
        data = gzip.compress(data)[: max(10, len(data) // 3)]
    elif damage == "binary tail":
        data += bytes(range(256))
    path = tmp_path / "messages"
    path.write_bytes(data)
    result = LogReader().read(path, "var/log/messages", chunk_size=chunk_size)
    assert result.lines >= 0
    for event in result.events:
        assert event["source"] == "var/log/messages" and event["line"] >= 1
        _assert_event(event)


@FAST
@given(data=st.binary(max_size=3000), chunk_size=st.integers(1, 300), max_line=st.integers(1, 500))
def test_chunks_cover_any_bytes_line_for_line(data, chunk_size, max_line):
    import io
    warnings: list[str] = []
    chunks = list(iter_chunks(io.BytesIO(data), chunk_size=chunk_size, warnings=warnings, max_line_bytes=max_line))
    text = b"".join(chunk for chunk, _ in chunks)
    line = 1
    for chunk, first_line in chunks:
        assert first_line == line
        line += chunk.count(b"\n")
    if not warnings and data:
        assert text == data


# -- decoders ---------------------------------------------------------------------------------------


def _decodes_or_refuses(function, *args):
    try:
        decoded = function(*args)
    except DecodeError as error:
        assert str(error)
        return None
    if hasattr(decoded, "to_dict"):
        json.dumps(decoded.to_dict(), default=str)
    return decoded


HUGE_INTS = st.one_of(st.integers(), st.integers(min_value=-(2**90), max_value=2**90))


@FAST
@given(value=HUGE_INTS)
def test_numeric_decoders_take_any_integer(value):
    _decodes_or_refuses(decode_nvme_status, value)
    _decodes_or_refuses(decode_result, value)
    critical_warning_names(value)
    emask_names(value)
    serror_names(value)


@FAST
@given(sct=HUGE_INTS, sc=HUGE_INTS)
def test_status_and_asc_tables_take_any_pair(sct, sc):
    nvme_status_name(sct, sc)
    describe(sct, sc)
    is_vendor_specific(sct, sc)
    if 0 <= sct <= 255 and 0 <= sc <= 255:
        assert format_asc_ascq(sct, sc)


CDB_TEXTS = ["88 00 00 00 00 00 ae ba 78 80 00 00 00 08 00 00", "28 00 00 14 ff 88 00 00 08 00", "2a 00 00 00 08 00 00 00 08 00",
             "35 00 00 00 00 00 00 00 00 00", "12 00 00 00 24 00", "7f 00 00 00 00 00 00 18 00 09 00 00 00 00 00 00"]
TASKFILES = ["cmd 25/00:08:f8:cc:3c/00:00:0e:00:00/e0 tag 0 dma 4096 in",
             "res 51/40:00:e8:cc:3c/00:00:0e:00:00/00 Emask 0x9 (media error)",
             "cmd 60/08:00:e8:97:ba/00:00:00:00:00/40 tag 0 ncq dma 4096 in"]


@FAST
@given(cdb=mutated(CDB_TEXTS), taskfile=mutated(TASKFILES), result=mutated(["27010000", "0x08000002",
                                                                            "hostbyte=DID_OK driverbyte=DRIVER_SENSE"]))
def test_text_decoders_decode_or_refuse_mutated_real_input(cdb, taskfile, result):
    _decodes_or_refuses(decode_cdb_text, cdb)
    _decodes_or_refuses(decode_ata_taskfile, taskfile)
    _decodes_or_refuses(decode_result, result)


# -- inventory tables -----------------------------------------------------------------------------


INVENTORY_PARSERS = {
    "proc_scsi": inventory.parse_proc_scsi,
    "lsscsi": inventory.parse_lsscsi,
    "lsblk": inventory.parse_lsblk_pairs,
    "mdstat": inventory.parse_mdstat,
    "mdadm_detail": inventory.parse_mdadm_detail,
    "by_id": inventory.parse_by_id,
    "multipath": inventory.parse_multipath,
}


@pytest.mark.parametrize("fmt", sorted(INVENTORY_PARSERS))
@FAST
@given(data=st.data())
def test_inventory_tables_parse_or_refuse_any_text(fmt, data):
    seeds = COMMAND_OUTPUTS.get(fmt) or [""]
    text = data.draw(st.one_of(mutated(seeds, max_steps=8), st.text(max_size=300)))
    try:
        INVENTORY_PARSERS[fmt](text)
    except InputError:
        pass


# -- smartctl ---------------------------------------------------------------------------------------


JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=6)


@st.composite
def damaged_smartctl_json(draw) -> str:
    """A real smartctl JSON document with some of its values replaced by values of another type."""
    document = json.loads(draw(st.sampled_from(COMMAND_OUTPUTS["smartctl_json"])))
    for _ in range(draw(st.integers(1, 5))):
        node = document
        while isinstance(node, (dict, list)) and node and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else list(range(len(node)))))
            if not isinstance(node[key], (dict, list)) or not node[key]:
                node[key] = draw(JSON_VALUES)
                break
            node = node[key]
        else:
            if isinstance(node, dict):
                node[draw(st.sampled_from(sorted(node) or ["device"]))] = draw(JSON_VALUES)
    return json.dumps(document)


@FAST
@given(text=st.one_of(damaged_smartctl_json(), mutated(COMMAND_OUTPUTS["smartctl_json"], max_steps=6)))
@example('{"smartctl": {"exit_status": NaN}}')
@example('{"device": {"name": -1}, "smartctl": {}}')
@example('{"device": {"protocol": 5}, "smartctl": {"argv": [true]}}')
@example('{"ata_smart_attributes": {"table": [{"id": 5, "raw": {"value": "many"}}]}}')
@example('{"ata_smart_error_log": {"summary": {"count": 1, "table": [null]}}}')
@example('{"nvme_smart_health_information_log": {"critical_warning": "4", "available_spare": [1]}}')
@example('{"scsi_error_counter_log": {"read": {"total_uncorrected_errors": "3"}}}')
@example('{"smartctl": ' + "[" * 5000 + "]" * 5000 + "}")
def test_smartctl_json_parses_or_refuses_any_document(text):
    try:
        report = parse_smartctl_json(text, "smartctl/sda.json")
    except InputError:
        return
    json.dumps(report.to_dict(), default=str)
    assert report.health in ("passed", "warning", "failed", "unknown")


@FAST
@given(text=st.one_of(mutated(COMMAND_OUTPUTS["smartctl_text"], max_steps=8), st.text(max_size=300)))
def test_smartctl_text_parses_or_refuses_any_text(text):
    try:
        report = parse_smartctl_text(text, "sos_commands/ata/smartctl_-a_.dev.sda")
    except InputError:
        return
    json.dumps(report.to_dict(), default=str)


@FAST
@given(line=mutated(SMARTCTL_LINES))
def test_smartctl_line_grammar_parses_or_declines_any_line(line):
    parse_smartctl_line(line)
