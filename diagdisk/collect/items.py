"""What ``diagdisk collect`` gathers, and where each item lands in the bundle.

Paths follow sosreport's layout wherever sos collects the same thing, so one reader serves both:
sos stores a command's output under ``sos_commands/<plugin>/<mangled command>`` (sos
``_mangle_command``: leading /usr/bin or /sbin dropped, runs of other characters -> ``_``, ``/`` ->
``.``) and copies files at their own path (``proc/mdstat``, ``var/log/messages``). Plugins as in
sos: kernel (dmesg), logs (journalctl), scsi (lsscsi), block (lsblk), md (mdadm), multipath, nvme,
ata. Our own additions: ``smartctl/<dev>.json``, ``dev/kmsg`` (the ring buffer read from /dev/kmsg
when dmesg is refused) and ``manifest.json``.

Performance data (diagdisk.performance): /proc/diskstats twice a few seconds apart, ``iostat -x -t
-y 1 N`` when installed (N = --perf-seconds), the sysstat files, queue settings, lsblk -t, blockdev
--report, dmsetup and lvs (the names behind dm-N), /proc/pressure/io.

Every item is read-only. smartctl is only run with -x/--scan-open (reads logs), sg_logs reads log
pages (LOG SENSE), sg_requests issues REQUEST SENSE, nvme-cli reads log pages; the one exception,
``smartctl -t short``, starts a drive self-test and runs only when --self-test short is given.
"""

from __future__ import annotations

import errno
import glob
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from diagdisk.collect.runner import CommandResult, run_command
from diagdisk.decode.smartctl import decode_smartctl_exit_status


def mangle_command(command: str, name_max: int = 255) -> str:
    """sosreport's command -> file name rule (sos/report/plugins/__init__.py, _mangle_command)."""
    mangled = re.sub(r"^/(usr/|)(bin|sbin)/", "", command)
    mangled = re.sub(r"[^\w\-\.\/]+", "_", mangled)
    mangled = re.sub(r"/", ".", mangled).strip(" ._-")
    return mangled[0:name_max]


@dataclass
class Context:
    root: Path  # "/" on a live host, else a recorded tree
    since: datetime
    timeout: float
    deadline: float  # time.monotonic() value
    search_path: str | None  # PATH for commands; None = the inherited PATH
    run_commands: bool  # False under --root without --bin-dir
    privileged: bool
    self_test: str | None = None
    progress: Callable[[str], None] = lambda line: None
    # Performance: seconds iostat samples for, and whether counters are sampled over time (a live
    # host; a recorded tree does not change). The clock and sleep are the context's so tests fake them.
    perf_seconds: int = 10
    sample_counters: bool = False
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep

    @property
    def live(self) -> bool:
        return self.root == Path("/")

    def host_path(self, path: str) -> Path:
        """A host path (/proc/mdstat) read from the live system or the recorded tree."""
        return self.root / path.lstrip("/")

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def command_timeout(self) -> float:
        return min(self.timeout, self.remaining())

    def run(self, argv: list[str], extra_seconds: float = 0.0) -> CommandResult:
        """Run a command for at most --timeout seconds (plus `extra_seconds` for a command that
        samples for a while by design, as iostat), never past the overall deadline."""
        if not self.run_commands:
            return CommandResult(argv, "skipped", None, 0.0, None, "", "--root without --bin-dir: commands not run")
        return run_command(argv, min(self.timeout + extra_seconds, self.remaining()), self.search_path)


@dataclass
class Artifact:
    path: str  # inside the bundle folder
    data: bytes | None = None
    file: BinaryIO | None = None  # positioned at 0; closed by the writer


@dataclass
class Outcome:
    records: list[dict[str, Any]]
    artifacts: list[Artifact] = field(default_factory=list)
    follow_ups: list[Item] = field(default_factory=list)


@dataclass
class Item:
    name: str
    collect: Callable[[Context], Outcome]


def make_record(name: str, **values: Any) -> dict[str, Any]:
    record = {
        "name": name,
        "kind": None,
        "command": None,
        "source": None,
        "path": None,
        "status": "ok",
        "exit_status": None,
        "duration": 0.0,
        "reason": None,
    }
    record.update(values)
    if isinstance(record["duration"], float):
        record["duration"] = round(record["duration"], 3)
    return record


# --------------------------------------------------------------------------------------------
# Building blocks


def command_item(argv: list[str], path: str, name: str | None = None, keep_failed_output: bool = True) -> Item:
    command = " ".join(argv)

    def collect(ctx: Context) -> Outcome:
        result = ctx.run(argv)
        return command_outcome(name or command, path, result, keep_failed_output)

    return Item(name or command, collect)


def command_outcome(name: str, path: str, result: CommandResult, keep_failed_output: bool = True, **extra: Any) -> Outcome:
    artifacts = []
    stored = None
    has_output = result.stdout is not None and os.fstat(result.stdout.fileno()).st_size > 0
    if has_output and (result.status == "ok" or keep_failed_output):
        artifacts.append(Artifact(path, file=result.stdout))
        stored = path
    elif result.stdout is not None:
        result.stdout.close()
    record = make_record(
        name,
        kind="command",
        command=" ".join(result.argv),
        path=stored,
        status=result.status,
        exit_status=result.exit_status,
        duration=result.duration,
        reason=result.reason,
        stderr=result.stderr or None,
        **extra,
    )
    return Outcome([record], artifacts)


def _read_file(path: Path) -> tuple[BinaryIO | None, str | None]:
    """A temporary copy of a file (a log may grow or rotate while the bundle is written)."""
    try:
        with open(path, "rb") as source:
            copy = tempfile.TemporaryFile()
            while chunk := source.read(1 << 20):
                copy.write(chunk)
    except FileNotFoundError:
        return None, "not present"
    except PermissionError:
        return None, "permission denied"
    except OSError as error:
        return None, error.strerror or str(error)
    copy.seek(0)
    return copy, None


def file_item(host_path: str, name: str | None = None) -> Item:
    def collect(ctx: Context) -> Outcome:
        started = time.monotonic()
        copy, problem = _read_file(ctx.host_path(host_path))
        bundle_path = host_path.lstrip("/")
        record = make_record(
            name or host_path,
            kind="file",
            source=host_path,
            path=None if problem else bundle_path,
            status="skipped" if problem else "ok",
            reason=problem,
            duration=time.monotonic() - started,
        )
        return Outcome([record], [Artifact(bundle_path, file=copy)] if copy else [])

    return Item(name or host_path, collect)


def glob_item(name: str, patterns: list[str], newer_than: datetime | None = None) -> Item:
    """Copy every host file matching the patterns; one manifest record with the per-file problems."""

    def collect(ctx: Context) -> Outcome:
        started = time.monotonic()
        artifacts: list[Artifact] = []
        problems: dict[str, str] = {}
        root = str(ctx.root).rstrip("/")
        matches = sorted({m for p in patterns for m in glob.glob(root + p)})
        for match in matches:
            host = match[len(root):] if root else match
            try:
                info = os.stat(match)
            except OSError as error:
                problems[host] = error.strerror or str(error)
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            if newer_than is not None and info.st_mtime < newer_than.timestamp():
                continue
            copy, problem = _read_file(Path(match))
            if problem:
                problems[host] = problem
            else:
                artifacts.append(Artifact(host.lstrip("/"), file=copy))
        status = "ok" if artifacts else "skipped"
        reason = None if artifacts else ("no readable file" if problems else "not present")
        record = make_record(
            name,
            kind="files",
            source=" ".join(patterns),
            path=[a.path for a in artifacts],
            status=status,
            reason=reason,
            problems=problems or None,
            duration=time.monotonic() - started,
        )
        return Outcome([record], artifacts)

    return Item(name, collect)


def generated_item(name: str, path: str, produce: Callable[[Context], str | None], source: str | None = None) -> Item:
    def collect(ctx: Context) -> Outcome:
        started = time.monotonic()
        try:
            text = produce(ctx)
        except PermissionError:
            text, problem = None, "permission denied"
        except OSError as error:
            text, problem = None, error.strerror or str(error)
        else:
            problem = None if text is not None else "not present"
        record = make_record(
            name,
            kind="generated",
            source=source,
            path=path if text is not None else None,
            status="ok" if text is not None else "skipped",
            reason=problem,
            duration=time.monotonic() - started,
        )
        return Outcome([record], [Artifact(path, data=text.encode())] if text is not None else [])

    return Item(name, collect)


# --------------------------------------------------------------------------------------------
# Host identity


def read_hostname(ctx: Context) -> str:
    if ctx.live:
        import socket

        return socket.gethostname() or "unknown"
    for candidate in ("/proc/sys/kernel/hostname", "/etc/hostname"):
        try:
            name = ctx.host_path(candidate).read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        if name:
            return name
    return "unknown"


def _uname_text(ctx: Context) -> str | None:
    if ctx.live:
        u = os.uname()
        return f"{u.sysname} {u.nodename} {u.release} {u.version} {u.machine} GNU/Linux\n"
    parts = []
    for name in ("ostype", "hostname", "osrelease", "version"):
        try:
            parts.append(ctx.host_path(f"/proc/sys/kernel/{name}").read_text(encoding="utf-8").strip())
        except OSError:
            return None
    return " ".join(parts) + "\n"


def _date_text(ctx: Context) -> str:
    # The format of date(1) in the C locale, which is what sosreport's date file holds.
    return datetime.now().astimezone().strftime("%a %b %e %H:%M:%S %Z %Y") + "\n"


# --------------------------------------------------------------------------------------------
# Kernel log


def _dmesg_item() -> Item:
    def collect(ctx: Context) -> Outcome:
        result = ctx.run(["dmesg"])
        outcome = command_outcome("dmesg", "sos_commands/kernel/dmesg", result, keep_failed_output=False)
        if result.status == "ok":
            return outcome
        # dmesg is refused when kernel.dmesg_restrict=1; /dev/kmsg may still be readable.
        started = time.monotonic()
        text, problem = _read_kmsg(ctx)
        outcome.records.append(
            make_record(
                "kmsg",
                kind="file",
                source="/dev/kmsg",
                path="dev/kmsg" if text else None,
                status="ok" if text else "skipped",
                reason=problem,
                duration=time.monotonic() - started,
            )
        )
        if text:
            outcome.artifacts.append(Artifact("dev/kmsg", data=text))
        return outcome

    return Item("dmesg", collect)


def _read_kmsg(ctx: Context) -> tuple[bytes | None, str | None]:
    path = ctx.host_path("/dev/kmsg")
    try:
        if not ctx.live:
            return path.read_bytes() or None, None
        # /dev/kmsg yields one record per read and blocks at the end unless non-blocking.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, "not present"
    except PermissionError:
        return None, "permission denied"
    except OSError as error:
        return None, error.strerror
    records = []
    try:
        while True:
            try:
                records.append(os.read(fd, 8192))
            except BlockingIOError:
                break
            except OSError as error:
                if error.errno == errno.EPIPE:  # overwritten while reading: skip ahead
                    continue
                break
    finally:
        os.close(fd)
    return b"".join(records) or None, None


# --------------------------------------------------------------------------------------------
# SMART


def smartctl_device_file(name: str, device_type: str | None) -> str:
    base = name.removeprefix("/dev/").replace("/", ".")
    if device_type and "," in device_type:  # e.g. megaraid,0: several drives behind one name
        base += "_" + re.sub(r"\W+", "_", device_type)
    return base


def _sysfs_is_usb(ctx: Context, device: str) -> bool:
    link = ctx.host_path(f"/sys/block/{Path(device).name}")
    try:
        return "/usb" in os.path.realpath(link)
    except OSError:
        return False


def smartctl_device_item(device: dict[str, Any]) -> Item:
    name = device.get("name") or ""
    device_type = device.get("type")
    file_name = smartctl_device_file(name, device_type)
    path = f"smartctl/{file_name}.json"

    def collect(ctx: Context) -> Outcome:
        device_args = ["-d", device_type] if device_type and device_type not in ("scsi", "ata", "nvme") else []
        result = ctx.run(["smartctl", "--json=c", "-x", *device_args, name])
        # A USB bridge that smartctl did not recognize answers as plain SCSI; ask again through SAT.
        if (
            result.exit_status is not None
            and result.exit_status & 0b110
            and device_type == "scsi"
            and _sysfs_is_usb(ctx, name)
        ):
            retry = ctx.run(["smartctl", "--json=c", "-x", "-d", "sat", name])
            if retry.exit_status is not None and not retry.exit_status & 0b110:
                if result.stdout:
                    result.stdout.close()
                result = retry
        bits = decode_smartctl_exit_status(result.exit_status)
        # smartctl sets bits 3-7 to report what it read, so those are not collection failures.
        if result.status == "failed" and result.exit_status is not None and not result.exit_status & 0b111:
            result.status, result.reason = "ok", None
        outcome = command_outcome(f"smartctl {name}", path, result, smartctl_exit_bits=bits)
        if ctx.self_test == "short":
            test = ctx.run(["smartctl", "-t", "short", *device_args, name])
            test_outcome = command_outcome(
                f"self-test short {name}", f"smartctl/{file_name}.self-test-short.txt", test
            )
            outcome.records += test_outcome.records
            outcome.artifacts += test_outcome.artifacts
        return outcome

    return Item(f"smartctl {name}", collect)


def _smartctl_scan_item() -> Item:
    def collect(ctx: Context) -> Outcome:
        result = ctx.run(["smartctl", "--scan-open", "--json"])
        output = result.read_stdout()
        outcome = command_outcome("smartctl scan", "smartctl/scan-open.json", result)
        try:
            devices = json.loads(output).get("devices", []) if output else []
        except (json.JSONDecodeError, AttributeError):
            devices = []
            outcome.records[0]["reason"] = "scan output is not JSON"
        outcome.records[0]["devices_found"] = len(devices)
        outcome.follow_ups = [smartctl_device_item(d) for d in devices if isinstance(d, dict) and d.get("name")]
        return outcome

    return Item("smartctl scan", collect)


# --------------------------------------------------------------------------------------------
# Per-device commands discovered from sysfs and /proc/mdstat


def _sysfs_names(ctx: Context, pattern: str) -> list[str]:
    return sorted(Path(p).name for p in glob.glob(str(ctx.host_path(pattern))))


def _md_arrays(ctx: Context) -> list[str]:
    try:
        text = ctx.host_path("/proc/mdstat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return re.findall(r"^(md\w*)\s*:", text, flags=re.MULTILINE)


def _listing(directory: str) -> Callable[[Context], str | None]:
    """`ls -ln`-style text of a symlink folder (/dev/disk/by-id), the same live or from --root."""

    def produce(ctx: Context) -> str | None:
        folder = ctx.host_path(directory)
        if not folder.is_dir():
            return None
        lines = []
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            info = entry.stat(follow_symlinks=False)
            when = datetime.fromtimestamp(info.st_mtime).strftime("%b %e %H:%M")
            line = f"{stat.filemode(info.st_mode)} {info.st_nlink} {info.st_uid} {info.st_gid} {info.st_size} {when} {entry.name}"
            if entry.is_symlink():
                line += f" -> {os.readlink(entry.path)}"
            lines.append(line)
        return "\n".join(lines) + "\n"

    return produce


def _discovered_items(ctx: Context) -> list[Item]:
    items: list[Item] = []
    for md in _md_arrays(ctx):
        argv = ["mdadm", "-D", f"/dev/{md}"]
        items.append(command_item(argv, f"sos_commands/md/{mangle_command(' '.join(argv))}"))
    for disk in _sysfs_names(ctx, "/sys/class/scsi_disk/*/device/block/*"):
        for argv in (["sg_logs", "-a", f"/dev/{disk}"], ["sg_requests", f"/dev/{disk}"]):
            items.append(command_item(argv, f"sos_commands/scsi/{mangle_command(' '.join(argv))}"))
    for controller in _sysfs_names(ctx, "/sys/class/nvme/nvme*"):
        for log in ("smart-log", "error-log"):
            argv = ["nvme", log, "-o", "json", f"/dev/{controller}"]
            items.append(command_item(argv, f"sos_commands/nvme/{mangle_command(' '.join(argv))}"))
    return items


def _discovery_item() -> Item:
    def collect(ctx: Context) -> Outcome:
        follow_ups = _discovered_items(ctx)
        record = make_record("discover devices", kind="generated", reason=None, devices=len(follow_ups))
        return Outcome([record], follow_ups=follow_ups)

    return Item("discover devices", collect)


# --------------------------------------------------------------------------------------------
# The plan


SCSI_DEVICE_ATTRIBUTES = ("vendor", "model", "rev", "state", "timeout", "ioerr_cnt", "iodone_cnt", "iorequest_cnt")
QUEUE_ATTRIBUTES = ("scheduler", "read_ahead_kb", "max_sectors_kb", "max_hw_sectors_kb", "rotational", "nr_requests",
                    "minimum_io_size", "optimal_io_size")
DISKSTATS_SECONDS = 5.0


# --------------------------------------------------------------------------------------------
# Performance


def _diskstats_twice_item() -> Item:
    """/proc/diskstats twice, DISKSTATS_SECONDS apart, each copy under a `=== <seconds> ===` line,
    so rates exist without sysstat (diagdisk.performance.kernel.read_diskstats)."""

    def collect(ctx: Context) -> Outcome:
        name = "diskstats sampled twice"
        if not ctx.sample_counters:
            return Outcome([make_record(name, kind="generated", source="/proc/diskstats", status="skipped",
                                        reason="a recorded tree does not change: proc/diskstats is copied once")])
        started = time.monotonic()
        copies = []
        for index in range(2):
            if index:
                if ctx.remaining() < DISKSTATS_SECONDS:
                    return Outcome([make_record(name, kind="generated", source="/proc/diskstats", status="skipped",
                                                reason="overall deadline too close to wait between snapshots")])
                ctx.sleep(DISKSTATS_SECONDS)
            try:
                text = ctx.host_path("/proc/diskstats").read_text(encoding="utf-8", errors="replace")
            except OSError as error:
                return Outcome([make_record(name, kind="generated", source="/proc/diskstats", status="skipped",
                                            reason=error.strerror or str(error))])
            copies.append(f"=== {ctx.clock():.3f} ===\n{text}")
        path = "sos_commands/diagdisk/diskstats_twice"
        record = make_record(name, kind="generated", source="/proc/diskstats", path=path,
                             duration=time.monotonic() - started)
        return Outcome([record], [Artifact(path, data="".join(copies).encode())])

    return Item("diskstats sampled twice", collect)


def _iostat_item() -> Item:
    def collect(ctx: Context) -> Outcome:
        seconds = max(int(ctx.perf_seconds), 0)
        argv = ["iostat", "-x", "-t", "-y", "1", str(seconds)]
        if not seconds:
            return Outcome([make_record(" ".join(argv), kind="command", status="skipped", reason="--perf-seconds 0")])
        result = ctx.run(argv, extra_seconds=seconds)
        return command_outcome(" ".join(argv), f"sos_commands/diagdisk/{mangle_command(' '.join(argv))}", result)

    return Item("iostat", collect)


def _performance_items(ctx: Context) -> list[Item]:
    return [
        _diskstats_twice_item(),
        _iostat_item(),
        file_item("/proc/pressure/io"),
        glob_item("sysstat files", ["/var/log/sa/sa*", "/var/log/sysstat/sa*"], newer_than=ctx.since),
        command_item(["lsblk", "-t"], "sos_commands/block/lsblk_-t"),
        command_item(["blockdev", "--report"], "sos_commands/block/blockdev_--report"),
        command_item(["dmsetup", "info", "-c"], "sos_commands/devicemapper/dmsetup_info_-c"),
        command_item(["dmsetup", "table"], "sos_commands/devicemapper/dmsetup_table"),
        command_item(["lvs", "-a", "-o", "+devices"], "sos_commands/lvm2/lvs_-a_-o_devices"),
    ]


def plan(ctx: Context) -> list[Item]:
    since_day = ctx.since.strftime("%Y-%m-%d")
    journal = ["journalctl", "--no-pager", "-k", "-o", "short-iso", "--since", since_day]
    items = [
        generated_item("hostname", "hostname", lambda c: read_hostname(c) + "\n"),
        generated_item("uname", "uname", _uname_text, source="/proc/sys/kernel"),
        generated_item("date", "date", _date_text),
        _smartctl_scan_item(),
        _dmesg_item(),
        command_item(journal, f"sos_commands/logs/{mangle_command(' '.join(journal))}"),
        glob_item("system logs", ["/var/log/messages*", "/var/log/kern.log*", "/var/log/syslog*"], newer_than=ctx.since),
        file_item("/proc/scsi/scsi"),
        file_item("/proc/mdstat"),
        file_item("/proc/partitions"),
        file_item("/proc/diskstats"),
        command_item(["lsscsi", "-i"], "sos_commands/scsi/lsscsi"),
        command_item(["lsscsi", "-g"], "sos_commands/scsi/lsscsi_-g"),
        command_item(["lsblk"], "sos_commands/block/lsblk"),
        command_item(["lsblk", "-J", "-O"], "sos_commands/block/lsblk_-J_-O"),
        command_item(["multipath", "-ll"], "sos_commands/multipath/multipath_-ll"),
        generated_item("/dev/disk/by-id", "sos_commands/block/ls_-lan_.dev.disk.by-id", _listing("/dev/disk/by-id"), "/dev/disk/by-id"),
        generated_item("/dev/disk/by-path", "sos_commands/block/ls_-lan_.dev.disk.by-path", _listing("/dev/disk/by-path"), "/dev/disk/by-path"),
        # each block device's link into /sys/devices shows its whole path: controller, port, host, H:C:T:L
        generated_item("/sys/block", "sos_commands/block/ls_-lan_.sys.block", _listing("/sys/block"), "/sys/block"),
        glob_item("scsi_device attributes", [f"/sys/class/scsi_device/*/device/{a}" for a in SCSI_DEVICE_ATTRIBUTES]),
        glob_item("scsi_disk cache type", ["/sys/class/scsi_disk/*/cache_type"]),
        glob_item("block queue settings", [f"/sys/block/*/queue/{a}" for a in QUEUE_ATTRIBUTES]),
        glob_item("block device timeout and state", ["/sys/block/*/device/timeout", "/sys/block/*/device/state"]),
        _discovery_item(),
        *_performance_items(ctx),
    ]
    return items


ROOT_ADDS = (
    "not running as root: SMART data (smartctl), sense data and error counters (sg_logs, sg_requests), "
    "NVMe logs (nvme-cli), mdadm -D and possibly dmesg need root; rerun with sudo for a complete bundle"
)
