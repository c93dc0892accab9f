"""Real logs: every line that holds an md, dm, fs or transport prefilter keyword is accepted.

The prefilter sends a line to the grammars when it holds a family keyword; a keyword line that no
grammar accepts is reported as an unparsed candidate. In these tune cases of tests/corpus (real
kernel logs read by a storage engineer) and the logs of the seed004 samples, none may be left over. Lines are framed first, as the
pipeline does: syslog/dmesg headers stripped, typographic dashes made ASCII, typographic quotes
dropped.
"""

from pathlib import Path

import json

import pytest

from diagdisk.logs.framing import frame_line
from diagdisk.logs.grammar import MessageParser, grammar_specs

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "tests" / "corpus"
FAMILIES = ("md", "dm", "fs", "transport")
CASES = (
    "fc-loopdown-qla2xxx-path-sdb-multipath",
    "firewire-sbp2-bus-reset-two-disks-raid1-2.4",
    "hpsa-p410-controller-lockup-all-lds-offlined",
    "megasas-reset-many-lds-tigrlab896",
    "usb-multi-disconnect-uas-zfs5863",
    "xhci-host-system-error-multi-uas-rpi5060",
    "scsi-hwerror-deferred-sdf-offline-raid0-sf474189",
)

SEED_004_LOGS = ("var/log/messages", "sos_commands/kernel/dmesg")


def _log_files():
    for case in CASES:
        for path in sorted((CORPUS / case / "input").rglob("*")):
            if path.is_file():
                yield pytest.param(path, id=f"{case}:{path.relative_to(CORPUS / case / 'input')}")
    for sample in sorted((ROOT / "samples").glob("seed004-*")):
        for log in SEED_004_LOGS:
            if (sample / log).is_file():
                yield pytest.param(sample / log, id=f"{sample.name}:{log}")


def test_the_cases_are_in_the_repository_and_tune_cases():
    # a case missing from tests/corpus must fail here, not skip; check cases are for scoring only
    for case in CASES:
        meta = json.loads((CORPUS / case / "expected.json").read_text()).get("meta") or {}
        assert (CORPUS / case / "input").is_dir() and meta.get("split", "tune") == "tune", case


def _keyword_messages(path: Path) -> list[tuple[int, str, list[str]]]:
    keywords = {family: grammar_specs()[family].keywords for family in FAMILIES}
    found = []
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
        message = frame_line(line).message
        hit = [family for family, words in keywords.items() if any(w in message for w in words)]
        if hit:
            found.append((number, message, hit))
    return found


@pytest.fixture(scope="module")
def parser():
    # one parser for all files, so shapes cached from one line are reused on the next ones
    return MessageParser()


@pytest.mark.parametrize("path", list(_log_files()))
def test_every_keyword_line_is_accepted(parser, path):
    unparsed = [f"{path.name}:{number}: {message!r} (keywords of {', '.join(families)})"
                for number, message, families in _keyword_messages(path)
                if parser.parse(message) is None]
    assert unparsed == [], "keyword lines no grammar accepts:\n" + "\n".join(unparsed)


def test_cases_exercise_the_families():
    # the multipath case carries only the kernel side (qla2xxx, sd, ext4): no dm message
    families_seen = set()
    for param in _log_files():
        for _, _, families in _keyword_messages(param.values[0]):
            families_seen.update(families)
    assert families_seen >= {"md", "fs", "transport"}


# What the corpus lines mean: the kind each family grammar yields, with the identity it names.
@pytest.mark.parametrize("line,kind,fields", [
    ("Apr 27 21:20:37 localhost kernel: qla2xxx [0000:81:00.1]-500b:10: LOOP DOWN detected (2 7 0 0).",
     "transport__fc_link_down", {"host": 10, "pci": "0000:81:00.1"}),
    ("Apr 27 21:20:42 localhost kernel: EXT4-fs warning (device dm-8): ext4_end_bio:316: I/O error -5 writing to inode"
     " 24117995 (offset 0 size 0 starting block 96511296)", "io_error__writeback", {"device": "dm-8"}),
    ("Mar 24 20:50:28 phobia kernel: ieee1394: sbp2: Bus reset in progress - rejecting command", "transport__bus_reset", {}),
    ("[  603.379775] xhci_hcd 0000:01:00.0: WARNING: Host System Error", "controller_error__host_system_error",
     {"pci": "0000:01:00.0"}),
    ("Dec 20 10:33:23 localhost kernel: EXT3-fs error (device sd(8,3)): ext3_get_inode_loc: unable to read inode block"
     " \u2013 inode=852064, block=1703940", "fs_error", {"majmin": "8:3"}),
    ("Sep 21 23:35:51 localhost kernel: md3: no spare disk to reconstruct array! \u2014 continuing in degraded mode",
     "md_degraded", {"md": "md3"}),
    ("Sep 21 23:35:52 localhost kernel: md: sda5 [events: 00000012]<6>(write) sda5\u2019s sb offset: 4192832",
     "info__sb_write", {"partition": "sda5"}),
    ("\u2014 wd:1 rd:2", "info__conf_counts", {"md_devices_left": 1}),
    ("md: errors occurred during superblock update, repeating scsi0 (1:0): rejecting I/O to offline device",
     "md_sb_error__repeating", {}),
])
def test_corpus_line_meaning(line, kind, fields):
    event = MessageParser(list(FAMILIES)).parse(frame_line(line).message)
    assert event is not None
    assert event["kind"] + ("__" + event["detail"] if event.get("detail") else "") == kind
    for key, value in fields.items():
        assert event.get(key) == value
