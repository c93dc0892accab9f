"""The storage path of every device: unit -> port/link -> enclosure -> adapter -> PCIe bus -> host.

A disk's errors mean something different depending on what stands between it and the machine:
the SATA port and cable of one disk, the controller several ports share, the PCIe slot the
controller sits in, the USB bridge an external disk hides behind, the fabric in front of a SAN LUN,
the hypervisor behind a virtual disk. This module names those parts for every event, so that a
rule about a component ("two or more units behind one adapter failed together") serves every
driver.

Links come only from text that shows both ends, as in the device table:
- `scsi hostN: <driver>` (and 2.4-3.x `scsiN : <driver>`) ties a SCSI host to its driver, and
  `scsi hostN: usb-storage 2-1:1.0` to a USB port;
- a driver's message that names both a SCSI host and a PCI function (qla2xxx [0000:05:00.0]-...:10)
  ties them, and so does the only PCI function a driver ever names (one controller of its kind);
- `pcieport 0000:00:1c.0: AER: ... received: 0000:01:00.0` ties a PCI function to its root port;
- a sysfs device path (`ls -lanR /sys/block`, `udevadm info`) or a /dev/disk/by-path name shows the
  whole chain at once: pci0000:00/0000:00:1c.0/0000:03:00.0/ata3/host2/target2:0:0/2:0:0:0/block/sda.
A link the text does not show stays None, and the report says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..decode.drivers import module_name, transport_of_driver

VIRTUAL_TRANSPORTS = frozenset({"hyperv", "virtio", "pvscsi", "xen", "ibmvscsi"})
SAN_TRANSPORTS = frozenset({"fc", "iscsi"})
# models and vendors of disks that only a hypervisor or a cloud presents
_VIRTUAL_MODEL = re.compile(r"QEMU|VBOX|VMware|Virtual disk|Virtual_disk|Msft|Virtual HD|Google|PersistentDisk"
                            r"|Amazon Elastic Block Store|EBS|Xen|Red Hat VirtIO|BHYVE|Hyper-V", re.I)
# hardware RAID logical drives: the physical disks sit behind the controller, out of Linux's sight
_RAID_VOLUME_MODEL = re.compile(r"LOGICAL VOLUME|PERC|MegaRAID|MR9\d{3}|RAID\s?\d|Smart Array|LSI MR|AVAGO MR"
                                r"|SmartRAID|Adaptec|ServeRAID|Virtual Drive|LOGICAL|PRAID", re.I)


@dataclass
class UnitPath:
    """What stands between one unit and the machine, as far as the text shows it."""

    unit: str
    transport: str | None = None
    virtual: bool = False
    raid_volume: bool = False
    port: str | None = None          # ata3, usb 2-1, rport-2:0-3, session1, sas phy
    enclosure: str | None = None     # the USB bridge at a port, a SAS expander
    adapter: str | None = None       # the controller: host2, pci 0000:00:1f.2, usb bus 2
    pci: str | None = None           # the adapter's PCI function
    bus: str | None = None           # the PCIe root port above it
    driver: str | None = None
    evidence: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("transport", "virtual", "raid_volume", "port", "enclosure",
                                              "adapter", "pci", "bus", "driver", "evidence")}


_SYSFS_PCI = re.compile(r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")


@dataclass
class SysfsChain:
    """The parts a sysfs device path or a by-path name shows for one block device."""

    pcis: list[str] = field(default_factory=list)   # root port first, the device's own function last
    ata_port: str | None = None
    host: int | None = None
    hctl: str | None = None
    usb_port: str | None = None
    rport: str | None = None
    session: str | None = None
    expander: str | None = None
    nvme_ctrl: str | None = None
    virtual: str | None = None       # virtio2, vbd-51712, VMBUS
    transport: str | None = None


def parse_sysfs_path(path: str) -> SysfsChain | None:
    """'../devices/pci0000:00/0000:00:1c.0/0000:03:00.0/ata3/host2/target2:0:0/2:0:0:0/block/sda'
    (or /sys/devices/..., or udevadm's P: /devices/...) -> its parts; None when it is no device path."""
    if "devices/" not in path:
        return None
    chain = SysfsChain()
    for part in path.split("devices/", 1)[1].split("/"):
        if _SYSFS_PCI.fullmatch(part):
            chain.pcis.append(part.lower())
        elif m := re.fullmatch(r"ata(\d+)", part):
            chain.ata_port, chain.transport = part, "sata"
        elif m := re.fullmatch(r"host(\d+)", part):
            chain.host = int(m[1])
        elif re.fullmatch(r"\d+:\d+:\d+:\d+", part):
            chain.hctl = part
        elif re.fullmatch(r"\d+-\d+(?:\.\d+)*", part):
            chain.usb_port, chain.transport = part, "usb"
        elif re.fullmatch(r"rport-\d+:\d+-\d+", part):
            chain.rport, chain.transport = part, "fc"
        elif re.fullmatch(r"session\d+", part):
            chain.session, chain.transport = part, "iscsi"
        elif re.fullmatch(r"expander-\d+:\d+", part):
            chain.expander = part
            chain.transport = chain.transport or "sas"
        elif re.fullmatch(r"(?:end_device|port|phy)-\d+:\d+(?::\d+)?", part):
            chain.transport = chain.transport or "sas"
        elif re.fullmatch(r"nvme\d+", part):
            chain.nvme_ctrl, chain.transport = part, "nvme"
        elif re.fullmatch(r"virtio\d+", part):
            chain.virtual, chain.transport = part, "virtio"
        elif re.fullmatch(r"vbd-\d+", part):
            chain.virtual, chain.transport = part, "xen"
        elif part.startswith("VMBUS"):
            chain.virtual, chain.transport = part, "hyperv"
    return chain


def parse_by_path(name: str) -> SysfsChain | None:
    """A /dev/disk/by-path name -> its parts ('pci-0000:00:1f.2-ata-3', 'pci-0000:03:00.0-sas-phy2-lun-0',
    'pci-0000:00:14.0-usb-0:2:1.0-scsi-0:0:0:0', 'ip-10.0.0.1:3260-iscsi-iqn...-lun-1',
    'pci-0000:05:00.0-fc-0x5006...-lun-0', 'pci-0000:01:00.0-nvme-1', 'virtio-pci-0000:00:05.0',
    'xen-vbd-51712', 'acpi-VMBUS:00-scsi-0:0:0:0')."""
    chain = SysfsChain()
    pcis = _SYSFS_PCI.findall(name)
    chain.pcis = [p.lower() for p in pcis[-1:]]
    if m := re.search(r"-ata-(\d+)", name):
        chain.ata_port, chain.transport = f"ata{m[1]}", "sata"
    elif "-usb" in name:
        chain.transport = "usb"
    elif "-sas-" in name:
        chain.transport = "sas"
        if m := re.search(r"-sas-(exp0x[0-9a-f]+)", name):
            chain.expander = m[1]
    elif "-fc-" in name:
        chain.transport = "fc"
    elif "-iscsi-" in name:
        chain.transport = "iscsi"
    elif "-nvme-" in name:
        chain.transport = "nvme"
    elif name.startswith("virtio-"):
        chain.transport = "virtio"
    elif name.startswith("xen-"):
        chain.transport = "xen"
    elif "VMBUS" in name:
        chain.transport = "hyperv"
    elif not pcis:
        return None
    return chain


class PathModel:
    """Everything the text shows about adapters, ports and buses, and each unit's path from it."""

    def __init__(self) -> None:
        self.host_driver: dict[int, str] = {}
        self.host_description: dict[int, str] = {}
        self.host_usb_port: dict[int, str] = {}
        self.host_pci: dict[int, str] = {}
        self.pci_driver: dict[str, str] = {}
        self.driver_pcis: dict[str, set[str]] = {}
        self.root_port: dict[str, str] = {}          # PCI function -> root port above it
        self.nvme_pci: dict[str, str] = {}
        self.nvme_ctrls: set[str] = set()
        self.nvme_functions: set[str] = set()
        self.usb_bus_pci: dict[int, str] = {}
        self.device_chain: dict[str, SysfsChain] = {}  # disk name or hctl -> what sysfs showed
        self.evidence: dict[str, str] = {}             # "host2 driver" -> "var/log/messages:12"

    # ---- learning
    def learn_event(self, event: dict) -> None:
        where = f"{event.get('source')}:{event.get('line')}"
        host, driver, pci = event.get("host"), event.get("driver"), event.get("pci")
        if event.get("kind") == "attach" and event.get("detail") == "host" and host is not None:
            text = event.get("text") or ""
            if driver:
                self._remember(self.host_driver, int(host), driver, f"host{host} driver", where)
                port = re.search(r"\b(\d+-\d+(?:\.\d+)*):\d+\.\d+\b", text)
                if port:
                    self._remember(self.host_usb_port, int(host), port[1], f"host{host} usb port", where)
            elif text:
                self.host_description.setdefault(int(host), text)
                self.evidence.setdefault(f"host{host} driver", where)
        if host is not None and driver and event.get("kind") != "attach" and event.get("hctl"):
            # a driver's own line about one device (uas_eh_abort_handler, megasas: RESET) shows both
            self._remember(self.host_driver, int(host), _driver_name(driver), f"host{host} driver", where)
        elif host is not None and event.get("kind") == "abort" and str(event.get("detail", "")).startswith("uas"):
            self._remember(self.host_driver, int(host), "uas", f"host{host} driver", where)
        if pci and driver and not event.get("aer_agent"):
            self.pci_driver.setdefault(pci, driver)
            self.driver_pcis.setdefault(driver, set()).add(pci)
            bus = re.search(r"assigned bus number (\d+)", event.get("text") or "")
            if bus:
                self._remember(self.usb_bus_pci, int(bus[1]), pci, f"usb bus {bus[1]} pci", where)
        if pci and host is not None and event.get("kind") != "aer":
            self._remember(self.host_pci, int(host), pci, f"host{host} pci", where)
        if event.get("nvme_ctrl"):
            self.nvme_ctrls.add(event["nvme_ctrl"])
        elif pci and event.get("family") == "nvme" and event.get("kind") != "aer":
            self.nvme_functions.add(pci)   # "nvme 0000:01:00.0: ...": the nvme driver on that function
        if pci and event.get("nvme_ctrl") and event.get("kind") in ("attach", "info"):
            self._remember(self.nvme_pci, event["nvme_ctrl"], pci, f"{event['nvme_ctrl']} pci", where)
        agent = event.get("aer_agent")
        if event.get("kind") == "aer" and pci and agent and agent != pci:
            self._remember(self.root_port, agent, pci, f"{agent} root port", where)

    def learn_chain(self, device: str, chain: SysfsChain, where: str) -> None:
        self.device_chain.setdefault(device, chain)
        if chain.hctl:
            self.device_chain.setdefault(chain.hctl, chain)
        if len(chain.pcis) >= 2:
            self._remember(self.root_port, chain.pcis[-1], chain.pcis[0], f"{chain.pcis[-1]} root port", where)
        if chain.host is not None and chain.pcis:
            self._remember(self.host_pci, chain.host, chain.pcis[-1], f"host{chain.host} pci", where)
        if chain.nvme_ctrl and chain.pcis:
            self._remember(self.nvme_pci, chain.nvme_ctrl, chain.pcis[-1], f"{chain.nvme_ctrl} pci", where)

    def _only_nvme_pci(self, ctrl: str | None) -> str | None:
        """The PCI function of the one NVMe controller a log names, when the nvme driver spoke for
        exactly one function (`nvme 0000:01:00.0: ...`): one drive, one function, the same device."""
        if ctrl and self.nvme_ctrls == {ctrl} and ctrl not in self.nvme_pci:
            return _the_one((self.driver_pcis.get("nvme") or set()) | self.nvme_functions)
        return None

    def _remember(self, mapping: dict, key, value, what: str, where: str) -> None:
        known = mapping.get(key)
        if known is None:
            mapping[key] = value
            self.evidence[what] = where
        elif known != value:
            mapping[key] = None   # two sources disagree: the link is unknown, not guessed
            self.evidence[what] = f"conflicting: {known} / {value}"

    # ---- reading
    def pci_of_host(self, host: int | None) -> str | None:
        if host is None:
            return None
        pci = self.host_pci.get(host)
        if pci:
            return pci
        driver = self.host_driver.get(host)
        pcis = self.driver_pcis.get(driver or "", set())
        return next(iter(pcis)) if len(pcis) == 1 else None   # the only controller of its kind

    def driver_of_host(self, host: int | None) -> str | None:
        if host is None:
            return None
        return self.host_driver.get(host) or self.pci_driver.get(self.host_pci.get(host) or "")

    def transport_of_host(self, host: int | None) -> str | None:
        transport = transport_of_driver(self.driver_of_host(host))
        if transport is None and host is not None:
            transport = transport_of_driver(self.host_description.get(host, "").split(" ")[0]) \
                or transport_of_driver(self.host_description.get(host))
        return transport

    def path(self, event: dict, device=None) -> UnitPath:
        """The path of the unit an event is about (device: its row in the device table, if any)."""
        unit = event.get("unit") or ""
        host = event.get("host")
        host = int(host) if host is not None and host == host else None
        name = event.get("device") or (device.name if device is not None else None)
        chain = self.device_chain.get(event.get("hctl") or "") or self.device_chain.get(name or "")
        path = UnitPath(unit=unit)
        driver = event.get("driver") or self.driver_of_host(host)
        if chain is not None and host is None:
            host = chain.host
        path.driver = driver if driver else (self.pci_driver.get(chain.pcis[-1]) if chain and chain.pcis else None)
        path.transport = (chain.transport if chain else None) or self.transport_of_host(host) \
            or transport_of_driver(event.get("driver"))
        if path.transport is None:
            path.transport = _transport_of_name(event, name)
        model = " ".join(x for x in (getattr(device, "vendor", None), getattr(device, "model", None)) if x)
        if path.transport in VIRTUAL_TRANSPORTS or (chain is not None and chain.virtual) or \
                (model and _VIRTUAL_MODEL.search(model)):
            path.virtual = True
        if model and _RAID_VOLUME_MODEL.search(model) and path.transport not in SAN_TRANSPORTS:
            path.raid_volume = True
        # port / link
        if event.get("ata_port"):
            path.port = event["ata_port"]
        elif chain is not None and chain.ata_port:
            path.port = chain.ata_port
        elif event.get("usb_port"):
            path.port = f"usb {event['usb_port']}"
        elif host is not None and host in self.host_usb_port and self.host_usb_port[host]:
            path.port = f"usb {self.host_usb_port[host]}"
        elif event.get("rport") or (chain and chain.rport):
            path.port = event.get("rport") or chain.rport
        elif event.get("iscsi_session") is not None:
            path.port = f"session{event['iscsi_session']}"
        elif chain is not None and chain.session:
            path.port = chain.session
        elif event.get("phy") is not None and host is not None:
            path.port = f"host{host} phy {event['phy']}"
        # enclosure: the USB bridge at a port, a SAS expander
        if path.port and path.port.startswith("usb "):
            path.enclosure = path.port
        elif chain is not None and chain.expander:
            path.enclosure = chain.expander
        elif event.get("expander"):
            path.enclosure = event["expander"]
        elif event.get("enclosure_id"):
            path.enclosure = f"enclosure {event['enclosure_id']}"
        # adapter and its PCI function
        if path.transport == "nvme":
            ctrl = event.get("nvme_ctrl") or (chain.nvme_ctrl if chain else None)
            path.adapter = ctrl
            path.pci = (self.nvme_pci.get(ctrl or "") if ctrl else None) or (chain.pcis[-1] if chain and chain.pcis else None) \
                or (event.get("pci") if event.get("driver") == "nvme" else None) or self._only_nvme_pci(ctrl)
        elif path.transport == "usb":
            bus = _usb_bus(path.port)
            path.pci = self.usb_bus_pci.get(bus) if bus is not None else None
            path.pci = path.pci or (event.get("pci") if _is_usb_controller(event.get("driver")) else None)
            # an xHCI controller has two root hubs (USB 2 and USB 3 buses): with one host controller
            # in the text, every bus is its
            path.pci = path.pci or self._only_controller(("usb",))
            path.adapter = f"pci {path.pci}" if path.pci else (f"usb bus {bus}" if bus is not None else None)
        else:
            pci = self.pci_of_host(host) or (chain.pcis[-1] if chain and chain.pcis else None) or event.get("pci")
            path.pci = pci
            if path.transport in ("sata", "pata"):
                # libata gives every port a SCSI host of its own: the controller is the adapter
                pci = pci or self._only_controller(("sata", "pata"))
                path.pci = pci
                path.adapter = f"pci {pci}" if pci else "SATA controller (not named in the text)"
            elif host is not None:
                path.adapter = f"host{host}"
            elif pci:
                path.adapter = f"pci {pci}"
            elif event.get("adapter"):
                path.adapter = event["adapter"]   # the adapter's own name: ioc0, a VMBus channel's id
            elif event.get("driver"):
                # "megasas: FW in FAULT state": a driver's line that names no controller is about
                # the one controller that driver drives, when the text shows only one
                only = self._only_function_of(event["driver"])
                if only:
                    path.pci, path.adapter = only, f"pci {only}"
        if path.pci:
            path.bus = self.root_port.get(path.pci) or (chain.pcis[0] if chain and len(chain.pcis) >= 2 else None)
            if path.bus == path.pci:
                path.bus = None
        for what in (f"host{host} driver", f"host{host} pci", f"{path.pci} root port"):
            if what in self.evidence:
                path.evidence.append(f"{what}: {self.evidence[what]}")
        return path

    def _only_function_of(self, driver: str) -> str | None:
        """The PCI function of the one controller this driver drives in the text, if only one."""
        name = _driver_name(driver)
        return _the_one({pci for known, pcis in self.driver_pcis.items() if _driver_name(known) == name for pci in pcis})

    def _only_controller(self, transports: tuple[str, ...]) -> str | None:
        """The PCI function of the one controller of these transports the text names, if only one."""
        return _the_one({pci for pci, driver in self.pci_driver.items() if transport_of_driver(driver) in transports})

    def describe_adapter(self, adapter: str | None, hosts: set[int] | None = None) -> str | None:
        """'the SATA controller at 0000:03:00.0 (ahci, hosts 2-5)' style label for an adapter key."""
        if not adapter:
            return None
        if adapter.startswith("pci "):
            pci = adapter[4:]
            driver = self.pci_driver.get(pci)
            inside = ", ".join(x for x in (driver, _host_range(hosts)) if x)
            return f"{pci} ({inside})" if inside else pci
        if adapter.startswith("host"):
            host = int(adapter[4:])
            driver, pci = self.driver_of_host(host), self.pci_of_host(host)
            inside = ", ".join(x for x in (driver or self.host_description.get(host), pci) if x)
            return f"{adapter} ({inside})" if inside else adapter
        return adapter


def _driver_name(driver: str) -> str:
    """The driver as its module is named (megasas -> megaraid_sas)."""
    return module_name(driver)


def _host_range(hosts: set[int] | None) -> str | None:
    if not hosts:
        return None
    ordered = sorted(hosts)
    if len(ordered) > 2 and ordered[-1] - ordered[0] == len(ordered) - 1:
        return f"hosts {ordered[0]}-{ordered[-1]}"
    return "host " + ", ".join(str(h) for h in ordered) if len(ordered) == 1 else \
        "hosts " + ", ".join(str(h) for h in ordered)


def _usb_bus(port: str | None) -> int | None:
    m = re.match(r"usb (\d+)-", port or "")
    return int(m[1]) if m else None


def _the_one(found: set[str]) -> str | None:
    """The only member of `found`; none when the text leaves several (never guessed)."""
    return next(iter(found)) if len(found) == 1 else None


def _is_usb_controller(driver: str | None) -> bool:
    return bool(driver and re.fullmatch(r"[xeou]hci[_-]\w+|dwc\d\w*", driver))


def _transport_of_name(event: dict, name: str | None) -> str | None:
    name = name or ""
    if event.get("nvme_ctrl") or name.startswith("nvme"):
        return "nvme"
    if name.startswith("vd"):
        return "virtio"
    if name.startswith("xvd"):
        return "xen"
    if name.startswith("hd"):
        return "pata"
    if event.get("ata_port"):
        return "sata"
    if event.get("usb_port"):
        return "usb"
    if event.get("iscsi_session") is not None or event.get("iscsi_conn"):
        return "iscsi"
    if event.get("rport"):
        return "fc"
    return None
