"""Where each datum lives: sosreport paths and content sniffing, kept apart from the parsers.

A sosreport (or a `diagdisk collect` bundle, laid out the same way) is recognised by its paths; a
lone file or a plain folder of logs is recognised by content. Each file found becomes a Source with
a `format` that names the parser to use.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .chunks import detect_compression
from ..errors import InputError, is_partial
from .limits import Limits
from .safeio import looks_like_text, read_text_capped

# Files below a glob of SOSREPORT_PATHS that hold nothing diagdisk reads; checked first. sos's ata
# plugin stores `smartctl -l scterc` (error recovery timeouts: no health) beside `smartctl -a`; its
# logs plugin stores `journalctl --disk-usage` and `ls -alRh /var/log/` beside the journals.
NOT_SOURCES: list[str] = [
    "sos_commands/*/smartctl*scterc*",
    "sos_commands/*/smartctl_--scan*",    # a list of device names
    "sos_commands/logs/journalctl_--disk-usage",
    "sos_commands/logs/ls_*",
]

# (glob below the sosreport root, format). First match wins; order goes from specific to generic.
SOSREPORT_PATHS: list[tuple[str, str]] = [
    # Performance data (diagdisk.performance). sysstat's own text is in the host's locale; sos's
    # sar plugin writes `sar -A` in the C locale beside `sadf -x` as saDD.xml; big files are tailed.
    ("var/log/sa/sar*", "sar"),
    ("var/log/sysstat/sar*", "sar"),
    ("sos_commands/sar/sar*", "sar_c"),
    ("sos_commands/sar/sa*.xml", "sadf_xml"),
    ("sos_strings/sar/*sar[0-9]*.tailed", "sar"),
    ("var/log/sa/sa[0-9]*", "sa_binary"),
    ("var/log/sysstat/sa[0-9]*", "sa_binary"),
    ("sos_commands/diagdisk/iostat*", "iostat"),        # written by diagdisk collect
    ("sos_commands/diagdisk/diskstats*", "diskstats"),  # two snapshots, written by diagdisk collect
    ("proc/diskstats", "diskstats"),
    ("proc/partitions", "partitions"),
    ("proc/pressure/io", "pressure_io"),
    *((f"sys/block/*/queue/{setting}", "queue_setting") for setting in (
        "scheduler", "read_ahead_kb", "max_sectors_kb", "max_hw_sectors_kb", "rotational", "nr_requests",
        "minimum_io_size", "optimal_io_size")),
    ("sos_commands/block/lsblk_-t", "lsblk_topology"),
    ("sos_commands/block/blockdev_--report", "blockdev_report"),
    ("sos_commands/devicemapper/dmsetup_info_-c*", "dmsetup_info"),
    ("sos_commands/devicemapper/dmsetup_table*", "dmsetup_table"),
    ("sos_commands/lvm2/lvs_*", "lvs"),
    ("var/log/messages*", "log"),
    ("var/log/syslog*", "log"),
    ("var/log/kern.log*", "log"),
    # the kernel ring buffer: dmesg and dmesg -T are two prints of it (see mark_duplicate_kernel_logs)
    ("sos_commands/kernel/dmesg*", "log"),
    ("dev/kmsg", "log"),                  # written by diagdisk collect when dmesg is refused
    # the boot-time dmesg some distributions keep (copied by sos's kernel plugin), older boots too
    ("var/log/dmesg", "log"),
    ("var/log/dmesg.*", "log"),
    ("sos_commands/logs/journalctl*", "log"),
    ("sos_commands/logs/*", "log"),
    ("sos_strings/*/*.tailed", "log"),
    ("sos_strings/*.tailed", "log"),
    ("proc/scsi/scsi", "proc_scsi"),
    ("proc/mdstat", "mdstat"),
    ("sos_commands/md/mdadm_-D_*", "mdadm_detail"),
    ("sos_commands/scsi/lsscsi*", "lsscsi"),
    ("sos_commands/block/lsblk*", "lsblk"),
    ("sos_commands/block/ls_-lanR_.sys.block", "sys_block"),
    ("sos_commands/block/ls_-lan_.sys.block", "sys_block"),       # written by diagdisk collect
    ("sos_commands/block/ls_-lanR_.dev*", "by_id"),
    ("sos_commands/block/ls_-l_.dev.disk.by-*", "by_id"),
    ("sos_commands/devices/ls_-lanR_.dev*", "by_id"),
    ("sos_commands/block/ls_-lan_.dev.disk.by-id", "by_id"),      # written by diagdisk collect
    ("sos_commands/block/ls_-lan_.dev.disk.by-path", "by_id"),    # written by diagdisk collect
    ("sos_commands/multipath/multipath_-l*", "multipath"),
    ("sos_commands/multipath/multipath_-v4_-ll", "multipath"),
    # sos runs each smartctl command twice, the second time with -j appended (plugins ata, nvme)
    ("sos_commands/*/smartctl*_-j", "smartctl_json"),
    ("sos_commands/*/smartctl*_--json*", "smartctl_json"),
    ("sos_commands/ata/smartctl*", "smartctl_text"),
    ("sos_commands/block/smartctl*", "smartctl_text"),
    ("sos_commands/nvme/smartctl*", "smartctl_text"),
    ("sos_commands/smart/smartctl*", "smartctl_text"),
    # the collector's device list (smartctl --scan-open): names what was queried, holds no SMART data
    ("smartctl/scan-open.json", "smartctl_scan"),
    ("smartctl/*.json", "smartctl_json"),
    ("date", "date"),
    ("sos_commands/general/date", "date"),
    ("sos_commands/date/date", "date"),
    ("hostname", "hostname"),
    ("sos_commands/host/hostname", "hostname"),
    ("sos_commands/general/hostname", "hostname"),
    ("uname", "uname"),
    ("sos_commands/kernel/uname_-a", "uname"),
    ("sos_reports/manifest.json", "sos_manifest"),
    ("manifest.json", "bundle_manifest"),
]

# What an analysis of a sosreport wants to see, reported as missing when absent.
EXPECTED_SOURCES = {
    "log": "var/log/messages or sos_commands/kernel/dmesg",
    "proc_scsi": "proc/scsi/scsi",
    "mdstat": "proc/mdstat",
}

_LOG_SUFFIX = re.compile(r"(?:\.\d+|-\d{8}|\.gz|\.xz|\.bz2|\.tailed)+$")


@dataclass
class Source:
    path: Path                   # on disk
    name: str                    # as shown to the user: relative to the input root
    format: str
    warnings: list[str] = field(default_factory=list)
    duplicate_of: str | None = None  # not read: another source holds the same lines (its name)
    origin: str = ""                 # the input (path as given) it came from

    @property
    def rotation_key(self) -> tuple:
        """Order rotations oldest first: messages-20240301 < messages.2 < messages.1 < messages."""
        base = _LOG_SUFFIX.sub("", self.name)
        suffix = self.name[len(base):]
        dated = re.search(r"-(\d{8})", suffix)
        numbered = re.search(r"\.(\d+)", suffix)
        if dated:
            return (base, 0, int(dated.group(1)))
        if numbered:
            return (base, 1, -int(numbered.group(1)))
        return (base, 2, 0)


# Prints of one kernel ring buffer: sos's kernel plugin stores both `dmesg` and `dmesg -T`, and
# diagdisk collect copies /dev/kmsg when dmesg is refused. One of them is read.
RING_BUFFER_PATHS = ("sos_commands/kernel/dmesg*", "dev/kmsg")
# The ring buffer as it was at boot (written by the boot scripts of some distributions).
BOOT_DMESG = "var/log/dmesg"
_WALL_CLOCK_DMESG = re.compile(r"(?:^|_)(?:-T|--ctime|--time-format_ctime)(?=_|$)")
_DMESG_STAMP = re.compile(rb"\[[^\]]*\]")
_BOOT_DMESG_MAX_BYTES = 4 << 20


def mark_duplicate_kernel_logs(sources: list[Source]) -> None:
    """Mark the sources of one input that repeat another's kernel messages, so they are not read.

    Of several prints of the ring buffer, the one read is a whole (not cut short in the archive) and
    usable one (not empty, not dmesg's own error message) with wall-clock times (`dmesg -T`), else
    plain `dmesg`, else /dev/kmsg. The boot-time var/log/dmesg is skipped too when every line of it
    opens the print that is read (the ring buffer has not wrapped since boot); otherwise it holds
    boot messages the ring buffer lost, and is read. Each skipped source carries a note naming the
    one read; no data is lost.
    """
    ring = [s for s in sources if s.format == "log" and _matches(s.name, RING_BUFFER_PATHS)]
    if not ring:
        return
    kept = max(ring, key=_ring_buffer_preference)  # the first of equals, in the sources' order
    for source in ring:
        if source is not kept:
            source.duplicate_of = kept.name
            source.warnings.append(f"{source.name}: not read: another print of the kernel ring buffer in "
                                   f"{kept.name}, which was read (reading both would count every kernel "
                                   f"message twice)")
    for source in sources:
        if source.name == BOOT_DMESG and source.format == "log" and _opens_with(kept.path, source.path):
            source.duplicate_of = kept.name
            source.warnings.append(f"{source.name}: not read: its boot messages are the first lines of "
                                   f"{kept.name}, which was read (reading both would count them twice)")


def is_kernel_ring_buffer(name: str) -> bool:
    """A print of the kernel ring buffer (dmesg, /dev/kmsg, var/log/dmesg): no syslog headers."""
    return _matches(name, RING_BUFFER_PATHS) or name == BOOT_DMESG or name.startswith(BOOT_DMESG + ".")


def _matches(name: str, patterns) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _ring_buffer_preference(source: Source) -> tuple[bool, bool, bool, bool]:
    base = PurePosixPath(source.name).name
    whole = not any(is_partial(warning) for warning in source.warnings)  # e.g. cut short in the archive
    return (whole, _usable_dmesg(source.path), bool(_WALL_CLOCK_DMESG.search(base)), base.startswith("dmesg"))


def _usable_dmesg(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
    except OSError:
        return False
    return bool(head.strip()) and not head.startswith(b"dmesg:")


def _dmesg_messages(lines, count: int | None = None) -> list[bytes]:
    """The messages of dmesg lines without their stamps ("[   12.34]" or "[Tue Mar 19 02:17:46 2024]")."""
    messages = []
    for line in lines:
        stamp = _DMESG_STAMP.match(line)
        message = (line[stamp.end():] if stamp else line).strip()
        if message:
            messages.append(message)
            if count is not None and len(messages) == count:
                break
    return messages


def _opens_with(ring: Path, boot: Path) -> bool:
    """True when every message of the boot log is, in order, at the start of the ring buffer print."""
    try:
        with open(boot, "rb") as handle:
            data = handle.read(_BOOT_DMESG_MAX_BYTES + 1)
        if len(data) > _BOOT_DMESG_MAX_BYTES or detect_compression(data[:6]):
            return False
        expected = _dmesg_messages(data.splitlines())
        if not expected:
            return False
        with open(ring, "rb") as handle:
            # the same messages, with stamps that may be longer ("[Tue Mar 19 02:17:46 2024]")
            found = _dmesg_messages(handle.read(2 * len(data) + 65536).splitlines(), len(expected))
    except OSError:
        return False
    return found == expected


def is_sosreport_root(root: Path) -> bool:
    return any((root / marker).exists() for marker in ("sos_commands", "sos_reports", "var/log", "proc"))


def classify_in_tree(relative: str) -> str | None:
    if any(fnmatch.fnmatchcase(relative, pattern) for pattern in NOT_SOURCES):
        return None
    for pattern, fmt in SOSREPORT_PATHS:
        if fnmatch.fnmatchcase(relative, pattern):
            return fmt
    return None


def _is_disk_listing(text: str, cut: bool) -> bool:
    """An `ls -l` listing of /dev/disk/by-id (or sos's recursive `ls -lanR /dev`): its first lines
    are all lines of an ls listing (grammars/by_id.lark) and it lists /dev or links into ../../."""
    from ..larkbuild import parse_table_line
    lines = text.splitlines()
    if cut:
        lines = lines[:-1]  # the last line of a full head may be cut short
    lines = [line.strip() for line in lines if line.strip()][:20]
    if not lines:
        return False
    shows_disks = False
    for line in lines:
        parsed = parse_table_line("by_id", line)
        if parsed is None or parsed[0] == "message":
            return False
        kind, fields = parsed
        if kind == "directory":
            shows_disks = shows_disks or fields["directory"].rstrip("/").startswith("/dev")
        elif kind == "entry" and fields["mode"].startswith("l"):
            shows_disks = shows_disks or str(fields.get("target", "")).startswith("../../")
    return shows_disks


_DISKSTATS_LINE = re.compile(r"^\s*\d+\s+\d+\s+\S+(?:\s+\d+){10,}\s*$", re.M)
# A sar or iostat disk header: the device column (first, or last with -p/--pretty) and a rate column
_SYSSTAT_DEVICE_COLUMNS = frozenset({"DEV", "Device", "Device:"})
_SYSSTAT_RATE_COLUMNS = frozenset({"tps", "r/s", "w/s", "rkB/s", "wkB/s", "rMB/s", "%util", "rd_sec/s", "rsec/s",
                                   "kB_read/s", "MB_read/s", "Blk_read/s"})
# The banner every sysstat command prints first: "Linux 5.14.0 (web9) \t03/19/24 \t_x86_64_\t(4 CPU)"
# (kernel release, host in parentheses, then the date); a kernel log's "Linux version 5.14.0 (...)"
# is not one.
_SYSSTAT_BANNER = re.compile(r"^Linux[ \t]+\S+[ \t]+\([^)\n]*\)[ \t]+\S*\d", re.M)
_CLOCK = re.compile(r"\d{1,2}[:.]\d{2}[:.]\d{2}$")


def _performance_format(text: str, stripped: str) -> str | None:
    """sar or iostat text (a disk header names its columns), sadf -x/-d, /proc/diskstats."""
    if stripped.startswith("<?xml") and "<sysstat" in text:
        return "sadf_xml"
    if stripped.startswith("# hostname;interval;timestamp"):
        return "sadf_csv"
    if len(_DISKSTATS_LINE.findall(text)) >= 2:
        return "diskstats"
    return _sysstat_text(text)


def _sysstat_text(text: str) -> str | None:
    """"sar" or "iostat" for text that one of them printed: a disk header (sar's starts with a
    time), else sysstat's banner (then sar's next line starts with a time, iostat's does not); None
    otherwise. Text with the banner whose disk section is not understood is still sysstat's: its
    reader says so, where a log reader would have read nothing in silence."""
    lines = text.splitlines()
    for line in lines:
        tokens = line.split()
        if not _SYSSTAT_DEVICE_COLUMNS.isdisjoint(tokens) and not _SYSSTAT_RATE_COLUMNS.isdisjoint(tokens):
            return "sar" if _CLOCK.match(tokens[0]) else "iostat"
    banner = _SYSSTAT_BANNER.search(text)
    if banner is None:
        return None
    after = text[banner.end():].split("\n", 1)[1:]
    following = next((line.split() for line in after[0].splitlines() if line.strip()), []) if after else []
    return "sar" if following and _CLOCK.match(following[0]) else "iostat"


def sniff_format(path: Path) -> str | None:
    """Content-based format of a lone file; None when it is not something diagdisk reads."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(8192)
    except OSError:
        return None
    if head[:2] in (b"\x96\xd5", b"\xd5\x96"):
        return "sa_binary"  # sysstat's magic 0xd596, either byte order: a saDD (diagdisk.performance.sabinary)
    if detect_compression(head[:6]):
        return "log"  # compressed rotations are logs; archives are handled before this
    text = head.decode("utf-8", "replace")
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            document = json.loads(read_text_capped(path, str(path), Limits.max_table_bytes))
        except (ValueError, RecursionError, InputError):
            return None
        if isinstance(document, dict) and "sysstat" in document:
            return "sadf_json"
        return "smartctl_json" if isinstance(document, dict) and "smartctl" in document else None
    performance = _performance_format(text, stripped)
    if performance:
        return performance
    if stripped.startswith("Attached devices:") or re.match(r"Host: scsi\d+ Channel:", stripped):
        return "proc_scsi"
    if stripped.startswith("Personalities :"):
        return "mdstat"
    if re.match(r"smartctl \d", stripped) or re.match(r"(?:[^\n]*\n){1,3}smartctl \d", stripped):
        return "smartctl_text"  # perhaps after the prompt and command that printed it
    if re.match(r"/dev/md\S*:\s*\n\s*Version :", stripped):
        return "mdadm_detail"
    if re.match(r"\[\d+:\d+:\d+:\d+\]\s+\S", stripped):
        return "lsscsi"
    if re.match(r'(?:NAME|KNAME)="', stripped):
        return "lsblk"
    if re.search(r"\bdm-\d+ .*\n\s*size=", text):
        return "multipath"
    if _is_disk_listing(text, cut=len(head) == 8192):
        return "by_id"
    if looks_like_text(head):
        return "log"
    return None
