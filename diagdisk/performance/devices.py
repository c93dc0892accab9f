"""What each device is, for judging its figures: its class (from rotational flags, names and models),
whether it serves requests one at a time (a disk's head) or many at once, the latency its class
normally shows, its aliases, and the peer groups it belongs to (md members, LV and dm legs,
multipath paths, disks of one model) so that one member can be compared with the others.

%util says "at least one request was in flight"; that is saturation only for a device that serves
one request at a time. SSDs, NVMe, array LUNs, md and dm serve many at once (and since blk-mq,
kernels 4.17/5.0, their %util is inflated further), so they are judged by queue length and latency.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..decode import devnames

# class -> (label, serves in parallel, await (ms) below which a request is normal for the class).
# The normal await is derived from how the hardware serves a request, not fitted: a 7,200 rpm disk
# takes 4-15 ms a random request (a 4-9 ms seek plus half a turn, 4.2 ms), 100-200 random IOPS,
# so 20 ms leaves room for a short queue; a SATA/SAS SSD 0.1-1 ms (2 ms); an NVMe drive serves in
# tens to hundreds of microseconds (1 ms); an array LUN or a virtual disk answers from a cache in
# front of disks, or from them (10 ms); md and dm add nothing of their own (their members').
CLASSES = {
    "hdd": ("HDD", False, 20.0),
    "ssd": ("SATA/SAS SSD", True, 2.0),
    "nvme": ("NVMe", True, 1.0),
    "md": ("md array", True, 20.0),
    "dm": ("device-mapper", True, 20.0),
    "virtual": ("virtual disk", True, 10.0),
    "raid_lun": ("hardware RAID / array LUN", True, 10.0),
    "unknown": ("unknown (judged as one disk)", False, 20.0),
    "other": ("other (loop, ram, optical)", True, 20.0),
}
# class -> requests the device works on at once, from its hardware (not fitted): a disk head serves
# one (NCQ lets it hold 32, it still serves them one by one); SATA NCQ holds 32 commands; an NVMe
# drive's flash channels and dies keep about 128 busy before more only wait (its queues take up
# to 64K); an array LUN's HBA queue depth is commonly 32 (lpfc lun_queue_depth 30, qla2xxx 32);
# virtio-blk's ring is 128-256 (128). md and dm pass requests on: their members' depths count.
DEPTH = {"hdd": 1, "unknown": 1, "ssd": 32, "nvme": 128, "raid_lun": 32, "virtual": 128}
# class -> (IOPS, MB/s) well below what the least capable device of the class reaches when loaded,
# from the hardware (not fitted): NVMe drives do 100k+ random IOPS and GB/s (a tenth: 10,000 and
# 1,000); SATA SSDs tens of thousands and 400-550 MB/s (5,000 and 200); the smallest cloud and
# virtual volumes about 100 IOPS (EBS magnetic, a small gp2 out of credits) and 40 MB/s (sc1):
# half of that, 50 and 20; an array LUN at least a few disks' 100-200 each (150 and 50). Below
# both, a long queue is not load the device cannot keep up with: the device is slow.
FLOOR = {"ssd": (5000.0, 200.0), "nvme": (10000.0, 1000.0), "virtual": (50.0, 20.0), "raid_lun": (150.0, 50.0)}
# Little's law: the kernel's queue (time requests spent in flight / the interval) is completions x
# the time each took; the printed aqu-sz and IOPS x await differ by rounding and by requests still
# in flight at the interval's edges, tens of percent at most. Three times apart, one of the figures
# cannot be true (an accounting bug, a column misread): derived from how both are counted, not fitted.
LITTLE_TOLERANCE = 3.0
# %util is the share of the interval with a request in flight: it cannot pass 100; sysstat rounds to
# two decimals and sadc's interval jitters by a little, so past 101 the busy-time accounting is
# broken (old IDE drivers, kernel io_ticks bugs) and every figure made from it (svctm) with it.
UTIL_POSSIBLE_MAX = 101.0
_VIRTUAL_MODELS = re.compile(r"virtual|vmware|vbox|qemu|msft|xen|google persistentdisk|elastic block|"
                             r"hyper-v|kvm|bochs|virtio", re.I)
_RAID_MODELS = re.compile(r"logical volume|perc|megaraid|mr9\d|serveraid|\braid\b|smart array|adaptec|asr\d|"
                          r"3ware|9\d{3}-\d+i|avago|lsi logical|virtual drive|open-v|open-\d|2145|2810xiv|"
                          r"flasharray|symmetrix|vraid|syma|invista|ld\b", re.I)
# vendors that sell arrays, not drives (HP, Dell, IBM, Hitachi badge plain drives too)
_ARRAY_VENDORS = re.compile(r"^(netapp|emc|dgc|3pardata|pure|nimble|compelnt|datacore|ddn|infinidat|xtremio)$", re.I)


@dataclass
class PerfDevice:
    name: str                                   # kernel name (sda, dm-2, md0, nvme0n1)
    aliases: list[str] = field(default_factory=list)
    cls: str = "unknown"
    class_reason: str = ""
    model: str | None = None
    vendor: str | None = None
    hctl: str | None = None
    settings: dict = field(default_factory=dict)
    settings_origin: dict = field(default_factory=dict)
    groups: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)      # the devices under a stacked one
    md_level: str | None = None
    stripe_kb: float | None = None

    @property
    def parallel(self) -> bool:
        return CLASSES[self.cls][1]

    @property
    def baseline_ms(self) -> float:
        return CLASSES[self.cls][2]

    @property
    def label(self) -> str:
        return CLASSES[self.cls][0]


def classify(device: PerfDevice, multipath_paths: set[str]) -> None:
    name = device.name
    model = " ".join(x for x in (device.vendor, device.model) if x)
    rotational = device.settings.get("rotational")
    if name.startswith("nvme"):
        device.cls, device.class_reason = "nvme", "NVMe name"
    elif re.fullmatch(r"md\d+|md_d\d+|md/.*", name):
        device.cls, device.class_reason = "md", "md name"
    elif name.startswith("dm-"):
        device.cls, device.class_reason = "dm", "device-mapper name"
    elif re.fullmatch(r"drbd\d+|bcache\d+", name):
        device.cls, device.class_reason = "dm", "DRBD/bcache name: stacked over other devices like device-mapper"
    elif re.fullmatch(r"(?:vd|xvd)[a-z]+", name):
        device.cls, device.class_reason = "virtual", "virtio/Xen name"
    elif re.fullmatch(r"(?:loop|ram|zram|sr|nbd|rbd)\d+", name):
        device.cls, device.class_reason = "other", "loop/ram/optical/network name"
    elif model and _VIRTUAL_MODELS.search(model):
        device.cls, device.class_reason = "virtual", f"model {model}"
    elif model and _RAID_MODELS.search(model):
        device.cls, device.class_reason = "raid_lun", f"model {model}"
    elif name in multipath_paths:
        device.cls, device.class_reason = "raid_lun", "a multipath path (an array LUN)"
    elif device.vendor and _ARRAY_VENDORS.match(device.vendor) and rotational != 0:
        device.cls, device.class_reason = "raid_lun", f"array vendor {device.vendor}"
    elif rotational == 1:
        device.cls, device.class_reason = "hdd", "rotational=1"
    elif rotational == 0:
        device.cls, device.class_reason = "ssd", "rotational=0"
    elif model and re.search(r"\bssd\b|solid state|flash", model, re.I):
        device.cls, device.class_reason = "ssd", f"model {model}"
    else:
        device.cls, device.class_reason = "unknown", "no rotational flag or model"


def disk_of(name: str) -> str:
    return devnames.disk_of(name)
