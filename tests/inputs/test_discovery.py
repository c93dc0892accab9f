"""Discovery: what the paths hold and whose it is, before anything is merged."""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import pytest

from diagdisk.errors import InputError
from diagdisk.inputs.discovery import (HostIdentity, discover_hosts, find_inputs, group_by_host, host_in_name,
                                       syslog_host, tree_identity)
from diagdisk.inputs.limits import Limits

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"
DEMO = SAMPLES / "demo-sosreport"
NVME = SAMPLES / "nvme-media-errors-nvme1"


def make_archive(folder: Path, archive: Path, top: str) -> Path:
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=top)
    return archive


@pytest.mark.parametrize("name, host", [
    ("sosreport-db01-03791234-2024-03-20-abcde.tar.xz", "db01"),
    ("sosreport-db-sas01-2024-03-20-xyzab.tar.gz", "db-sas01"),
    ("sosreport-node-01.example.com-2024-03-20-q1w2e", "node-01.example.com"),
    ("sosreport-web7.01234567-20210301120000.tar.xz", "web7"),
    ("sosreport-web7-20210301120000abc.tar.bz2", "web7"),
    ("diagdisk-pgdb02-20261125-210659.tar.gz", "pgdb02"),
    ("case-bundle.tar.gz", None),
    ("sosreport.tar.xz", None),
    ("messages-20240301.gz", None),
])
def test_host_in_name_follows_sos_and_collect_naming(name, host):
    assert host_in_name(name) == host


def test_tree_identity_prefers_the_hostname_file_then_uname_then_names(tmp_path):
    root = tmp_path / "sosreport-fromname-2024-03-20-abcde"
    (root / "sos_commands/kernel").mkdir(parents=True)
    (root / "sos_commands/kernel/uname_-a").write_text("Linux fromuname 6.1.0 #1 SMP x86_64 GNU/Linux\n")
    assert tree_identity(root, root.name) == HostIdentity("fromuname", "uname")
    (root / "hostname").write_text("fromhostname\n")
    assert tree_identity(root, root.name) == HostIdentity("fromhostname", "hostname file")
    (root / "hostname").write_text("localhost\n")  # a placeholder names no host
    assert tree_identity(root, root.name).name == "fromuname"
    (root / "sos_commands/kernel/uname_-a").unlink()
    assert tree_identity(root, root.name) == HostIdentity("fromname", "archive name")
    assert tree_identity(root, "unrelated-folder-name") is None


def test_tree_identity_falls_back_to_the_syslog_host_field(tmp_path):
    (tmp_path / "var/log").mkdir(parents=True)
    (tmp_path / "var/log/messages").write_text(
        "Mar  2 18:07:17 fromsyslog kernel: sd 0:0:0:0: [sda] Attached SCSI disk\n"
        "Mar  2 18:07:18 fromsyslog systemd[1]: Started something.\n")
    assert tree_identity(tmp_path, "x") == HostIdentity("fromsyslog", "syslog headers")


def test_syslog_host_needs_one_host_and_a_kernel_line(tmp_path):
    one = tmp_path / "one"
    one.write_text("2024-03-02T18:07:17+01:00 db1 kernel: sd 0:0:0:0: x\n2024-03-02T18:07:18+01:00 db1 sshd[12]: y\n")
    server = tmp_path / "server"
    server.write_text("Mar  2 18:07:17 db1 kernel: a\nMar  2 18:07:17 db2 kernel: b\n")
    no_kernel = tmp_path / "no_kernel"
    no_kernel.write_text("Mar  2 18:07:17 db1 sshd[1]: a\n")
    headerless = tmp_path / "dmesg"
    headerless.write_text("[    1.234567] sd 0:0:0:0: [sda] Attached SCSI disk\n")
    assert syslog_host([one]) == HostIdentity("db1", "syslog headers")
    assert syslog_host([server]) is None
    assert syslog_host([no_kernel]) is None
    assert syslog_host([headerless]) is None


def test_a_folder_of_sosreports_gives_each_one_and_skips_a_readme():
    discovery = find_inputs([str(SAMPLES)])
    kinds = {Path(found.path).name: found.kind for found in discovery.inputs}
    assert kinds == {path.name: "sosreport" for path in SAMPLES.iterdir() if path.is_dir()}
    assert len(discovery.notes) == 1 and "README.md: not read" in discovery.notes[0]
    groups = group_by_host(discovery.inputs)
    assert len(groups) == 13
    labels = [group.label for group in groups]
    # the two seed004 sosreports called "localhost" stay apart, named by their folders
    assert "seed004-ex1-scsi-disk-error-id1" in labels and "seed004-ex2-timeouts-bus-reset-id1" in labels
    assert "pgdb02" in labels and "ws-build7" in labels


def test_a_case_folder_of_archives_is_identified_by_what_they_hold(tmp_path):
    case = tmp_path / "case"
    case.mkdir()
    make_archive(DEMO, case / "upload-1.tar.gz", "sosreport-x")   # names say nothing; hostname files do
    make_archive(NVME, case / "upload-2.tar.gz", "sosreport-y")
    (case / "notes.txt").write_text("customer says the database is slow\n")
    groups, notes, stack = discover_hosts([str(case)], Limits())
    with stack:
        assert [group.label for group in groups] == ["pgdb02", "ws-build7"]
        assert all(group.identity.evidence == "hostname file" for group in groups)
        assert [Path(p).name for group in groups for p in group.paths] == ["upload-1.tar.gz", "upload-2.tar.gz"]
        extracted = [opened.root for group in groups for _, opened in group.opened]
        assert all(root.exists() for root in extracted)
    assert not any(root.exists() for root in extracted)  # the copies are gone with the stack
    assert any("notes.txt: not read" in note for note in notes)


def test_a_sosreport_and_a_pasted_log_of_it_merge(tmp_path):
    pasted = tmp_path / "pasted-messages.txt"
    pasted.write_text("2024-03-19T02:20:00+00:00 pgdb02 kernel: sd 2:0:2:0: [sdc] tag#1 Sense Key : Medium Error [current]\n")
    dmesg = tmp_path / "dmesg.txt"  # names no host: joins the one host there is
    dmesg.write_text("[ 12.345678] sd 2:0:2:0: [sdc] Attached SCSI disk\n")
    groups = group_by_host(find_inputs([str(DEMO), str(pasted), str(dmesg)]).inputs)
    assert len(groups) == 1
    assert groups[0].paths == [str(DEMO), str(pasted), str(dmesg)]


def test_a_short_syslog_name_joins_the_host_of_that_full_name(tmp_path):
    full = tmp_path / "sosreport-a"
    (full / "proc").mkdir(parents=True)
    (full / "hostname").write_text("db1.example.com\n")
    pasted = tmp_path / "messages"
    pasted.write_text("Mar  2 18:07:17 db1 kernel: sd 0:0:0:0: x\n")
    other = tmp_path / "messages-other"
    other.write_text("Mar  2 18:07:17 web3 kernel: sd 0:0:0:0: x\n")
    groups = group_by_host(find_inputs([str(full), str(pasted), str(other)]).inputs)
    assert [(g.label, len(g.inputs)) for g in groups] == [("db1.example.com", 2), ("web3", 1)]


def test_rotated_logs_of_one_host_merge_and_a_glob_is_expanded(tmp_path):
    for name in ("messages", "messages.1", "messages.2"):
        (tmp_path / name).write_text(f"Mar  2 18:07:17 db1 kernel: line of {name}\n")
    groups = group_by_host(find_inputs([str(tmp_path / "messages*")]).inputs)
    assert len(groups) == 1 and len(groups[0].inputs) == 3


def test_a_glob_matching_nothing_is_bad_input(tmp_path):
    with pytest.raises(InputError, match="matches no file"):
        find_inputs([str(tmp_path / "nothing-*.tar.xz")])


def test_a_folder_of_logs_from_a_log_server_is_split_by_host(tmp_path):
    (tmp_path / "db1.log").write_text("Mar  2 18:07:17 db1 kernel: a\n")
    (tmp_path / "db1.log.1").write_text("Mar  1 18:07:17 db1 kernel: b\n")
    (tmp_path / "web3.log").write_text("Mar  2 18:07:17 web3 kernel: c\n")
    groups = group_by_host(find_inputs([str(tmp_path)]).inputs)
    assert sorted((g.label, sorted(f.files or []) and sorted(f.files)) for g in groups for f in g.inputs) == [
        ("db1", ["db1.log", "db1.log.1"]), ("web3", ["web3.log"])]


def test_a_plain_folder_of_one_hosts_logs_stays_one_input(tmp_path):
    (tmp_path / "messages").write_text("Mar  2 18:07:17 db1 kernel: a\n")
    (tmp_path / "dmesg").write_text("[    1.000000] b\n")
    inputs = find_inputs([str(tmp_path)]).inputs
    assert [(found.kind, found.files) for found in inputs] == [("folder", None)]
    assert inputs[0].identity.name == "db1"


def test_unidentified_loose_logs_beside_several_hosts_are_their_own_group():
    groups = group_by_host(find_inputs([str(DEMO), str(NVME)]).inputs)
    assert [g.label for g in groups] == ["pgdb02", "ws-build7"]


def test_logs_naming_no_host_beside_several_hosts_are_reported_apart(tmp_path):
    dmesg = tmp_path / "dmesg.txt"
    dmesg.write_text("[ 12.345678] sd 2:0:2:0: [sdc] Attached SCSI disk\n")
    notes: list[str] = []
    groups = group_by_host(find_inputs([str(DEMO), str(NVME), str(dmesg)]).inputs, notes)
    assert [g.label for g in groups] == ["pgdb02", "ws-build7", "unidentified host"]
    assert notes and "name no host" in notes[0]


def test_an_unpacked_copy_and_its_archive_of_one_host_merge(tmp_path):
    archive = make_archive(DEMO, tmp_path / "sosreport-pgdb02-2024-03-20-abcde.tar.gz", "sosreport-pgdb02")
    copy = tmp_path / "unpacked"
    shutil.copytree(DEMO, copy)
    groups, notes, stack = discover_hosts([str(archive), str(copy)], Limits())
    with stack:
        # one host; the copy holds the archive's content and is read once (tests/inputs/test_read_once.py)
        assert [(g.label, len(g.inputs), len(g.opened)) for g in groups] == [("pgdb02", 2, 1)]
        assert notes == groups[0].notes and f"{copy}: not read: the same content as {archive}" in notes[0]


def test_a_path_named_twice_or_found_again_is_one_input():
    inputs = find_inputs([str(DEMO), str(DEMO) + "/", str(SAMPLES)]).inputs
    assert [Path(found.path).resolve() for found in inputs].count(DEMO.resolve()) == 1
    assert len(inputs) == 13
