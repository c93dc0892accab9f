"""What the kernel itself says about block devices: /proc/diskstats (counters since boot; two
snapshots make rates without sysstat), /proc/partitions, the queue settings of
/sys/block/*/queue/*, `lsblk -t`, `blockdev --report`, /proc/pressure/io, and the names behind
numbers (`ls -l /dev` listings, `dmsetup info -c`, `dmsetup table`, `lvs`), each read by its own
header where it has one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .sysstat import RawSample

# /proc/diskstats after major, minor, name (Documentation/admin-guide/iostats.rst)
DISKSTATS_FIELDS = ("reads", "reads_merged", "sectors_read", "ms_reading", "writes", "writes_merged",
                    "sectors_written", "ms_writing", "in_flight", "ms_doing_io", "weighted_ms",
                    "discards", "discards_merged", "sectors_discarded", "ms_discarding", "flushes", "ms_flushing")
_SNAPSHOT = re.compile(r"^=+\s*(?:t=)?(\d+(?:\.\d+)?)\s*=*\s*$")


@dataclass
class Names:
    """Every name a device goes by: kernel name <- major:minor, mapper and LV names, sar's devM-N."""
    by_majmin: dict[str, str] = field(default_factory=dict)    # "8:16" -> "sdb"
    aliases: dict[str, str] = field(default_factory=dict)      # "vg0-root" -> "dm-0"
    legs: dict[str, list[str]] = field(default_factory=dict)   # "dm-0" -> ["8:2", "8:18"] (majmin or names)
    dm_targets: dict[str, str] = field(default_factory=dict)   # "dm-0" -> "striped"
    lv_devices: dict[str, list[str]] = field(default_factory=dict)   # "vg0-root" -> ["sda2", "sdb2"]
    stripes: dict[str, tuple[int, float | None]] = field(default_factory=dict)   # dm name -> (#stripes, size kB)

    def resolve(self, name: str) -> str:
        """The kernel name of `name` (sar's dev8-16, a mapper or LV name, /dev/x)."""
        name = name.removeprefix("/dev/").removeprefix("mapper/")
        match = re.fullmatch(r"dev(\d+)-(\d+)", name)
        if match:
            return self.by_majmin.get(f"{match.group(1)}:{match.group(2)}", name)
        if re.fullmatch(r"\d+:\d+", name):
            return self.by_majmin.get(name, name)
        return self.aliases.get(name, name)


def read_diskstats(text: str, name: str, names: Names) -> tuple[list[RawSample], int, list[str]]:
    """Samples from /proc/diskstats: rates between consecutive snapshots (a bundle's
    `=== <seconds> ===` marked copies), or one since-boot sample per device (interval None) from a
    single snapshot. Also teaches `names` every major:minor. Returns (samples, snapshots, warnings)."""
    snapshots: list[tuple[float | None, int, dict[str, dict]]] = []
    current: dict[str, dict] = {}
    current_time: float | None = None
    first_line = 0
    warnings: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        marker = _SNAPSHOT.match(line)
        if marker:
            if current:
                snapshots.append((current_time, first_line, current))
            current, current_time, first_line = {}, float(marker.group(1)), number
            continue
        parts = line.split()
        if len(parts) < 7 or not parts[0].isdigit() or not parts[1].isdigit():
            continue
        majmin = f"{parts[0]}:{parts[1]}"
        names.by_majmin.setdefault(majmin, parts[2])
        try:
            counters = {k: int(v) for k, v in zip(DISKSTATS_FIELDS, parts[3:])}
        except ValueError:
            continue
        if len(parts) == 7:   # 2.6.x partitions: reads, sectors read, writes, sectors written
            counters = {"reads": int(parts[3]), "sectors_read": int(parts[4]), "writes": int(parts[5]),
                        "sectors_written": int(parts[6])}
        counters["_line"] = number
        current[parts[2]] = counters
        if not first_line:
            first_line = number
    if current:
        snapshots.append((current_time, first_line, current))
    samples: list[RawSample] = []
    if len(snapshots) >= 2:
        for (t0, _, before), (t1, line1, after) in zip(snapshots, snapshots[1:]):
            if t0 is None or t1 is None or t1 <= t0:
                warnings.append(f"{name}:{line1}: snapshot without a later time; no rates from it")
                continue
            for device, now in after.items():
                then = before.get(device)
                if then is None:
                    continue
                samples.append(RawSample(device, t1, t1 - t0, _rates(then, now, t1 - t0), now["_line"]))
    elif snapshots:
        for device, counters in snapshots[0][2].items():
            values = _since_boot(counters)
            if values:
                samples.append(RawSample(device, None, None, values, counters["_line"]))
    return samples, len(snapshots), warnings


def _delta(before: dict, after: dict, key: str) -> int:
    value = after.get(key, 0) - before.get(key, 0)
    return value if value >= 0 else 0   # a counter that wrapped or a device that was replaced


def _rates(before: dict, after: dict, seconds: float) -> dict:
    reads, writes = _delta(before, after, "reads"), _delta(before, after, "writes")
    discards = _delta(before, after, "discards")
    ios = reads + writes + discards
    sectors = _delta(before, after, "sectors_read") + _delta(before, after, "sectors_written") + \
        _delta(before, after, "sectors_discarded")
    ticks = _delta(before, after, "ms_reading") + _delta(before, after, "ms_writing") + \
        _delta(before, after, "ms_discarding")
    values = {"r_s": reads / seconds, "w_s": writes / seconds, "d_s": discards / seconds, "tps": ios / seconds,
              "rkb_s": _delta(before, after, "sectors_read") / 2 / seconds,
              "wkb_s": _delta(before, after, "sectors_written") / 2 / seconds,
              "dkb_s": _delta(before, after, "sectors_discarded") / 2 / seconds,
              "aqu": _delta(before, after, "weighted_ms") / 1000 / seconds,
              "util": min(_delta(before, after, "ms_doing_io") / 10 / seconds, 100.0)}
    if ios:
        values["await"] = ticks / ios
        values["areq_kb"] = sectors / 2 / ios
    if reads:
        values["r_await"] = _delta(before, after, "ms_reading") / reads
    if writes:
        values["w_await"] = _delta(before, after, "ms_writing") / writes
    return values


def _since_boot(counters: dict) -> dict:
    """What counters alone tell without the time since boot: per-request averages."""
    reads, writes = counters.get("reads", 0), counters.get("writes", 0)
    ios = reads + writes + counters.get("discards", 0)
    if not ios or "ms_reading" not in counters:
        return {}
    values = {"await": (counters["ms_reading"] + counters["ms_writing"] + counters.get("ms_discarding", 0)) / ios,
              "areq_kb": (counters["sectors_read"] + counters["sectors_written"]
                          + counters.get("sectors_discarded", 0)) / 2 / ios,
              "svctm": counters["ms_doing_io"] / ios}
    if reads:
        values["r_await"] = counters["ms_reading"] / reads
    if writes:
        values["w_await"] = counters["ms_writing"] / writes
    return values


def read_partitions(text: str, names: Names) -> None:
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0].isdigit() and parts[1].isdigit():
            names.by_majmin.setdefault(f"{parts[0]}:{parts[1]}", parts[3])


_LS_BLOCK = re.compile(r"^b\S*\s+\d+\s+\S+\s+\S+\s+(\d+),\s*(\d+)\s+.*?\s(\S+)$")
_LS_LINK = re.compile(r"^l\S*\s.*\s(\S+)\s+->\s+(?:\.\./)*(dm-\d+|md\d+|sd[a-z]+|nvme\S+)$")


def read_dev_listing(text: str, names: Names) -> None:
    """`ls -l /dev` (sos: ls -lanR /dev): block devices give major:minor -> name, mapper links a name."""
    folder = ""
    for line in text.splitlines():
        if line.endswith(":") and line.startswith("/"):
            folder = line[:-1]
            continue
        block = _LS_BLOCK.match(line)
        if block and folder in ("", "/dev"):
            names.by_majmin.setdefault(f"{block.group(1)}:{block.group(2)}", block.group(3))
            continue
        link = _LS_LINK.match(line)
        if link and folder.endswith(("/mapper", "/dev/md")):
            names.aliases.setdefault(link.group(1), link.group(2))


def read_dmsetup_info(text: str, names: Names) -> None:
    """`dmsetup info -c`: Name Maj Min ... -> the mapper name of dm-<Min>."""
    columns: list[str] = []
    for line in text.splitlines():
        parts = line.split()
        if parts[:1] == ["Name"]:
            columns = parts
            continue
        if columns and "Maj" in columns and "Min" in columns and len(parts) >= len(columns) - 1:
            try:
                major, minor = int(parts[columns.index("Maj")]), int(parts[columns.index("Min")])
            except (ValueError, IndexError):
                continue
            names.aliases.setdefault(parts[0], f"dm-{minor}")
            names.by_majmin.setdefault(f"{major}:{minor}", f"dm-{minor}")


_DM_TABLE = re.compile(r"^(\S+):\s+\d+\s+\d+\s+(\S+)\s*(.*)$")


def read_dmsetup_table(text: str, names: Names) -> None:
    """`dmsetup table`: the devices under each mapping (linear, striped, mirror, multipath legs)."""
    for line in text.splitlines():
        match = _DM_TABLE.match(line)
        if not match:
            continue
        mapping, target, arguments = match.groups()
        legs = re.findall(r"\b(\d+:\d+)\b", arguments)
        key = names.aliases.get(mapping, mapping)
        names.dm_targets.setdefault(key, target)
        known = names.legs.setdefault(key, [])
        known += [leg for leg in legs if leg not in known]
        if target == "striped":
            parts = arguments.split()
            try:
                names.stripes[key] = (int(parts[0]), int(parts[1]) / 2)
            except (ValueError, IndexError):
                pass


_LVS_DEVICE = re.compile(r"/dev/([\w.\-/]+?)\(\d+\)")


def read_lvs(text: str, names: Names) -> None:
    """`lvs -o +devices`: the physical volumes under each logical volume (mapper name VG-LV)."""
    for line in text.splitlines():
        parts = line.split()
        devices = _LVS_DEVICE.findall(line)
        if len(parts) < 2 or not devices or parts[0] == "LV":
            continue
        lv, vg = parts[0].strip("[]"), parts[1]
        mapper = f"{vg.replace('-', '--')}-{lv.replace('-', '--')}"
        known = names.lv_devices.setdefault(mapper, [])
        known += [d for d in devices if d not in known]


@dataclass
class QueueSettings:
    values: dict[str, dict[str, object]] = field(default_factory=dict)    # device -> setting -> value
    origin: dict[str, dict[str, str]] = field(default_factory=dict)      # device -> setting -> file:line

    def set(self, device: str, key: str, value, origin: str) -> None:
        if value is None:
            return
        self.values.setdefault(device, {}).setdefault(key, value)
        self.origin.setdefault(device, {}).setdefault(key, origin)


_QUEUE_PATH = re.compile(r"(?:^|/)sys/block/([^/]+)/queue/([^/]+)$")
QUEUE_FILES = {"scheduler": "scheduler", "read_ahead_kb": "read_ahead_kb", "max_sectors_kb": "max_sectors_kb",
               "max_hw_sectors_kb": "max_hw_sectors_kb", "rotational": "rotational", "nr_requests": "nr_requests",
               "minimum_io_size": "minimum_io_size", "optimal_io_size": "optimal_io_size",
               "logical_block_size": "logical_block_size", "physical_block_size": "physical_block_size",
               "write_cache": "write_cache"}


def queue_file_of(name: str) -> tuple[str, str] | None:
    """(device, setting) of a sys/block/<dev>/queue/<setting> path, for the settings read here."""
    match = _QUEUE_PATH.search(name)
    if not match or match.group(2) not in QUEUE_FILES:
        return None
    return match.group(1), QUEUE_FILES[match.group(2)]


def queue_value(setting: str, text: str):
    text = text.strip()
    if setting == "scheduler":
        active = re.search(r"\[([^\]]+)\]", text)
        return active.group(1) if active else (text.split()[0] if text.split() else None)
    if setting == "write_cache":
        return text or None
    try:
        return int(text)
    except ValueError:
        return None


def read_lsblk_topology(text: str, name: str, settings: QueueSettings) -> None:
    """`lsblk -t`: NAME ALIGNMENT MIN-IO OPT-IO PHY-SEC LOG-SEC ROTA SCHED RQ-SIZE RA [WSAME]."""
    columns: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if parts[:1] == ["NAME"]:
            columns = parts
            continue
        if not columns or not parts:
            continue
        device = re.sub(r"^[^\w]+", "", parts[0])   # tree drawing: `├─sda1`, `` `-sda1 ``
        if len(parts) < len(columns) - 1:
            continue
        row = dict(zip(columns, parts))
        if len(parts) == len(columns) - 1 and "SCHED" in columns:
            # an empty SCHED (dm and md devices on old kernels) shifts the rest: read from the right
            row = dict(zip(columns[:columns.index("SCHED")], parts))
            row.update(zip(reversed(columns[columns.index("SCHED") + 1:]), reversed(parts)))
        origin = f"{name}:{number}"
        settings.set(device, "rotational", _int(row.get("ROTA")), origin)
        if row.get("SCHED") not in (None, "", "none") or row.get("SCHED") == "none":
            settings.set(device, "scheduler", row.get("SCHED"), origin)
        settings.set(device, "read_ahead_kb", _int(row.get("RA")), origin)
        settings.set(device, "nr_requests", _int(row.get("RQ-SIZE")), origin)
        settings.set(device, "minimum_io_size", _int(row.get("MIN-IO")), origin)
        settings.set(device, "optimal_io_size", _int(row.get("OPT-IO")), origin)


def read_blockdev_report(text: str, name: str, settings: QueueSettings) -> None:
    """`blockdev --report`: RO RA SSZ BSZ StartSec Size Device; RA counts 512-byte sectors."""
    columns: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if "RA" in parts and "Device" in parts:
            columns = parts
            continue
        if not columns or len(parts) != len(columns):
            continue
        row = dict(zip(columns, parts))
        device = row["Device"].removeprefix("/dev/").removeprefix("mapper/")
        sectors = _int(row.get("RA"))
        settings.set(device, "read_ahead_kb", sectors // 2 if sectors is not None else None, f"{name}:{number}")


def _int(text):
    try:
        return int(str(text))
    except (TypeError, ValueError):
        return None


def read_pressure(text: str) -> dict:
    """/proc/pressure/io: share of time some (or all) tasks stalled on I/O, over 10, 60 and 300 s."""
    result = {}
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] in ("some", "full"):
            values = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
            try:
                result[parts[0]] = {k: float(v) for k, v in values.items() if k.startswith("avg")}
            except ValueError:
                continue
    return result
