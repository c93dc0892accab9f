"""One device table for the whole report, and every event resolved to the best identity it allows.

Links between names come only from text that shows both at once: an `sd H:C:T:L: [sdX]` line,
lsscsi, lsblk's HCTL column, multipath's path rows, a libata error-handling block that contains one
SCSI device's lines. Where two sources disagree (names move between boots), the link is dropped and
the conflict is recorded; nothing is inferred from order or numbering.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..decode import devnames
from .tables import MdArray, MultipathMap, ScsiDevice
from ..logs.observations import SequenceLinks
from .paths import PathModel


@dataclass
class Device:
    key: str                      # hctl when known, else the best name (sdb, nvme0, ata3)
    hctl: str | None = None
    name: str | None = None
    majmin: str | None = None
    vendor: str | None = None
    model: str | None = None
    revision: str | None = None
    serial: str | None = None
    wwn: str | None = None
    ata_port: str | None = None
    type: str | None = None
    size: str | None = None
    md_member_of: list[str] = field(default_factory=list)
    smart: dict | None = None
    sources: set[str] = field(default_factory=set)



class Topology:
    def __init__(self) -> None:
        self.devices: dict[str, Device] = {}
        self.name_to_hctl: dict[str, str] = {}
        self.hctl_to_name: dict[str, str] = {}
        self.ata_to_hctl: dict[str, str] = {}
        self.ata_to_name: dict[str, str] = {}
        self.pci_to_host: dict[str, int] = {}
        self.adapter_to_host: dict[str, int] = {}   # mpt2sas_cm0 -> SCSI host number
        self.conflicts: list[str] = []
        self.md_arrays: dict[str, MdArray] = {}
        self.multipath: list[MultipathMap] = []
        self.by_id: dict[str, list[str]] = {}      # disk name -> its /dev/disk/by-id names
        self._bad_links: set[tuple[str, str]] = set()
        self.paths = PathModel()

    # ---- building
    def link(self, hctl: str | None, name: str | None, origin: str) -> None:
        if not hctl or not name:
            return
        name = devnames.disk_of(name)
        known_name = self.hctl_to_name.get(hctl)
        known_hctl = self.name_to_hctl.get(name)
        if (known_name and known_name != name) or (known_hctl and known_hctl != hctl):
            if (hctl, name) not in self._bad_links:
                self.conflicts.append(
                    f"{origin}: {hctl} is {name}, but another source says "
                    f"{hctl} is {known_name or '?'} / {name} is {known_hctl or '?'}; left unresolved")
                self._bad_links.add((hctl, name))
            self.hctl_to_name.pop(hctl, None)
            self.name_to_hctl.pop(name, None)
            return
        if (hctl, name) in self._bad_links:
            return
        self.hctl_to_name[hctl] = name
        self.name_to_hctl[name] = hctl

    def device(self, hctl: str | None = None, name: str | None = None) -> Device:
        if name:
            name = devnames.disk_of(name)
        if hctl is None and name is not None:
            hctl = self.name_to_hctl.get(name)
        if name is None and hctl is not None:
            name = self.hctl_to_name.get(hctl)
        key = hctl or name
        device = self.devices.get(key)
        if device is None and hctl and name and name in self.devices:
            device = self.devices.pop(name)  # a name-only device learns its H:C:T:L
            device.key = hctl
            self.devices[hctl] = device
        if device is None:
            device = Device(key=key, hctl=hctl, name=name)
            self.devices[key] = device
        device.hctl = device.hctl or hctl
        device.name = device.name or name
        return device

    def find(self, name_or_hctl: str | None) -> Device | None:
        """The device known under this H:C:T:L or name, without creating one."""
        if not name_or_hctl:
            return None
        # the H:C:T:L entry is the canonical one when a name is linked to it
        return self.devices.get(self.name_to_hctl.get(name_or_hctl, "")) or self.devices.get(name_or_hctl)

    def add_scsi_devices(self, records: list[ScsiDevice], origin: str) -> None:
        for record in records:
            if record.hctl and record.name:
                self.link(record.hctl, record.name, origin)
        for record in records:
            if not record.hctl and not record.name:
                continue  # a damaged row names no device: nothing to attach its details to
            device = self.device(record.hctl or None, record.name)
            for attr in ("vendor", "model", "revision", "serial", "wwn", "size", "majmin"):
                if getattr(device, attr) is None and getattr(record, attr):
                    setattr(device, attr, getattr(record, attr))
            device.wwn = normal_wwn(device.wwn)
            if device.type is None and record.type:
                device.type = _normal_type(record.type)
            device.sources.add(origin)

    def learn_from_events(self, events: list[dict], sequences: list[SequenceLinks] | None = None) -> None:
        """Links from events (or records); `sequences` are what the order of each source's events
        showed (SequenceLinks), computed here from `events` when not given."""
        for event in events:
            if event.get("hctl") and event.get("device"):
                self.link(event["hctl"], event["device"], f'{event["source"]}:{event["line"]}')
        if sequences is None:
            sequences = SequenceLinks.of_events(events)
        self._learn_sequences(sequences)
        for event in events:
            if event.get("pci") and event.get("host") is not None:
                self.pci_to_host.setdefault(event["pci"], event["host"])
        for event in events:
            if event.get("kind") == "attach" and (event.get("hctl") or event.get("device")):
                device = self.device(event.get("hctl"), event.get("device"))
                for attr in ("vendor", "model", "revision"):
                    if getattr(device, attr) is None and event.get(attr):
                        setattr(device, attr, event[attr])
                if device.type is None and event.get("devtype"):
                    device.type = _normal_type(event["devtype"])
                device.sources.add(event["source"])

    def _learn_sequences(self, sequences: list[SequenceLinks]) -> None:
        port_candidates: dict[str, set[str]] = {}
        adapter_hosts: dict[str, set[int]] = {}
        for sequence in sequences:
            for port, hctls in sequence.port_candidates.items():
                port_candidates.setdefault(port, set()).update(hctls)
            for adapter, hosts in sequence.adapter_hosts.items():
                adapter_hosts.setdefault(adapter, set()).update(hosts)
        port_names: dict[str, set[str]] = {}
        for sequence in sequences:
            for port, names in sequence.port_names.items():
                port_names.setdefault(port, set()).update(names)
        for port, names in sorted(port_names.items()):
            # only where no H:C:T:L tied the port: one disk name completed in all its EH blocks
            if len(names) == 1 and port not in port_candidates:
                self.ata_to_name[port] = next(iter(names))
        for port, hctls in sorted(port_candidates.items()):
            if len(hctls) == 1:
                self.ata_to_hctl[port] = next(iter(hctls))
            else:
                self._conflict(f"{port}: its error handling shows several devices "
                               f"({', '.join(sorted(hctls))}); not linked")
        for adapter, hosts in sorted(adapter_hosts.items()):
            if len(hosts) == 1:
                self.adapter_to_host[adapter] = next(iter(hosts))
            elif len(hosts) > 1:
                self._conflict(f"{adapter}: its commands went to several SCSI hosts "
                               f"({', '.join(f'host{h}' for h in sorted(hosts))}); not linked")

    def _conflict(self, message: str) -> None:
        if message not in self.conflicts:
            self.conflicts.append(message)

    # ---- resolving
    def resolve(self, event: dict) -> None:
        """Fill hctl/device of one event from the links, and name the unit it blames."""
        if event.get("host") is None and event.get("pci") in self.pci_to_host:
            event["host"] = self.pci_to_host[event["pci"]]
        if event.get("host") is None and event.get("adapter") in self.adapter_to_host:
            event["host"] = self.adapter_to_host[event["adapter"]]
        if event.get("hctl") is None and event.get("host") is not None and event.get("target") is not None:
            event["hctl"] = self._hctl_from_parts(event)
        if event.get("device") is None and event.get("majmin"):
            major, minor = (int(x) for x in event["majmin"].split(":"))
            name = devnames.name_from_majmin(major, minor)
            if name:
                event["device"] = devnames.disk_of(name)
                event.setdefault("partition", name if name != event["device"] else None)
        if event.get("device") is None and event.get("path_majmin"):
            path = self._multipath_path(event["path_majmin"])
            name = path["device"] if path else devnames.name_from_majmin(*map(int, event["path_majmin"].split(":")))
            if name:
                event["device"] = devnames.disk_of(name)
        if event.get("hctl") is None and event.get("ata_port") in self.ata_to_hctl:
            event["hctl"] = self.ata_to_hctl[event["ata_port"]]
        if event.get("hctl") is None and event.get("device") is None and event.get("ata_port") in self.ata_to_name:
            event["device"] = self.ata_to_name[event["ata_port"]]
        if event.get("device") is None and event.get("hctl") in self.hctl_to_name:
            event["device"] = self.hctl_to_name[event["hctl"]]
        if event.get("hctl") is None and event.get("device") in self.name_to_hctl:
            event["hctl"] = self.name_to_hctl[event["device"]]
        if event.get("nvme_ctrl") is None and event.get("device", "") and event["device"].startswith("nvme"):
            event["nvme_ctrl"] = re.sub(r"n\d+$", "", event["device"])
        if event.get("hctl"):
            parts = [int(x) for x in event["hctl"].split(":")]
            for key, value in zip(("host", "channel", "target", "lun"), parts):
                event[key] = value
        event["unit"] = unit_of(event)

    def _multipath_path(self, majmin: str) -> dict | None:
        for mp in self.multipath:
            for path in mp.paths:
                if path.get("majmin") == majmin:
                    return path
        return None

    def _hctl_from_parts(self, event: dict) -> str | None:
        host, target, lun = event["host"], event["target"], event.get("lun", 0)
        if event.get("channel") is not None:
            return f"{host}:{event['channel']}:{target}:{lun}"
        matches = {h for h in self._known_hctls()
                   if h.split(":")[0] == str(host) and h.split(":")[2] == str(target) and h.split(":")[3] == str(lun)}
        if len(matches) == 1:
            return next(iter(matches))
        # mptscsih and 2.4 "scsi0 (1:0)" omit the channel; every single-channel HBA uses 0
        channels = {h.split(":")[1] for h in self._known_hctls() if h.split(":")[0] == str(host)}
        if channels <= {"0"}:
            return f"{host}:0:{target}:{lun}"
        return None

    def _known_hctls(self) -> set[str]:
        return {d.hctl for d in self.devices.values() if d.hctl} | set(self.hctl_to_name)

    def add_md(self, array: MdArray) -> None:
        known = self.md_arrays.get(array.name)
        if known is None:
            self.md_arrays[array.name] = array
            return
        for member in array.members:
            if member not in known.members:
                known.members.append(member)
        for member in array.failed_members:
            if member not in known.failed_members:
                known.failed_members.append(member)
        known.level = known.level or array.level
        known.expected = known.expected or array.expected
        known.active = known.active if known.active is not None else array.active
        if _STATE_RANK[array.state] > _STATE_RANK[known.state]:
            known.state = array.state

    def attach_md_members(self) -> None:
        for array in self.md_arrays.values():
            for member in array.members:
                device = self.find(devnames.disk_of(member))
                if device is None and re.match(r"(sd|hd|vd|nvme)", member):
                    device = self.device(name=member)
                if device is not None and array.name not in device.md_member_of:
                    device.md_member_of.append(array.name)


_STATE_RANK = {"clean": 0, "recovering": 1, "degraded": 2, "failed": 3}


def _normal_type(text: str) -> str:
    text = text.lower()
    if "direct" in text or text == "disk":
        return "disk"
    if "cd" in text or text == "rom":
        return "cdrom"
    if "enclosure" in text:
        return "enclosure"
    return text


def normal_wwn(text: str | None) -> str | None:
    """A WWN spelt one way: lsblk and by-id write 0x5000c500a1b2c3d4, lsscsi -i and scsi-3... ids
    put the NAA designator type 3 before it (35000c500a1b2c3d4)."""
    if not text:
        return text
    digits = text.lower().removeprefix("0x")
    if len(digits) in (17, 33) and digits.startswith("3") and all(c in "0123456789abcdef" for c in digits):
        digits = digits[1:]
    return "0x" + digits if all(c in "0123456789abcdef" for c in digits) else text


def unit_of(event: dict) -> str | None:
    """The physical unit an event is about, as precisely as its identity allows."""
    if event.get("kind") == "reset" and event.get("detail") in ("host", "controller") \
            and event.get("host") is not None:
        # the command that triggered a host reset names a device, but the whole adapter was reset
        return f"host{int(event['host'])}"
    for key in ("hctl", "device", "nvme_ctrl", "ata_link", "ata_port"):
        value = event.get(key)
        if value:
            if key == "device" and value.startswith("nvme"):
                return re.sub(r"n\d+$", "", value)
            if key == "ata_link":
                return value.split(".")[0]
            return value
    if event.get("majmin"):
        return f"dev {event['majmin']}"
    if event.get("md"):
        return event["md"]
    if event.get("usb_port"):
        return f"usb {event['usb_port']}"
    return None
