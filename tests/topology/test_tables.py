"""The table readers on the traps other tools fell into, on every table file the project ships, on
arbitrary text, and through the analysis, where the lines they could not read are reported."""

import json
import doctest
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagdisk.topology import tables as inventory
from diagdisk import larkbuild
from diagdisk.diagnosis.analysis import analyze
from diagdisk.inputs.sources import classify_in_tree

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------------------- mdstat traps

def test_mdstat_slot_map_is_read_by_slot_number_not_by_listing_order():
    # listed sdb2 first, sda2 second; the map says slot 0 in sync, slot 1 not: sdb2[1] is the one
    text = ("md1 : active raid1 sdb2[1] sda2[0]\n"
            "      52395008 blocks super 1.2 [2/1] [U_]\n"
            "      [=>...................]  recovery =  8.5% (4453376/52395008) finish=12.0min speed=66000K/sec\n")
    [array] = inventory.parse_mdstat(text)
    assert array.out_of_sync == ["sdb2"]
    assert array.failed_members == []
    assert (array.state, array.recovering) == ("recovering", True)


def test_mdstat_slot_map_of_the_other_slot():
    text = ("md1 : active raid1 sdb2[1] sda2[0]\n"
            "      52395008 blocks super 1.2 [2/1] [_U]\n"
            "      \tresync=DELAYED\n")
    [array] = inventory.parse_mdstat(text)
    assert array.out_of_sync == ["sda2"]
    assert (array.state, array.recovering) == ("degraded", False)


def test_mdstat_names_members_numbered_past_the_map_when_they_account_for_the_gaps():
    # disks added after creation are numbered from raid_disks up; both fill the two gaps
    text = ("md5 : active raid5 sde1[4] sdd1[3] sda1[0]\n"
            "      3906885440 blocks level 5, 64k chunk, algorithm 2 [3/1] [U__]\n")
    [array] = inventory.parse_mdstat(text)
    assert array.out_of_sync == ["sde1", "sdd1"]


def test_mdstat_names_no_member_when_the_numbers_do_not_account_for_the_gap():
    # one gap, two members numbered past the map: which one is rebuilding the text does not say
    text = ("md5 : active raid5 sde1[4] sdd1[3] sda1[0]\n"
            "      3906885440 blocks level 5, 64k chunk, algorithm 2 [3/2] [U_U]\n")
    [array] = inventory.parse_mdstat(text)
    assert array.out_of_sync == []
    assert array.state == "degraded"


def test_mdstat_spares_and_failed_members_are_not_active():
    text = ("md1 : active raid1 sdc1[2](S) sdb2[1] sda2[0]\n      52395008 blocks super 1.2 [2/2] [UU]\n"
            "md0 : active raid1 sdb1[1](F) sda1[0]\n      1900628992 blocks super 1.2 [2/1] [U_]\n")
    md1, md0 = inventory.parse_mdstat(text)
    assert (md1.spares, md1.failed_members, md1.active, md1.state) == (["sdc1"], [], 2, "clean")
    assert (md0.spares, md0.failed_members, md0.active, md0.state) == ([], ["sdb1"], 1, "degraded")
    assert md0.out_of_sync == [] and md1.out_of_sync == []


def test_mdstat_faulty_write_mostly_member_is_failed_not_spare():
    text = "md_d0 : active raid1 sda[0] sdb[1](W)(F)\n      976630464 blocks super 1.2 [2/1] [U_]\n"
    [array] = inventory.parse_mdstat(text)
    assert (array.failed_members, array.spares, array.state) == (["sdb"], [], "degraded")


def test_mdstat_2_4_wording_with_read_ahead_devfs_names_and_recovery():
    text = ("Personalities : [raid1]\n"
            "read_ahead 1024 sectors\n"
            "md0 : active raid1 ide/host0/bus1/target1/lun0/part1[2] ide/host0/bus0/target0/lun0/part1[0]\n"
            "      248896 blocks [2/1] [U_]\n"
            "      [================>....]  recovery = 83.1% (206832/248896) finish=0.1min speed=5034K/sec\n"
            "unused devices: <none>\n")
    result = inventory.read_mdstat(text)
    [array] = result.records
    assert result.unparsed == []
    assert array.members == ["ide/host0/bus1/target1/lun0/part1", "ide/host0/bus0/target0/lun0/part1"]
    assert (array.state, array.recovering, array.active, array.expected) == ("recovering", True, 1, 2)
    assert array.out_of_sync == ["ide/host0/bus1/target1/lun0/part1"]


def test_mdstat_resync_check_and_waiting_are_told_apart():
    text = ("md0 : active raid1 sdb1[1] sda1[0]\n      248896 blocks [2/2] [UU]\n"
            "      [==>..................]  resync = 12.6% (31360/248896) finish=0.3min speed=9000K/sec\n"
            "md1 : active raid1 sdd1[1] sdc1[0]\n      248896 blocks [2/2] [UU]\n"
            "      [==>..................]  check = 12.6% (31360/248896) finish=0.3min speed=9000K/sec\n"
            "md2 : active raid1 sdf1[1] sde1[0]\n      248896 blocks [2/2] [UU]\n      resync=PENDING\n")
    md0, md1, md2 = inventory.parse_mdstat(text)
    assert [(a.state, a.recovering) for a in (md0, md1, md2)] == [("clean", True), ("clean", False), ("clean", False)]


# ---------------------------------------------------------------------------- mdadm -D traps

def test_mdadm_clean_degraded_recovering_and_the_rebuilding_spare():
    text = ("/dev/md0:\n        Raid Level : raid1\n      Raid Devices : 2\n"
            "             State : clean, degraded, recovering \n    Active Devices : 1\n"
            "    Number   Major   Minor   RaidDevice State\n"
            "       0       8       17        0      active sync   /dev/sdb1\n"
            "       2       8       33        1      spare rebuilding   /dev/sdc1\n"
            "\n       3       8       49        -      spare   /dev/sdd1\n")
    array = inventory.parse_mdadm_detail(text)
    assert (array.state, array.recovering) == ("recovering", True)
    assert (array.out_of_sync, array.spares, array.failed_members) == (["sdc1"], ["sdd1"], [])
    assert array.members == ["sdb1", "sdc1", "sdd1"]


@pytest.mark.parametrize("state,expected", [
    ("clean", ("clean", False)),
    ("clean, degraded", ("degraded", False)),
    ("active, degraded, recovering", ("recovering", True)),
    ("active, degraded, resyncing (DELAYED)", ("degraded", False)),
    ("active, resyncing", ("clean", True)),
    ("clean, checking", ("clean", False)),
    ("active, FAILED, Not Started", ("failed", False)),
    ("inactive", ("failed", False)),
    ("broken", ("failed", False)),
    ("dirty, no-errors", ("clean", False)),
])
def test_mdadm_state_words(state, expected):
    array = inventory.parse_mdadm_detail(f"/dev/md0:\n             State : {state} \n")
    assert (array.state, array.recovering) == expected


def test_mdadm_several_arrays_in_one_file_keep_their_own_members():
    text = (ROOT / "samples/md-raid1-degraded-sdb/sos_commands/md/mdadm_-D_.dev.md").read_text()
    md0, md1 = inventory.read_mdadm_detail(text).records
    assert (md0.name, md0.members, md0.failed_members, md0.state) == ("md0", ["sda1", "sdb1"], ["sdb1"], "degraded")
    assert (md1.name, md1.members, md1.spares, md1.state) == ("md1", ["sda2", "sdb2", "sdc1"], ["sdc1"], "clean")
    assert inventory.parse_mdadm_detail(text).name == "md0"


# ---------------------------------------------------------------------------- lsscsi traps

def test_lsscsi_i_seventh_column_is_the_wwid_and_not_the_node():
    [device] = inventory.parse_lsscsi(
        "[0:2:0:0]    disk    DELL     PERC H730P Mini  4.30  /dev/sda   36d0946602b1c3d002c7f1e5a0c8b2a41\n")
    assert (device.hctl, device.vendor, device.model, device.revision) == ("0:2:0:0", "DELL", "PERC H730P Mini", "4.30")
    assert (device.name, device.wwn) == ("sda", "36d0946602b1c3d002c7f1e5a0c8b2a41")


def test_lsscsi_dash_wwid_sg_node_and_size_are_no_wwid():
    devices = inventory.parse_lsscsi(
        "[1:0:0:0]    cd/dvd  HL-DT-ST DVD-ROM DU90N    D1A0  /dev/sr0   -\n"
        "[0:0:0:0]    disk    ATA      Samsung SSD 850  2B6Q  /dev/sda   /dev/sg0    250GB\n")
    assert [(d.name, d.wwn, d.size) for d in devices] == [("sr0", None, None), ("sda", None, "250GB")]


def test_lsscsi_model_with_spaces_keeps_its_spaces():
    [device] = inventory.parse_lsscsi(
        "[0:0:0:0]    disk    ATA      Samsung SSD 870  2B6Q  /dev/sda   35002538f42a1b7c9\n")
    assert (device.vendor, device.model, device.revision) == ("ATA", "Samsung SSD 870", "2B6Q")


@pytest.mark.parametrize("identity,expected", [
    ("ATA      ST4000NM0033-9ZM SN06", ("ATA", "ST4000NM0033-9ZM", "SN06")),
    ("HL-DT-ST DVD-ROM DU90N    D1A0", ("HL-DT-ST", "DVD-ROM DU90N", "D1A0")),
    ("Generic- SD/MMC           1.00", ("Generic-", "SD/MMC", "1.00")),
    ("IBM      2145", ("IBM", "2145", None)),
    ("SEAGATE ST373307LC 0007", ("SEAGATE", "ST373307LC", "0007")),
    ("vendor?  model?           rev?", (None, None, None)),
])
def test_split_identity_at_fixed_widths_or_at_spaces(identity, expected):
    assert inventory.split_identity(identity) == expected


def test_module_doctests():
    results = [doctest.testmod(module) for module in (inventory, larkbuild)]
    assert sum(r.attempted for r in results) > 0 and sum(r.failed for r in results) == 0


# ---------------------------------------------------------------------------- every shipped table

def _is_check_case(path: Path) -> bool:
    """A held-out corpus case (meta.split: check) is scored, not read while grammars are written."""
    expected = next((p / "expected.json" for p in path.parents if (p / "expected.json").exists()), None)
    return expected is not None and (json.loads(expected.read_text()).get("meta") or {}).get("split") == "check"


def _table_files():
    for base in (ROOT / "samples", ROOT / "tests" / "corpus"):
        for path in sorted(base.rglob("*")):
            if _is_check_case(path):
                continue
            relative = path.relative_to(base).as_posix()
            relative = relative.split("/input/", 1)[1] if "/input/" in relative else relative.split("/", 1)[-1]
            fmt = classify_in_tree(relative)
            if path.is_file() and fmt in inventory.TABLE_READERS:
                yield pytest.param(path, fmt, id=path.relative_to(ROOT).as_posix())


TABLE_FILES = list(_table_files())


def test_the_project_ships_tables_of_most_formats():
    assert {fmt for _, fmt in (p.values for p in TABLE_FILES)} >= {"proc_scsi", "lsscsi", "lsblk", "mdstat",
                                                                     "mdadm_detail", "multipath"}


@pytest.mark.parametrize("path,fmt", TABLE_FILES)
def test_every_shipped_table_reads_whole(path, fmt):
    result = inventory.TABLE_READERS[fmt](path.read_text())
    assert result.unparsed == []
    assert result.records


# ---------------------------------------------------------------------------- arbitrary text

_TABLE_PIECES = list("abdsmx01289:[]()_-=\"'/,.% \t\nUFSW├─`|#>") + [
    "Host: scsi0 ", "Channel: ", "Id: ", "Lun: ", "Vendor: ", "Model: ", "Rev: ", "Type: ", "md0 : active ",
    "raid1 ", "blocks ", "[2/1] ", "recovery = ", "/dev/", "State : ", "degraded", "-> ../../", "lrwxrwxrwx ",
    "dm-0 ", "active ready running", "NAME=", "{", "}", "\"blockdevices\": ["]
_TABLE_TEXT = st.lists(st.sampled_from(_TABLE_PIECES), max_size=80).map("".join)


@settings(max_examples=60, deadline=None)
@given(text=_TABLE_TEXT)
def test_readers_never_raise_and_report_real_line_numbers(text):
    lines = text.splitlines()
    for fmt, reader in inventory.TABLE_READERS.items():
        result = reader(text)
        for number, line in result.unparsed:
            assert 1 <= number <= max(len(lines), 1), (fmt, number)
            assert line == (lines[number - 1] if lines else ""), (fmt, number, line)


def test_lsblk_json_nested_too_deep_or_of_another_shape_is_reported():
    deep = '{"blockdevices": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert inventory.read_lsblk(deep).unparsed == [(1, deep)]
    assert inventory.read_lsblk('\n{"devices": []}\n').unparsed == [(2, '{"devices": []}')]


def test_an_overlong_line_is_reported_without_being_parsed():
    line = "md0 : active raid1 " + "sda1[0] " * 2000
    result = inventory.read_mdstat(line + "\n")
    assert result.records == [] and result.unparsed == [(1, line)]


# ---------------------------------------------------------------------------- through the analysis

def test_analysis_reports_the_lines_a_table_grammar_did_not_accept(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "mdstat").write_text(
        "Personalities : [raid1]\n"
        "md0 : active raid1 sdc1[1](F) sdb1[0]\n"
        "      3906885440 blocks super 1.2 [2/1] [U_]\n"
        "      a line of no mdstat shape\n"
        "unused devices: <none>\n")
    analysis = analyze([str(tmp_path)])
    [source] = [s for s in analysis.sources if s.format == "mdstat"]
    assert source.unparsed_candidates == 1
    assert source.unparsed_samples == [(4, "      a line of no mdstat shape")]
    assert analysis.topology.md_arrays["md0"].state == "degraded"


def test_analysis_reads_every_array_of_an_mdadm_file(tmp_path):
    (tmp_path / "sos_commands" / "md").mkdir(parents=True)
    sample = ROOT / "samples/md-raid1-degraded-sdb/sos_commands/md/mdadm_-D_.dev.md"
    (tmp_path / "sos_commands" / "md" / "mdadm_-D_.dev.md").write_text(sample.read_text())
    analysis = analyze([str(tmp_path)])
    arrays = analysis.topology.md_arrays
    assert sorted(arrays) == ["md0", "md1"]
    assert arrays["md1"].members == ["sda2", "sdb2", "sdc1"] and arrays["md0"].failed_members == ["sdb1"]


def test_analysis_reads_lsblk_tree_and_skips_other_lsblk_tables_without_new_devices(tmp_path):
    # sosreport stores lsblk, lsblk -t, lsblk -D and lsblk -f -a -l beside lsblk -O -P
    report = tmp_path / "demo"
    shutil.copytree(ROOT / "samples" / "demo-sosreport", report)
    block = report / "sos_commands" / "block"
    (block / "lsblk").write_text(
        "NAME    MAJ:MIN RM  SIZE RO TYPE  MOUNTPOINT\n"
        "sda       8:0    0  3.7T  0 disk\n`-sda1    8:1    0  3.7T  0 part  /\n"
        "sdb       8:16   0  3.7T  0 disk\n`-sdb1    8:17   0  3.7T  0 part\n"
        "  `-md0   9:0    0  3.7T  0 raid1 /var/lib/pgsql\n"
        "sdc       8:32   0  3.7T  0 disk\n`-sdc1    8:33   0  3.7T  0 part\n"
        "  `-md0   9:0    0  3.7T  0 raid1 /var/lib/pgsql\n")
    (block / "lsblk_-t").write_text(
        "NAME ALIGNMENT MIN-IO OPT-IO PHY-SEC LOG-SEC ROTA SCHED       RQ-SIZE  RA WSAME\n"
        "sda          0    512      0     512     512    1 mq-deadline     256 128    0B\n")
    analysis = analyze([str(report)])
    lsblk_sources = [s for s in analysis.sources if s.format == "lsblk"]
    assert len(lsblk_sources) == 2 and all(s.unparsed_candidates == 0 for s in lsblk_sources)
    # lsblk -t is read by the performance stage (queue settings), not as a device table
    assert [s.format for s in analysis.sources if s.name.endswith("lsblk_-t")] == ["lsblk_topology"]
    assert analysis.performance is None or analysis.performance.devices.get("sda") is None or \
        analysis.performance.devices["sda"].settings.get("read_ahead_kb") == 128
    assert sorted((d.hctl, d.name) for d in analysis.topology.devices.values()) == [
        ("2:0:0:0", "sda"), ("2:0:1:0", "sdb"), ("2:0:2:0", "sdc")]


# ---------------------------------------------------------------------------- pasted tables

def test_a_table_pasted_through_a_web_page_reads_as_the_original():
    """Non-breaking spaces (or the replacement characters a wrong decoding left of them), HTML
    character references for lsblk's tree, and rows a poster cut out ("....")."""
    original = "md0 : active raid1 sdb1[1] sda1[0]\n      976630336 blocks super 1.2 [2/2] [UU]\n"
    pasted = original.replace("      ", "\u00a0" * 6)
    mangled = original.replace("      ", "\ufffd" * 6) + "....\n"
    reads = [inventory.read_mdstat(text) for text in (original, pasted, mangled)]
    assert all(r.unparsed == [] for r in reads)
    assert reads[0].records == reads[1].records == reads[2].records
    tree = "NAME   MAJ:MIN RM   SIZE RO TYPE MOUNTPOINT\nsda      8:0    0 465.8G  0 disk\n&#9492;&#9472;sda1   8:1    0   200M  0 part /boot\n"
    assert inventory.read_lsblk(tree).unparsed == []
    assert [d.name for d in inventory.read_lsblk(tree).records] == ["sda"]


def test_lsblk_with_chosen_columns_gives_its_whole_disks_when_name_and_type_lead():
    chosen = "NAME          SIZE TYPE FSTYPE MOUNTPOINT\nsda          10.9T disk\n└─sda1       10.9T part xfs    /mnt\nsr0          1024M rom\n"
    assert [(d.name, d.type) for d in inventory.read_lsblk(chosen).records] == [("sda", "disk"), ("sr0", "rom")]
    # a column that may be empty or hold spaces before TYPE: the row cannot be split safely
    model_first = "NAME MODEL TYPE\nsda Samsung SSD 860 disk\n"
    assert inventory.read_lsblk(model_first).records == []
