"""Readers of the command outputs that describe the storage topology.

/proc/scsi/scsi, `lsscsi -i`, `lsblk` (-O -P pairs, the default tree, -J JSON), /proc/mdstat,
`mdadm -D`, /dev/disk/by-id listings and `multipath -ll`. These are tables, not log messages: each
reader returns plain records and never guesses a link the text does not show.

Each table is read one line at a time with its grammar, grammars/<table>.lark (the single source of
truth for the line shapes, with accepted and rejected examples in grammars/<table>.examples.yml). A
line yields a kind (the alias of the grammar alternative it matched) and fields (the small named
rules of that alternative; a rule named in the plural, `things: thing*` or `entries: entry*`, is a
list). A small state machine per table assembles the records from the kinds in order. Per-line
rather than whole-text grammars, so that one line of an unknown shape costs that line, not the table.

A non-blank line that no alternative accepts, or an accepted line with nothing to belong to (a
"Vendor:" line before any "Host:" line), is returned in `TableRead.unparsed` with its line number;
nothing is dropped silently. The `parse_*` functions return the records alone.

Known traps (insights-core got them wrong): in mdstat `[U_]` is indexed by slot, not by the order
members are listed; `(S)` spares and `(F)` failed members are not active; `lsscsi -i` has a 7th
column (the WWID) after the device node; mdstat has 2.4 wording (read_ahead, recovery lines
without `super`) and recovery/resync progress lines; `mdadm -D` states combine words, as in
"clean, degraded, recovering".
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Callable, Generic, Iterator, TypeVar

from ..larkbuild import parse_table_line

TABLE_GRAMMARS = ("proc_scsi", "lsscsi", "lsblk", "mdstat", "mdadm_detail", "by_id", "multipath")



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
    majmin: str | None = None


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
    # members holding a slot that is not in sync: being rebuilt, or waiting to be (not failed)
    out_of_sync: list[str] = field(default_factory=list)


@dataclass
class MultipathMap:
    name: str
    wwid: str | None
    dm: str | None
    # {hctl, device, majmin, dm_state, path_state, online_state}; None where multipath prints a
    # placeholder ("#:#:#:#", "-") for a path whose device is gone
    paths: list[dict] = field(default_factory=list)


Records = TypeVar("Records")


@dataclass
class TableRead(Generic[Records]):
    records: Records
    unparsed: list[tuple[int, str]] = field(default_factory=list)   # (line number, line)


# What a table goes through on its way from a terminal to a web page and back: non-breaking
# spaces (or the replacement characters a wrong decoding left of them), HTML character references
# for lsblk's tree ("&#9492;&#9472;"), and lines of dots where the poster cut rows out.
_PASTED_SPACES = re.compile("[\u00a0\ufffd]")
_HTML_REFERENCE = re.compile(r"&#(\d{2,6});|&#x([0-9a-fA-F]{2,5});")
_ELISION = re.compile(r"\s*(?:\.{3,}|…|\[\.\.\.\]|<snip>|\[snip\])\s*")


def _unpasted(line: str) -> str:
    if "&#" in line:
        line = _HTML_REFERENCE.sub(lambda m: chr(int(m[1]) if m[1] else int(m[2], 16)), line)
    return _PASTED_SPACES.sub(" ", line)


def _table_lines(grammar: str, text: str) -> Iterator[tuple[int, str, tuple[str, dict] | None]]:
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() and not _ELISION.fullmatch(line):
            line = _unpasted(line)
            yield number, line, parse_table_line(grammar, line)


def _hctl(host: int, channel: int, target: int, lun: int) -> str:
    return f"{int(host)}:{int(channel)}:{int(target)}:{int(lun)}"


# --------------------------------------------------------------------------------------------
# /proc/scsi/scsi


def read_proc_scsi(text: str) -> TableRead[list[ScsiDevice]]:
    devices: list[ScsiDevice] = []
    unparsed: list[tuple[int, str]] = []
    for number, line, parsed in _table_lines("proc_scsi", text):
        if parsed is None:
            unparsed.append((number, line))
            continue
        kind, fields = parsed
        if kind == "host":
            devices.append(ScsiDevice(hctl=_hctl(fields["host"], fields["channel"], fields["target"], fields["lun"])))
        elif kind in ("identity", "type") and not devices:
            unparsed.append((number, line))
        elif kind == "identity":
            device = devices[-1]
            device.vendor, device.model, device.revision = (
                fields.get("vendor"), fields.get("model"), fields.get("revision"))
        elif kind == "type":
            devices[-1].type = fields["devtype"]
    return TableRead(devices, unparsed)


def parse_proc_scsi(text: str) -> list[ScsiDevice]:
    return read_proc_scsi(text).records


# --------------------------------------------------------------------------------------------
# lsscsi

_UNKNOWN_IDENTITY = frozenset({"vendor?", "model?", "rev?"})


def split_identity(text: str) -> tuple[str | None, str | None, str | None]:
    """Vendor, model, revision of lsscsi's identity columns: vendor padded to 8, model to 16,
    revision to 4, one space apart. Text whose padding was lost is split at spaces instead: the
    first word is the vendor, the last the revision."""
    if len(text) > 9 and text[8] == " " and (len(text) <= 25 or text[25] == " "):
        parts = [text[:8], text[9:25], text[26:30]]
    else:
        words = text.split()
        parts = [words[0] if words else "", " ".join(words[1:-1]) if len(words) >= 3 else " ".join(words[1:]),
                 words[-1] if len(words) >= 3 else ""]
    cleaned = [p.strip() for p in parts]
    vendor, model, revision = (None if not p or p in _UNKNOWN_IDENTITY else p for p in cleaned)
    return vendor, model, revision


def read_lsscsi(text: str) -> TableRead[list[ScsiDevice]]:
    """`lsscsi` with any of -i (WWID), -g (sg node), -d (major:minor), -s (size)."""
    devices: list[ScsiDevice] = []
    unparsed: list[tuple[int, str]] = []
    for number, line, parsed in _table_lines("lsscsi", text):
        if parsed is None:
            unparsed.append((number, line))
            continue
        kind, fields = parsed
        if kind != "device":
            continue  # hosts, attribute lines and NVMe namespaces (not SCSI) carry no SCSI device
        vendor, model, revision = split_identity(fields["identity"])
        node = fields["node"]
        name = node.removeprefix("/dev/") if node.startswith("/dev/") else None
        extras = [str(e) for e in fields["extras"]]
        wwid = next((e for e in extras if e != "-" and not e.startswith("/dev/") and not _is_size(e)), None)
        size = next((e for e in extras if _is_size(e)), None)
        devices.append(ScsiDevice(hctl=fields["address"].strip("[]"), vendor=vendor, model=model,
                                  revision=revision, type=fields["devtype"], name=name, wwn=wwid, size=size))
    return TableRead(devices, unparsed)


_LSSCSI_SIZE = re.compile(r"\d+(?:\.\d+)?[kMGTPEZY]?i?B")


def _is_size(column: str) -> bool:
    return bool(_LSSCSI_SIZE.fullmatch(column))


def parse_lsscsi(text: str) -> list[ScsiDevice]:
    """`lsscsi` / `lsscsi -i` / `lsscsi -g`: [H:C:T:L] type vendor model rev /dev/node [wwid] [/dev/sgN]."""
    return read_lsscsi(text).records


# --------------------------------------------------------------------------------------------
# lsblk

_WHOLE_DISK_TYPES = ("disk", "rom")
_DEFAULT_COLUMNS = ["NAME", "MAJ:MIN", "RM", "SIZE", "RO", "TYPE"]
_LSBLK_ESCAPE = re.compile(rb"\\x([0-9a-fA-F]{2})|\\(.)")


def _lsblk_unquote(quoted: str) -> str:
    """A -P value: quotes removed, \\xHH byte escapes and backslashed characters restored."""
    raw = quoted[1:-1].encode("utf-8", "surrogateescape")
    restored = _LSBLK_ESCAPE.sub(lambda m: bytes([int(m[1], 16)]) if m[1] else m[2], raw)
    return restored.decode("utf-8", "replace")


def _is_default_table(columns: list[str]) -> bool:
    return columns[:6] == _DEFAULT_COLUMNS and columns[6:] in ([], ["MOUNTPOINT"], ["MOUNTPOINTS"])


# columns lsblk always fills with one word: a row splits on spaces up to the last of them
_ONE_WORD_COLUMNS = {"NAME", "KNAME", "MAJ:MIN", "RM", "SIZE", "RO", "TYPE"}
_TREE_PREFIX = re.compile(r"^(?:[│|]\s+)*(?:├─|└─|\|-|`-)")


def _custom_column_row(columns: list[str], line: str) -> ScsiDevice | None:
    """A whole disk from `lsblk -o NAME,SIZE,TYPE,...`: read when NAME and TYPE come before any
    column that may be empty or hold spaces."""
    if "NAME" not in columns or "TYPE" not in columns:
        return None
    leading = columns[:columns.index("TYPE") + 1]
    if not set(leading) <= _ONE_WORD_COLUMNS:
        return None
    words = _TREE_PREFIX.sub("", line.strip()).split()
    if len(words) < len(leading):
        return None
    values = dict(zip(leading, words))
    if values["TYPE"] not in _WHOLE_DISK_TYPES or not re.fullmatch(r"[A-Za-z][\w.:-]*", values["NAME"]):
        return None
    return ScsiDevice(hctl="", name=values["NAME"], size=values.get("SIZE"), type=values["TYPE"],
                      majmin=values.get("MAJ:MIN"))


_PCI_VENDOR_ID = re.compile(r"0x[0-9a-fA-F]{4}")
_PCI_VENDOR_DISKS = {"0x1af4": "virtio disk"}   # the PCI vendor id virtio devices carry


def _lsblk_device(values: dict[str, Any]) -> ScsiDevice | None:
    """A whole disk from one device's columns (keys upper-case as -P prints them); None otherwise."""
    def text(key: str) -> str | None:
        value = values.get(key)
        if value is None:
            return None
        return str(value).strip() or None

    if text("TYPE") not in (*_WHOLE_DISK_TYPES, None):
        return None
    vendor, model = text("VENDOR"), text("MODEL")
    if vendor is not None and _PCI_VENDOR_ID.fullmatch(vendor):
        # lsblk shows a virtio disk's /sys/block/vdX/device/vendor: the PCI vendor id of virtio
        # (0x1af4), no vendor's name; such a disk has no model of its own either
        vendor, model = None, model or _PCI_VENDOR_DISKS.get(vendor.lower())
    return ScsiDevice(hctl=text("HCTL") or "", name=text("NAME") or text("KNAME"), vendor=vendor,
                      model=model, revision=text("REV"), serial=text("SERIAL"), wwn=text("WWN"),
                      size=text("SIZE"), type=text("TYPE"), majmin=text("MAJ:MIN") or text("MAJ_MIN"))


def read_lsblk(text: str) -> TableRead[list[ScsiDevice]]:
    """`lsblk -O -P` pairs, the default `lsblk` tree or list, or `lsblk -J` JSON; whole disks only.

    Rows under a header with other columns (lsblk -t, -D, -f) carry nothing the topology uses and
    are not read."""
    if text.lstrip().startswith("{"):
        return _read_lsblk_json(text)
    devices: list[ScsiDevice] = []
    unparsed: list[tuple[int, str]] = []
    columns: list[str] | None = None
    for number, line, parsed in _table_lines("lsblk", text):
        kind, fields = parsed if parsed is not None else (None, {})
        if kind == "header":
            columns = fields["columns"]
            continue
        if columns is not None and not _is_default_table(columns):
            device = _custom_column_row(columns, line)
            if device is not None:
                devices.append(device)
            continue
        if kind is None:
            unparsed.append((number, line))
        elif kind == "pairs":
            device = _lsblk_device({p["key"]: _lsblk_unquote(p["value"]) for p in fields["pairs"]})
            if device is not None:
                devices.append(device)
        elif kind == "row" and fields["devtype"] in _WHOLE_DISK_TYPES:
            devices.append(ScsiDevice(hctl="", name=fields["name"], size=str(fields["size"]), type=fields["devtype"],
                                      majmin=fields.get("majmin")))
    return TableRead(devices, unparsed)


def _read_lsblk_json(text: str) -> TableRead[list[ScsiDevice]]:
    lines = text.splitlines()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:     # nesting deep enough to exhaust the stack
        line_no = getattr(exc, "lineno", 1)
        return TableRead([], [(line_no, lines[line_no - 1] if 0 < line_no <= len(lines) else "")])
    entries = data.get("blockdevices") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        first = next((n for n, line in enumerate(lines, 1) if line.strip()), 1)
        return TableRead([], [(first, lines[first - 1] if lines else "")])
    devices: list[ScsiDevice] = []
    pending = deque(entries)     # children follow their parents' siblings: disks come first
    while pending:
        entry = pending.popleft()
        if not isinstance(entry, dict):
            continue
        device = _lsblk_device({str(k).upper(): v for k, v in entry.items() if k != "children"})
        if device is not None:
            devices.append(device)
        if isinstance(entry.get("children"), list):
            pending.extend(entry["children"])
    return TableRead(devices, [])


def parse_lsblk_pairs(text: str) -> list[ScsiDevice]:
    """`lsblk -O -P` (KEY="value" pairs), and the other lsblk shapes; only whole disks are kept."""
    return read_lsblk(text).records


# --------------------------------------------------------------------------------------------
# /dev/disk/by-id listings


def _is_by_id_folder(directory: str) -> bool:
    return directory.rstrip("/").endswith("by-id")


def _is_by_path_folder(directory: str) -> bool:
    return directory.rstrip("/").endswith("by-path")


def read_by_id(text: str, folder: str = "by-id") -> TableRead[dict[str, list[str]]]:
    """`ls -l /dev/disk/by-id`, or the by-id folders of a recursive `ls -lR /dev` -> {sdX: [ids]}
    (whole disks only: the -partN links are left out). With folder="by-path", the same of
    /dev/disk/by-path: {sdX: [pci-0000:00:1f.2-ata-3, ...]}.

    In a recursive listing only the lines of those folders are parsed: the rest of /dev is no
    by-id name, and a few thousand lines of it are not worth a grammar each."""
    wanted = _is_by_path_folder if folder == "by-path" else _is_by_id_folder
    links: dict[str, list[str]] = {}
    unparsed: list[tuple[int, str]] = []
    directory: str | None = None    # None: the listing of a single folder, named by the file
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if directory is not None and not wanted(directory) and not stripped.endswith(":"):
            continue
        parsed = parse_table_line("by_id", stripped)
        if parsed is None:
            unparsed.append((number, line))
            continue
        kind, fields = parsed
        if kind == "directory":
            directory = fields["directory"]
        elif kind == "entry" and fields.get("target") and fields["mode"].startswith("l"):
            name = fields["name"]
            if re.search(r"-part\d+$", name):
                continue
            links.setdefault(PurePosixPath(fields["target"]).name, []).append(name)
    return TableRead(links, unparsed)


def read_sysfs_links(text: str) -> TableRead[dict[str, str]]:
    """`ls -lanR /sys/block` (sos's block plugin) -> {sdX: '../devices/pci0000:00/.../block/sdX'}:
    each block device's link into the sysfs device tree, which shows its whole path."""
    links: dict[str, str] = {}
    unparsed: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("total"):
            continue
        parsed = parse_table_line("by_id", stripped)
        if parsed is None:
            unparsed.append((number, line))
            continue
        kind, fields = parsed
        if kind == "entry" and fields.get("target") and "devices/" in str(fields["target"]):
            links.setdefault(fields["name"], str(fields["target"]))
    return TableRead(links, unparsed)


def parse_by_id(text: str) -> dict[str, list[str]]:
    """`ls -l /dev/disk/by-id` style listing -> {sdX: [ids]} (whole disks only)."""
    return read_by_id(text).records


# --------------------------------------------------------------------------------------------
# /proc/mdstat

_SYNC_ACTIONS = ("recovery", "recover", "resync", "reshape")    # rebuilding redundancy; check/repair scrub
_NO_SLOT_FLAGS = frozenset({"F", "S", "R", "J"})                 # faulty, spare, replacement, journal


@dataclass
class _MdstatEntry:
    array: MdArray
    inactive: bool
    members: list[dict] = field(default_factory=list)   # {device, number, flags}
    slots: str | None = None
    sync_action: str | None = None

    def apply(self, fields: dict) -> None:
        if fields.get("expected") is not None:
            self.array.expected, self.array.active = fields["expected"], fields["working"]
            self.slots = fields["slots"]
        if fields.get("action") is not None:
            self.sync_action = fields["action"]


def _out_of_sync(members: list[dict], slots: str | None) -> list[str]:
    """Listed members that the slot map does not show in sync.

    The map is indexed by slot; the number in brackets is the device's number in the superblock.
    That number is its slot while it has held that slot since the array was created; a disk added
    later is numbered from raid_disks up, past the end of the map. So a member whose number points
    at a '_' slot is out of sync, and so are the members numbered past the map when they alone
    account for what the map leaves out. When the numbers do not account for exactly the members
    the map leaves out, none is named rather than a wrong one."""
    if not slots:
        return []
    holding = [m for m in members if not _NO_SLOT_FLAGS & set(m["flags"])]
    excess = len(holding) - slots.count("U")
    if excess <= 0:
        return []
    at_gap = [m["device"] for m in holding if m["number"] < len(slots) and slots[m["number"]] == "_"]
    if len(at_gap) == excess:
        return at_gap
    unplaced = [m["device"] for m in holding if m["number"] >= len(slots) or m["device"] in at_gap]
    return unplaced if len(unplaced) == excess else []


def _finish_mdstat(entry: _MdstatEntry) -> MdArray:
    array = entry.array
    array.members = [m["device"] for m in entry.members]
    array.failed_members = [m["device"] for m in entry.members if "F" in m["flags"]]
    if entry.inactive:
        # an array that is not running serves no data; its members carry (S) for want of a slot
        array.state = "failed"
        return array
    array.spares = [m["device"] for m in entry.members if "S" in m["flags"] and "F" not in m["flags"]]
    array.recovering = entry.sync_action in _SYNC_ACTIONS
    if array.expected is not None:
        if array.active < array.expected or "_" in (entry.slots or ""):
            array.state = "recovering" if array.recovering else "degraded"
        array.out_of_sync = _out_of_sync(entry.members, entry.slots)
    elif array.failed_members and array.level in ("raid0", "linear"):
        array.state = "failed"    # no redundancy: a failed member fails the array
    return array


def read_mdstat(text: str) -> TableRead[list[MdArray]]:
    entries: list[_MdstatEntry] = []
    unparsed: list[tuple[int, str]] = []
    for number, line, parsed in _table_lines("mdstat", text):
        if parsed is None:
            unparsed.append((number, line))
            continue
        kind, fields = parsed
        if kind == "array":
            entry = _MdstatEntry(MdArray(name=fields["md"], level=fields.get("level")),
                                 inactive=fields["activity"] == "inactive", members=fields["members"])
            entry.apply(fields)     # 2.2-era copies carry the block line on the array line
            entries.append(entry)
        elif kind in ("blocks", "sync"):
            if not entries:
                unparsed.append((number, line))
            else:
                entries[-1].apply(fields)
    return TableRead([_finish_mdstat(e) for e in entries], unparsed)


def parse_mdstat(text: str) -> list[MdArray]:
    return read_mdstat(text).records


# --------------------------------------------------------------------------------------------
# mdadm -D

_FAILED_WORDS = frozenset({"inactive", "FAILED", "broken", "Not Started"})
_SYNCING_WORDS = frozenset({"recovering", "resyncing", "reshaping"})


def _array_name(device: str) -> str:
    return device.removeprefix("/dev/").removeprefix("md/")


@dataclass
class _DetailEntry:
    array: MdArray
    states: list[str] | None = None
    rows: list[dict] = field(default_factory=list)


def _finish_detail(entry: _DetailEntry) -> MdArray:
    array = entry.array
    for row in entry.rows:
        device = row.get("member_device")
        if device is None or device == "missing":
            continue    # an empty slot ("removed"), or a device mdadm could not name
        name = device.removeprefix("/dev/")
        words = set(row["member_states"])
        array.members.append(name)
        if "faulty" in words:
            array.failed_members.append(name)
        elif "spare" in words and "rebuilding" in words:
            array.out_of_sync.append(name)
        elif "spare" in words:
            array.spares.append(name)
    if entry.states is None:
        if array.expected is not None and array.active is not None and array.active < array.expected:
            array.state = "degraded"    # no State line: the counts still tell
        return array
    # "resyncing (DELAYED)": the sync waits, nothing is being rebuilt yet
    words = {s.split(" (")[0] for s in entry.states}
    waiting = any("(" in s for s in entry.states)
    array.recovering = bool(words & _SYNCING_WORDS) and not waiting
    if words & _FAILED_WORDS:
        array.state = "failed"
    elif "degraded" in words:
        array.state = "recovering" if array.recovering else "degraded"
    return array


def read_mdadm_detail(text: str) -> TableRead[list[MdArray]]:
    """Every array of an `mdadm -D` file (sosreport's `mdadm -D /dev/md*` holds several)."""
    entries: list[_DetailEntry] = []
    unparsed: list[tuple[int, str]] = []
    for number, line, parsed in _table_lines("mdadm_detail", text):
        if parsed is None:
            unparsed.append((number, line))
            continue
        kind, fields = parsed
        if kind == "array":
            entries.append(_DetailEntry(MdArray(name=_array_name(fields["array_device"]))))
            continue
        if kind == "message":
            continue
        if not entries:
            unparsed.append((number, line))
            continue
        entry = entries[-1]
        if kind == "raid_level":
            entry.array.level = fields["level"]
        elif kind == "raid_devices":
            entry.array.expected = fields["count"]
        elif kind == "active_devices":
            entry.array.active = fields["count"]
        elif kind == "state":
            entry.states = fields["states"]
        elif kind == "member":
            entry.rows.append(fields)
    return TableRead([_finish_detail(e) for e in entries], unparsed)


def parse_mdadm_detail(text: str) -> MdArray | None:
    """The first array of an `mdadm -D` file (see read_mdadm_detail for all of them)."""
    arrays = read_mdadm_detail(text).records
    return arrays[0] if arrays else None


# --------------------------------------------------------------------------------------------
# multipath -ll

_PLACEHOLDERS = frozenset({"#:#:#:#", "-", "#:#"})


def read_multipath(text: str) -> TableRead[list[MultipathMap]]:
    maps: list[MultipathMap] = []
    unparsed: list[tuple[int, str]] = []
    for number, line, parsed in _table_lines("multipath", text):
        if parsed is None:
            unparsed.append((number, line))
            continue
        kind, fields = parsed
        if kind == "map":
            # without "(wwid)" the map is named by its WWID (no alias)
            maps.append(MultipathMap(name=fields["map_name"], wwid=fields.get("wwid", fields["map_name"]),
                                     dm=fields.get("dm")))
        elif kind == "path" and not maps:
            unparsed.append((number, line))
        elif kind == "path":
            known = {k: (None if fields.get(k) in _PLACEHOLDERS else fields.get(k))
                     for k in ("address", "device", "majmin")}
            maps[-1].paths.append({"hctl": known["address"], "device": known["device"], "majmin": known["majmin"],
                                   "dm_state": fields["dm_state"], "path_state": fields["path_state"],
                                   "online_state": fields.get("online_state")})
    return TableRead(maps, unparsed)


def parse_multipath(text: str) -> list[MultipathMap]:
    return read_multipath(text).records


# Source format (diagdisk.sources) -> reader; the format names are the grammar names.
TABLE_READERS: dict[str, Callable[[str], TableRead]] = {
    "proc_scsi": read_proc_scsi,
    "lsscsi": read_lsscsi,
    "lsblk": read_lsblk,
    "mdstat": read_mdstat,
    "mdadm_detail": read_mdadm_detail,
    "by_id": read_by_id,
    "multipath": read_multipath,
}
