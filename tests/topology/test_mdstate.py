"""md array state from kernel messages (diagdisk/mdlog.py), fed by real line shapes."""

from diagdisk.topology.tables import MdArray
from diagdisk.logs.grammar import parse_line
from diagdisk.topology.mdstate import apply_md_events
from diagdisk.topology.devices import Topology


def _events(lines: list[str]) -> list[dict]:
    events = []
    for number, line in enumerate(lines, 1):
        for event in parse_line(line):
            event.update(source="dmesg", line=number)
            events.append(event)
    return events


PRINTOUT_ONE_DOWN = ["RAID1 conf printout:", " --- wd:1 rd:2",
                     " disk 0, wo:0, o:1, dev:sda1", " disk 1, wo:1, o:0, dev:sdb1"]


def test_degraded_printout_of_an_unnamed_array_makes_an_array_with_its_failed_member():
    topology = Topology()
    apply_md_events(_events(PRINTOUT_ONE_DOWN), topology)
    [array] = topology.md_arrays.values()
    assert (array.state, array.failed_members, array.active, array.expected) == ("degraded", ["sdb1"], 1, 2)
    assert array.level == "raid1" and sorted(array.members) == ["sda1", "sdb1"]


def test_healthy_printout_of_an_unnamed_array_adds_nothing():
    topology = Topology()
    apply_md_events(_events(["RAID1 conf printout:", " --- wd:2 rd:2",
                             " disk 0, wo:0, o:1, dev:sda1", " disk 1, wo:0, o:1, dev:sdb1"]), topology)
    assert topology.md_arrays == {}


def test_printout_joins_the_named_array_its_members_belong_to():
    topology = Topology()
    lines = ["md/raid1:md0: Disk failure on sdb1, disabling device.", *PRINTOUT_ONE_DOWN]
    apply_md_events(_events(lines), topology)
    assert list(topology.md_arrays) == ["md0"]
    assert topology.md_arrays["md0"].expected == 2


def test_command_output_state_wins_over_the_log_history():
    topology = Topology()
    topology.add_md(MdArray(name="md0", level="raid1", members=["sda1", "sdb1"], state="clean"))
    apply_md_events(_events(["md/raid1:md0: Disk failure on sdb1, disabling device.", *PRINTOUT_ONE_DOWN]),
                    topology)
    assert topology.md_arrays["md0"].state == "clean" and topology.md_arrays["md0"].failed_members == []
