"""md array state from kernel messages, for reports that carry no /proc/mdstat or `mdadm -D`.

Named messages (md/raid1:md0: Disk failure on sdb1 ...) update their array. A RAID conf printout
names no array at all ("RAID1 conf printout: / --- wd:1 rd:2 / disk 1, wo:1, o:0, dev:sdb1"): its
members tie it to a named array that lists one of them; otherwise a degraded printout describes an
array of its own, called by its level and members since the log never says its name.
"""

from __future__ import annotations

from .tables import MdArray
from ..logs.observations import Printout, PrintoutCollector
from .devices import Topology

def apply_md_events(events: list[dict], topology: Topology, printouts: list[Printout] | None = None) -> None:
    """Update md arrays from named md events and RAID conf printouts; the printouts are gathered
    from `events` (in line order) unless a PrintoutCollector already gathered them."""
    if printouts is None:
        collector = PrintoutCollector()
        for event in events:
            collector.feed(event)
        printouts = collector.printouts
    for event in events:
        if event.get("md") is not None and not (event["kind"] == "info" and event.get("detail") in (
                "conf_printout", "conf_counts")):
            _apply_named_event(event, topology)
    for printout in printouts:
        _apply_printout(printout, topology)


def _apply_named_event(event: dict, topology: Topology) -> None:
    md = event["md"]
    array = topology.md_arrays.get(md)
    if array is None:
        array = MdArray(name=md, level=event.get("md_level"), from_log=True)
        topology.md_arrays[md] = array
    if not array.from_log:
        return  # the command outputs know the state better than the log history
    member = event.get("partition") or event.get("device")
    if event["kind"] == "md_failure" and member:
        _fail_member(array, member)
    elif event["kind"] == "md_degraded":
        array.state = "degraded"
        if event.get("md_devices_left") is not None:
            array.active = event["md_devices_left"]


def _fail_member(array: MdArray, member: str) -> None:
    if member not in array.failed_members:
        array.failed_members.append(member)
    if member not in array.members:
        array.members.append(member)
    if array.state == "clean":
        array.state = "degraded"


def _apply_printout(printout: Printout, topology: Topology) -> None:
    members = [m for m, _ in printout.members.values()]
    if not members:
        return
    array = next((a for a in topology.md_arrays.values()
                  if set(members) & set(a.members + a.failed_members + a.spares)), None)
    degraded = printout.working is not None and printout.raid_disks is not None \
        and printout.working < printout.raid_disks
    if array is None:
        if not degraded:
            return  # a healthy array the log does not name tells the engineer nothing
        name = f"{printout.level or 'md'} of {', '.join(sorted(members))}"
        array = MdArray(name=name, level=printout.level, from_log=True, members=sorted(members))
        topology.md_arrays[name] = array
    if not array.from_log:
        return
    for member, online in printout.members.values():
        if member not in array.members:
            array.members.append(member)
        if not online:
            _fail_member(array, member)
    if degraded:
        array.state = "degraded" if array.state == "clean" else array.state
        array.active, array.expected = printout.working, printout.raid_disks
