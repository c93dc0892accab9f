"""Parsers of command outputs that describe the storage topology.

/proc/scsi/scsi, /proc/mdstat, `mdadm -D`, `lsscsi -i`, `lsblk -O -P`, /dev/disk/by-id listings and
`multipath -ll`. These are tables, not log messages: each parser returns plain records and never
guesses a link the text does not show.

Known traps (insights-core got them wrong): in mdstat `[U_]` is by slot number, not by the order
members are listed; `(S)` spares and `(F)` failed members are not active; `lsscsi -i` has a 7th
column (the WWID) after the device node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class ScsiDevice:
    hctl: str
    vendor: str | None = None
    model: str | None = None
    revision: str | None = None
    type: str | None = None
    name: str | None = None
    wwn: str | None = None
    serial: str | None = None
    size: str | None = None


@dataclass
class MdArray:
    name: str
    level: str | None = None
    state: str = "clean"
    members: list[str] = field(default_factory=list)
    failed_members: list[str] = field(default_factory=list)
    spares: list[str] = field(default_factory=list)
    active: int | None = None
    expected: int | None = None
    recovering: bool = False
    from_log: bool = False       # known only from kernel messages, no mdstat or mdadm -D


_PROC_HOST = re.compile(r"Host:\s*scsi(\d+)\s+Channel:\s*(\d+)\s+Id:\s*(\d+)\s+Lun:\s*(\d+)")
_PROC_VENDOR = re.compile(r"Vendor:\s*(.*?)\s*Model:\s*(.*?)\s*Rev:\s*(.*?)\s*$")
_PROC_TYPE = re.compile(r"Type:\s*(\S+)")


def parse_proc_scsi(text: str) -> list[ScsiDevice]:
    devices: list[ScsiDevice] = []
    for line in text.splitlines():
        m = _PROC_HOST.search(line)
        if m:
            devices.append(ScsiDevice(hctl=":".join(str(int(x)) for x in m.groups())))
            continue
        if not devices:
            continue
        m = _PROC_VENDOR.search(line)
        if m:
            devices[-1].vendor, devices[-1].model, devices[-1].revision = (x or None for x in m.groups())
            continue
        m = _PROC_TYPE.search(line)
        if m:
            devices[-1].type = m.group(1)
    return devices


_LSSCSI = re.compile(r"^\[(\d+):(\d+):(\d+):(\d+)\]\s+(\S+)\s+(.*)$")


def parse_lsscsi(text: str) -> list[ScsiDevice]:
    """`lsscsi` / `lsscsi -i` / `lsscsi -g`: [H:C:T:L] type vendor model rev /dev/node [wwid] [/dev/sgN]."""
    devices = []
    for line in text.splitlines():
        m = _LSSCSI.match(line.strip())
        if not m:
            continue
        hctl = ":".join(m.group(i) for i in range(1, 5))
        rest = m.group(6)
        nodes = re.findall(r"/dev/(\S+)", rest)
        node_pos = rest.find("/dev/") if "/dev/" in rest else rest.rfind(" -")
        head = rest[:node_pos].rstrip() if node_pos > 0 else rest
        tail = rest[node_pos:].split() if node_pos > 0 else []
        words = head.split()
        vendor = words[0] if words else None
        revision = words[-1] if len(words) >= 3 else None
        model = " ".join(words[1:-1]) if len(words) >= 3 else (" ".join(words[1:]) or None)
        wwid = next((w for w in tail if not w.startswith("/dev/") and w != "-"), None)
        name = next((n for n in nodes if not n.startswith("sg")), None)
        devices.append(ScsiDevice(hctl=hctl, vendor=vendor, model=model, revision=revision,
                                  type=m.group(5), name=name, wwn=wwid))
    return devices


_PAIR = re.compile(r'([A-Z0-9:_-]+)="((?:[^"\\]|\\.)*)"')


def parse_lsblk_pairs(text: str) -> list[ScsiDevice]:
    """`lsblk -O -P` (KEY="value" pairs); only whole disks with an HCTL or a name are kept."""
    devices = []
    for line in text.splitlines():
        pairs = dict(_PAIR.findall(line))
        if not pairs or pairs.get("TYPE") not in ("disk", "rom", None):
            continue
        name = pairs.get("NAME") or pairs.get("KNAME")
        hctl = pairs.get("HCTL") or ""
        devices.append(ScsiDevice(
            hctl=hctl, name=name, vendor=(pairs.get("VENDOR") or "").strip() or None,
            model=(pairs.get("MODEL") or "").strip() or None, revision=(pairs.get("REV") or "").strip() or None,
            serial=(pairs.get("SERIAL") or "").strip() or None, wwn=(pairs.get("WWN") or "").strip() or None,
            size=pairs.get("SIZE") or None, type=pairs.get("TYPE")))
    return devices


_BY_ID = re.compile(r"(\S+)\s+->\s+\.\./\.\./(\w+)")


def parse_by_id(text: str) -> dict[str, list[str]]:
    """`ls -l /dev/disk/by-id` style listing -> {sdX: [ids]} (whole disks only)."""
    links: dict[str, list[str]] = {}
    for name, target in _BY_ID.findall(text):
        if re.search(r"-part\d+$", name):
            continue
        links.setdefault(target, []).append(name)
    return links


_MDSTAT_ARRAY = re.compile(r"^(md\w+)\s*:\s*(\w+)\s+(?:\((?:auto-)?read-only\)\s+)?(?:(raid\d+|linear|multipath|faulty)\s+)?(.*)$")
_MDSTAT_MEMBER = re.compile(r"(\S+?)\[(\d+)\](\([A-Z]\))*")
_MDSTAT_COUNTS = re.compile(r"\[(\d+)/(\d+)\]\s+\[([U_]+)\]")


def parse_mdstat(text: str) -> list[MdArray]:
    arrays: list[MdArray] = []
    slots: dict[str, dict[int, str]] = {}
    for line in text.splitlines():
        m = _MDSTAT_ARRAY.match(line)
        if m:
            array = MdArray(name=m.group(1), level=m.group(3))
            if m.group(2) == "inactive":
                array.state = "failed"
            member_slots: dict[int, str] = {}
            for member in _MDSTAT_MEMBER.finditer(m.group(4)):
                name, slot, flag = member.group(1), int(member.group(2)), member.group(0)
                array.members.append(name)
                if "(F)" in flag:
                    array.failed_members.append(name)
                elif "(S)" in flag:
                    array.spares.append(name)
                else:
                    member_slots[slot] = name
            slots[array.name] = member_slots
            arrays.append(array)
            continue
        if not arrays:
            continue
        array = arrays[-1]
        m = _MDSTAT_COUNTS.search(line)
        if m:
            array.expected, array.active = int(m.group(1)), int(m.group(2))
            if array.active < array.expected and array.state != "failed":
                array.state = "degraded"
            # [U_] is indexed by slot number: a '_' slot whose member is listed is not in sync
            for slot, flag in enumerate(m.group(3)):
                member = slots[array.name].get(slot)
                if flag == "_" and member and member not in array.failed_members:
                    array.failed_members.append(member)
        if re.search(r"\b(recovery|resync|reshape|rebuild)\s*=", line):
            array.recovering = True
            if array.state == "degraded":
                array.state = "recovering"
    return arrays


def parse_mdadm_detail(text: str) -> MdArray | None:
    m = re.search(r"^(/dev/\S+):", text, re.M)
    if not m:
        return None
    array = MdArray(name=m.group(1).removeprefix("/dev/").removeprefix("md/"))
    level = re.search(r"Raid Level\s*:\s*(\S+)", text)
    array.level = level.group(1) if level else None
    state = re.search(r"^\s*State\s*:\s*(.+)$", text, re.M)
    raid = re.search(r"Raid Devices\s*:\s*(\d+)", text)
    active = re.search(r"Active Devices\s*:\s*(\d+)", text)
    array.expected = int(raid.group(1)) if raid else None
    array.active = int(active.group(1)) if active else None
    for line in text.splitlines():
        row = re.match(r"\s*(\d+|-)\s+\d+\s+\d+\s+(\d+|-)\s+(.*?)\s+(/dev/\S+)\s*$", line)
        if not row:
            continue
        member = row.group(4).removeprefix("/dev/")
        array.members.append(member)
        flags = row.group(3)
        if "faulty" in flags or "removed" in flags:
            array.failed_members.append(member)
        elif "spare" in flags and "rebuilding" not in flags:
            array.spares.append(member)
    state_text = state.group(1).lower() if state else ""
    if "fail" in state_text or "inactive" in state_text:
        array.state = "failed"
    elif "recovering" in state_text or "resync" in state_text or "rebuild" in state_text:
        array.state = "recovering"
        array.recovering = True
    elif "degraded" in state_text:
        array.state = "degraded"
    return array


@dataclass
class MultipathMap:
    name: str
    wwid: str | None
    dm: str | None
    paths: list[dict] = field(default_factory=list)  # {hctl, device, majmin, dm_state, path_state}


_MP_MAP = re.compile(r"^(\S+)\s+(?:\((\w+)\)\s+)?(dm-\d+)\b")
_MP_PATH = re.compile(r"(\d+:\d+:\d+:\d+)\s+(\w+)\s+(\d+:\d+)\s+(\w+)\s+(\w+)\s*(\w+)?")


def parse_multipath(text: str) -> list[MultipathMap]:
    maps: list[MultipathMap] = []
    for line in text.splitlines():
        m = _MP_MAP.match(line)
        if m and not line.startswith((" ", "|", "`")):
            maps.append(MultipathMap(name=m.group(1), wwid=m.group(2), dm=m.group(3)))
            continue
        p = _MP_PATH.search(line)
        if p and maps:
            maps[-1].paths.append({"hctl": p.group(1), "device": p.group(2), "majmin": p.group(3),
                                   "dm_state": p.group(4), "path_state": p.group(5)})
    return maps
