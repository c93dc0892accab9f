"""libata and NVMe grammars against real logs: every line their keywords pick must parse.

A line a family's prefilter keywords pick but its grammar rejects is reported to the user as an
unparsed candidate, so on the corpus cases below that number must be zero for both families.
"""

from pathlib import Path

import pytest

from diagdisk.logs.framing import frame_line
from diagdisk.logs.grammar import MessageParser, grammar_specs
from diagdisk.logs.prefilter import Prefilter

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "tests" / "corpus"
FAMILIES = ("ata", "nvme")
CASES = (
    "ata-icrc-abrt-sdc-superuser641219",
    "ata-unc-ata3-zfs1814",
    "ata-unc-sda-nbs685",
    "neg-ata-boot-empty-port-chromebox143",
    "nvme-csts-ffffffff-reset-loop-nvme0-rpi6661",
    "nvme-timeout-notready-removed-nvme2-nvmecli151",
)


def _case_inputs(case: str) -> list[Path]:
    inputs = sorted(p for p in (CORPUS / case / "input").rglob("*") if p.is_file())
    assert inputs, f"corpus case {case} has no input in {CORPUS}"
    return inputs


def _candidates(path: Path):
    """(line number, message, families) of each line an ATA or NVMe keyword picks."""
    prefilter = Prefilter({name: grammar_specs()[name].keywords for name in FAMILIES}, engine="python")
    chunk = path.read_bytes()
    for start, end, families in prefilter.candidate_lines(chunk):
        line = chunk[start:end].decode("utf-8", "replace").rstrip("\r")
        yield chunk.count(b"\n", 0, start) + 1, frame_line(line).message, families


@pytest.mark.parametrize("case", CASES)
def test_every_keyword_line_of_the_corpus_parses(case):
    parser = MessageParser(list(FAMILIES))
    unparsed, parsed = [], 0
    for path in _case_inputs(case):
        for number, message, families in _candidates(path):
            if parser.parse(message, families=sorted(families)) is None:
                unparsed.append(f"{path.name}:{number}: {message}")
            else:
                parsed += 1
    assert parsed > 0, f"no ATA/NVMe keyword line in {case}: the keywords miss its lines"
    assert unparsed == []


def _events(case: str) -> list[dict]:
    parser = MessageParser(list(FAMILIES))
    events = []
    for path in _case_inputs(case):
        for _, message, families in _candidates(path):
            events.append(parser.parse(message, families=sorted(families)))
    return events


def test_media_error_block_yields_taskfile_and_bits():
    events = _events("ata-unc-ata3-zfs1814")
    res = [e for e in events if e["kind"] == "ata_detail" and e.get("detail") == "res"]
    assert res and all(e["taskfile"] == "41/40:00:e0:79:2d/00:00:14:00:00/40" for e in res)
    assert all(e["emask"] == 0x409 and e["text"] == "media error" for e in res)
    assert {e.get("ata_error") for e in events if e.get("detail") == "error"} == {"UNC"}
    assert sum(e["kind"] == "ata_exception" for e in events) == 2
    assert sum(e["kind"] == "ata_eh_complete" for e in events) == 2


def test_link_crc_case_names_port_bits_and_reset():
    events = _events("ata-icrc-abrt-sdc-superuser641219")
    serror = [e for e in events if e.get("detail") == "serror"]
    assert serror[0]["serror"] == "UnrecovData 10B8B BadCRC" and serror[0]["ata_port"] == "ata4"
    assert any(e["kind"] == "ata_link" and e.get("detail") == "hard_reset" for e in events)
    assert any(e.get("detail") == "up" and e["link_speed"] == "3.0 Gbps" for e in events)


def test_empty_port_boot_is_topology_and_link_state_only():
    events = _events("neg-ata-boot-empty-port-chromebox143")
    kinds = {(e["kind"], e.get("detail")) for e in events}
    assert kinds == {("attach", "port"), ("ata_link", "up"), ("ata_link", "down"),
                     ("attach", "identify"), ("attach", "capacity"), ("info", "configured")}
    identify = next(e for e in events if e.get("detail") == "identify")
    assert (identify["model"], identify["revision"], identify["ata_link"]) == ("TS32GMTS400", "P1225CE", "ata2.00")


def test_nvme_removal_case_yields_timeout_reset_and_capacity_zero():
    events = _events("nvme-timeout-notready-removed-nvme2-nvmecli151")
    sequence = [(e["kind"], e.get("detail"), e.get("nvme_ctrl") or e.get("device")) for e in events]
    assert sequence[:5] == [
        ("timeout", "reset", "nvme2"), ("nvme_reset", "not_ready", "nvme2"),
        ("nvme_reset", "not_ready", "nvme2"), ("nvme_reset", "removed", "nvme2"),
        ("nvme_reset", "capacity_zero", "nvme2n1")]
    assert all(e["qid"] == 0 for e in events if e["kind"] == "timeout")


def test_nvme_csts_loop_counts_each_controller_down():
    events = _events("nvme-csts-ffffffff-reset-loop-nvme0-rpi6661")
    assert sum(e.get("detail") == "down" for e in events) == 2
    assert all(e["kind"] != "nvme_error" for e in events)


@pytest.mark.parametrize("family,message", [
    ("ata", "ata3.00: cmd 60/f0:08:75:79:2d/00:00:14:00:00/40 tag 1 ncq 122880 in"),
    ("ata", "res 41/40:00:e0:79:2d/00:00:14:00:00/40 Emask 0x409 (media error) <F>"),
    ("nvme", "nvme2n1: detected capacity change from 800166076416 to 0"),
])
def test_shape_cache_rebuilds_fields_for_new_numbers(family, message):
    """A second message of the same shape is rebuilt from the cache; it must equal a fresh parse."""
    cached = MessageParser([family])
    cached.parse(message)
    changed = message.replace("1", "7").replace("800166076416", "900166076416")
    assert cached.parse(changed) == MessageParser([family]).parse(changed)


def test_capacity_change_to_nonzero_is_not_a_reset_even_after_a_cached_zero():
    parser = MessageParser(["nvme"])
    assert parser.parse("nvme2n1: detected capacity change from 800166076416 to 0")["kind"] == "nvme_reset"
    grown = parser.parse("nvme2n1: detected capacity change from 800166076416 to 5")
    assert (grown["kind"], grown["detail"]) == ("info", "capacity_change")
