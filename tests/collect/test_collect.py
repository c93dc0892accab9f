"""`diagdisk collect`: deterministic runs on a recorded tree with fake binaries, and real runs on this host.

Fake binaries are small sh scripts put in a --bin-dir; the smartctl one replays a real smartctl JSON
sample (tests/topology/smart/fixtures/SOURCES.md) and logs its argv, so tests can prove what was (not) run.
No assertion depends on how fast the machine is: where a test is about the live host rather than
about running commands, the commands are faked (`instant_commands`) and the deadline's clock stands
still (`frozen_clock`); the timeout tests check what was killed and with which timeout, not how long
the run took.
"""

import concurrent.futures.thread  # noqa: F401  (imported before dropping privileges, see run_unprivileged)
import gzip  # noqa: F401
import json
import os
import re
import shutil
import socket  # noqa: F401
import tarfile
import tempfile
import time
import traceback
from pathlib import Path

import pytest
from click.testing import CliRunner

from diagdisk.cli.collect import collect, parse_since
from diagdisk.collect import items as collect_items
from diagdisk.collect.items import mangle_command
from diagdisk.collect.runner import SYSTEM_COMMAND_FOLDERS, CommandResult, find_executable
from diagdisk.topology.smart import parse_smartctl_json

SMART_FIXTURES = Path(__file__).resolve().parents[1] / "topology" / "smart" / "fixtures"
OLD = time.time() - 400 * 86400


@pytest.fixture
def world_dir():
    """A temporary folder every user can traverse (pytest's tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="diagdisk-collect-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def frozen_clock(monkeypatch):
    """The collection's deadline never comes closer: however loaded the machine, no item is
    skipped for time and every command gets its full timeout."""
    monkeypatch.setattr(collect_items.Context, "remaining", lambda self: 3600.0)


@pytest.fixture
def instant_commands(monkeypatch):
    """Every external command answers at once with a line naming itself (no process runs); the
    argv lists asked for are kept, in the order asked."""
    asked: list[list[str]] = []

    def run_command(argv, timeout, search_path=None):
        asked.append(list(argv))
        output = tempfile.TemporaryFile()
        output.write(f"fake output of {' '.join(argv)}\n".encode())
        output.seek(0)
        return CommandResult(list(argv), "ok", 0, 0.0, output, "")

    monkeypatch.setattr(collect_items, "run_command", run_command)
    return asked


def write(path: Path, text: str, mode: int = 0o644) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def make_root(base: Path) -> Path:
    root = base / "root"
    write(root / "proc/sys/kernel/hostname", "db1\n")
    for name, value in (("ostype", "Linux"), ("osrelease", "5.14.0-362.el9.x86_64"), ("version", "#1 SMP PREEMPT_DYNAMIC")):
        write(root / f"proc/sys/kernel/{name}", value + "\n")
    write(root / "proc/scsi/scsi", "Attached devices:\nHost: scsi0 Channel: 00 Id: 00 Lun: 00\n  Vendor: ATA      Model: Hitachi HDS72105 Rev: A650\n")
    write(root / "proc/mdstat", "Personalities : [raid1]\nmd0 : active raid1 sdb1[1] sda1[0]\n      976630464 blocks [2/2] [UU]\n\nunused devices: <none>\n")
    device = root / "sys/class/scsi_device/0:0:0:0/device"
    for name, value in (("vendor", "ATA"), ("model", "Hitachi HDS72105"), ("rev", "A650"), ("state", "running"),
                        ("timeout", "30"), ("ioerr_cnt", "0x1f"), ("iodone_cnt", "0x3e8"), ("iorequest_cnt", "0x3e8")):
        write(device / name, value + "\n")
    write(root / "sys/class/scsi_disk/0:0:0:0/cache_type", "write back\n")
    (root / "sys/class/scsi_disk/0:0:0:0/device/block/sda").mkdir(parents=True)
    for name, value in (("scheduler", "[mq-deadline] none"), ("read_ahead_kb", "128"), ("max_sectors_kb", "1280"), ("rotational", "1")):
        write(root / f"sys/block/sda/queue/{name}", value + "\n")
    by_id = root / "dev/disk/by-id"
    by_id.mkdir(parents=True)
    os.symlink("../../sda", by_id / "ata-Hitachi_HDS721050DLE630_MSK423Y20S3HBC")
    os.symlink("../../sda", by_id / "wwn-0x5000cca37fca81a8")
    write(root / "var/log/messages", "Nov 21 12:00:01 db1 kernel: sd 0:0:0:0: [sda] tag#3 Sense Key : Medium Error [current]\n")
    old = write(root / "var/log/messages-20240101", "Jan  1 00:00:00 db1 kernel: old\n")
    os.utime(old, (OLD, OLD))
    return root


FAKE_SMARTCTL = """#!/bin/sh
echo "$*" >> "{log}"
case "$*" in
  *--scan-open*) echo '{{"devices": [{{"name": "/dev/sda", "info_name": "/dev/sda [SAT]", "type": "sat", "protocol": "ATA"}}]}}'; exit 0 ;;
  *-x*) cat "{sample}"; exit 216 ;;
  *-t*) echo "Testing has begun."; exit 0 ;;
esac
exit 1
"""


def make_bin(base: Path, smartctl: str | None = None, extra: dict[str, str] | None = None) -> Path:
    bin_dir = base / "bin"
    log = base / "smartctl.log"
    sample = SMART_FIXTURES / "ata-hitachi-hds721050-failing.json"
    write(bin_dir / "smartctl", smartctl or FAKE_SMARTCTL.format(log=log, sample=sample), 0o755)
    write(bin_dir / "dmesg", "#!/bin/sh\necho '[    5.123456] sd 0:0:0:0: [sda] Attached SCSI disk'\n", 0o755)
    write(bin_dir / "mdadm", "#!/bin/sh\necho \"$3:\"\necho '        Raid Level : raid1'\n", 0o755)
    for name, script in (extra or {}).items():
        write(bin_dir / name, script, 0o755)
    return bin_dir


def invoke(args, cwd: Path):
    runner = CliRunner()
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(collect, [str(a) for a in args], catch_exceptions=False)
    finally:
        os.chdir(previous)


def open_bundle(path: Path):
    with tarfile.open(path, "r:gz") as tar:
        members = {m.name: m for m in tar.getmembers()}
        tops = {name.split("/", 1)[0] for name in members}
        assert len(tops) == 1, f"bundle must have one top-level folder, has {tops}"
        top = tops.pop()
        files = {name[len(top) + 1:]: tar.extractfile(m).read() for name, m in members.items() if m.isfile()}
    manifest = json.loads(files["manifest.json"])
    return top, files, manifest, {item["name"]: item for item in manifest["items"]}


# ------------------------------------------------------------------ deterministic: recorded tree


def test_recorded_tree_bundle_layout_manifest_and_smart(world_dir):
    root, bin_dir = make_root(world_dir), make_bin(world_dir)
    result = invoke(["--root", root, "--bin-dir", bin_dir, "-o", world_dir / "out.tar.gz"], world_dir)
    assert result.exit_code == 0, result.output
    top, files, manifest, items = open_bundle(world_dir / "out.tar.gz")
    assert top.startswith("diagdisk-db1-")
    assert manifest["schema"] == "diagdisk.bundle/1" and manifest["host"] == "db1"
    assert manifest["root"] == str(root.resolve())
    for path in ("hostname", "uname", "date", "proc/scsi/scsi", "proc/mdstat", "var/log/messages",
                 "sos_commands/kernel/dmesg", "sos_commands/md/mdadm_-D_.dev.md0", "smartctl/sda.json",
                 "smartctl/scan-open.json", "sys/class/scsi_device/0:0:0:0/device/ioerr_cnt",
                 "sys/class/scsi_disk/0:0:0:0/cache_type", "sys/block/sda/queue/scheduler",
                 "sos_commands/block/ls_-lan_.dev.disk.by-id"):
        assert path in files, path
    assert files["hostname"] == b"db1\n"
    assert files["uname"].split()[2] == b"5.14.0-362.el9.x86_64"
    assert "var/log/messages-20240101" not in files  # older than --since
    assert b"wwn-0x5000cca37fca81a8 -> ../../sda" in files["sos_commands/block/ls_-lan_.dev.disk.by-id"]

    smart = items["smartctl /dev/sda"]
    assert smart["command"] == "smartctl --json=c -x -d sat /dev/sda"
    assert smart["exit_status"] == 216 and smart["status"] == "ok"
    assert smart["smartctl_exit_bits"] == ["disk_failing", "prefail_below_threshold", "error_log_has_errors",
                                           "self_test_log_has_errors"]
    assert parse_smartctl_json(files["smartctl/sda.json"].decode(), "smartctl/sda.json").health == "failed"
    assert items["mdadm -D /dev/md0"]["path"] == "sos_commands/md/mdadm_-D_.dev.md0"
    for record in manifest["items"]:
        assert {"name", "command", "status", "exit_status", "duration", "path", "reason"} <= set(record)


def test_missing_binaries_are_recorded_skips(world_dir):
    root, bin_dir = make_root(world_dir), make_bin(world_dir)
    result = invoke(["--root", root, "--bin-dir", bin_dir, "-o", world_dir / "out.tar.gz"], world_dir)
    assert result.exit_code == 0
    _, files, _, items = open_bundle(world_dir / "out.tar.gz")
    for name, binary in (("lsscsi -i", "lsscsi"), ("multipath -ll", "multipath"), ("sg_logs -a /dev/sda", "sg_logs")):
        assert items[name]["status"] == "skipped"
        assert items[name]["reason"] == f"{binary} not installed"
    assert "sos_commands/scsi/lsscsi" not in files


def test_a_live_run_finds_system_commands_that_the_user_s_path_leaves_out(world_dir, monkeypatch):
    from diagdisk.collect import runner

    assert "/usr/sbin" in SYSTEM_COMMAND_FOLDERS and "/sbin" in SYSTEM_COMMAND_FOLDERS
    system_folder = world_dir / "sbin"
    smartctl = write(system_folder / "smartctl", "#!/bin/sh\nexit 0\n", 0o755)
    monkeypatch.setattr(runner, "SYSTEM_COMMAND_FOLDERS", (str(system_folder),))
    monkeypatch.setenv("PATH", str(world_dir / "user-bin"))  # a user's PATH without sbin folders
    assert find_executable("smartctl", None) == str(smartctl)
    # a recorded run (--bin-dir) finds commands on its own folder only
    assert find_executable("smartctl", str(world_dir / "user-bin")) is None


def test_root_without_bin_dir_runs_no_command(world_dir):
    root = make_root(world_dir)
    result = invoke(["--root", root, "-o", world_dir / "out.tar.gz"], world_dir)
    assert result.exit_code == 0
    _, files, manifest, items = open_bundle(world_dir / "out.tar.gz")
    commands = [r for r in manifest["items"] if r["kind"] == "command"]
    assert commands and all(r["status"] == "skipped" and "commands not run" in r["reason"] for r in commands)
    assert "proc/mdstat" in files


def test_self_test_is_off_by_default_and_explicit_when_asked(world_dir):
    root, bin_dir = make_root(world_dir), make_bin(world_dir)
    log = world_dir / "smartctl.log"
    invoke(["--root", root, "--bin-dir", bin_dir, "-o", world_dir / "a.tar.gz"], world_dir)
    calls = log.read_text().splitlines()
    assert calls == ["--scan-open --json", "--json=c -x -d sat /dev/sda"]
    log.unlink()
    invoke(["--root", root, "--bin-dir", bin_dir, "--self-test", "short", "-o", world_dir / "b.tar.gz"], world_dir)
    assert "-t short -d sat /dev/sda" in log.read_text().splitlines()
    _, files, _, items = open_bundle(world_dir / "b.tar.gz")
    assert items["self-test short /dev/sda"]["status"] == "ok"


def test_hung_smartctl_is_killed_with_its_process_group(world_dir):
    root = make_root(world_dir)
    pid_file = world_dir / "child.pid"
    hung = f"#!/bin/sh\nsleep 1000 &\necho $! > {pid_file}\nexec sleep 1000\n"
    bin_dir = make_bin(world_dir, smartctl=hung)
    result = invoke(["--root", root, "--bin-dir", bin_dir, "--timeout", "1", "-o", world_dir / "out.tar.gz"], world_dir)
    assert result.exit_code == 0
    _, _, _, items = open_bundle(world_dir / "out.tar.gz")
    assert items["smartctl scan"]["status"] == "timeout"
    assert items["smartctl scan"]["reason"].startswith("timed out after 1 s; process group killed")
    child = int(pid_file.read_text())
    # SIGKILL was sent to the group: the child dies when the kernel next schedules it, which a
    # loaded machine may delay; it must die, however long that takes (it would sleep 1000 s)
    waited = 0
    while process_alive(child) and waited < 600:
        time.sleep(0.05)
        waited += 1
    assert not process_alive(child), "the hung command's child survived the timeout"


def process_alive(pid: int) -> bool:
    """True if pid runs; a zombie (killed, not yet reaped by a container's init) counts as dead."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_overall_deadline_bounds_the_run(world_dir):
    root = make_root(world_dir)
    sleeper = "#!/bin/sh\nexec sleep 1000\n"
    bin_dir = make_bin(world_dir, smartctl=sleeper, extra={"dmesg": sleeper, "mdadm": sleeper, "lsblk": sleeper,
                                                          "lsscsi": sleeper, "journalctl": sleeper})
    result = invoke(["--root", root, "--bin-dir", bin_dir, "--timeout", "60", "--deadline", "2",
                     "-o", world_dir / "out.tar.gz"], world_dir)
    assert result.exit_code == 0
    _, _, manifest, _ = open_bundle(world_dir / "out.tar.gz")
    commands = [r for r in manifest["items"] if r["kind"] == "command"]
    assert any(r["status"] == "timeout" for r in commands)
    # each command had what was left of the 2 s, not its own 60 s; none started after the deadline
    for record in commands:
        if record["status"] == "timeout":
            allowed = float(record["reason"].removeprefix("timed out after ").split(" s;")[0])
            assert allowed <= 2, record
        else:
            assert (record["status"], record["reason"]) == ("skipped", "overall deadline reached"), record


@pytest.mark.parametrize("target", ["/proc/diagdisk-no-such-dir/out.tar.gz", "DIR"])
def test_unwritable_output_exits_2_with_one_line(world_dir, target):
    root = make_root(world_dir)
    output = world_dir if target == "DIR" else target
    result = invoke(["--root", root, "-o", output], world_dir)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("diagdisk: error: cannot write bundle")
    assert "Traceback" not in result.output


def test_progress_is_off_when_stderr_is_not_a_terminal(world_dir):
    root = make_root(world_dir)
    result = invoke(["--root", root, "-o", world_dir / "out.tar.gz"], world_dir)
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]  # only the final summary line


# ------------------------------------------------------------------ unprivileged (real permission checks)


def run_unprivileged(args, cwd: Path) -> dict:
    """Run collect as a user without privileges: in-process when not root, else in a forked child as nobody.

    As root, the interpreter, the virtualenv and this checkout may all sit in folders only root can
    enter (/root, a 0700 `mktemp -d`), so the child cannot exec Python as nobody, nor import a module
    it has not imported yet, nor even ask for its working folder: it forks with what collect uses
    already imported (see the imports at the top), enters `cwd` while still root, then drops to
    uid/gid 65534. Whatever goes wrong in the child comes back as its traceback.
    """
    if os.geteuid() != 0:
        result = invoke(args, cwd)
        return {"exit_code": result.exit_code, "stderr": result.stderr, "stdout": result.stdout}
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(read_end)
            os.chdir(cwd)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            result = CliRunner().invoke(collect, [str(a) for a in args], catch_exceptions=False)
            payload = {"exit_code": result.exit_code, "stderr": result.stderr, "stdout": result.stdout}
        except BaseException:  # noqa: BLE001  (anything, so that the parent can say what)
            payload = {"child_failed": traceback.format_exc()}
        try:
            os.write(write_end, json.dumps(payload).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert status == 0 and data, f"unprivileged child died (wait status {status})"
    payload = json.loads(data)
    assert "child_failed" not in payload, "unprivileged child failed:\n" + payload.get("child_failed", "")
    return payload


def test_permission_denied_file_is_a_recorded_skip(world_dir):
    root = make_root(world_dir)
    (root / "proc/mdstat").chmod(0o000)
    out = world_dir / "out"
    out.mkdir(mode=0o777)
    out.chmod(0o777)
    result = run_unprivileged(["--root", root, "-o", out / "b.tar.gz"], world_dir)
    assert result["exit_code"] == 0, result["stderr"]
    _, files, manifest, items = open_bundle(out / "b.tar.gz")
    assert items["/proc/mdstat"]["status"] == "skipped"
    assert items["/proc/mdstat"]["reason"] == "permission denied"
    assert manifest["privileged"] is False
    assert "proc/scsi/scsi" in files


def test_a_user_s_collection_without_the_kernel_log_is_inconclusive_and_says_what_root_would_add(world_dir):
    root = make_root(world_dir)
    for log in (root / "var/log").iterdir():
        log.chmod(0o000)
    write(root / "dev/kmsg", "6,1,1000,-;sd 0:0:0:0: [sda] attached\n", 0o000)
    bin_dir = make_bin(world_dir, extra={
        "dmesg": "#!/bin/sh\necho 'dmesg: read kernel buffer failed: Operation not permitted' >&2\nexit 1\n",
        "journalctl": "#!/bin/sh\necho '-- No entries --'\nexit 0\n"})
    (bin_dir / "smartctl").unlink()
    out = world_dir / "out"
    out.mkdir(mode=0o777)
    out.chmod(0o777)
    result = run_unprivileged(["--root", root, "--bin-dir", bin_dir, "-o", out / "b.tar.gz"], world_dir)
    assert result["exit_code"] == 0, result["stderr"]
    # The report is the bundle's alone (its manifest says who collected it): read here, where the
    # rules are readable even when this checkout sits in a folder only root can enter.
    # test_analyze_flag_reports_on_the_bundle_it_just_wrote covers --analyze itself.
    from diagdisk.cli.main import main
    report = CliRunner().invoke(main, ["analyze", str(out / "b.tar.gz")]).stdout
    assert report
    first = report.splitlines()[0]
    assert first.startswith("INCONCLUSIVE: No verdict: no kernel log line was read (dmesg: "), report
    assert "Operation not permitted" in first and "kmsg: permission denied" in first
    assert "not read: root-only data: not running as root" in report
    assert "HEALTHY" not in report


def test_read_only_output_location_exits_2(world_dir, frozen_clock):
    root = make_root(world_dir)
    read_only = world_dir / "ro"
    read_only.mkdir()
    read_only.chmod(0o555)
    result = run_unprivileged(["--root", root, "-o", read_only / "b.tar.gz"], world_dir)
    assert result["exit_code"] == 2
    lines = result["stderr"].strip().splitlines()
    assert lines == [f"diagdisk: error: cannot write bundle b.tar.gz in the folder {read_only}: Permission denied"]
    assert list(read_only.iterdir()) == []


# ------------------------------------------------------------------ real runs on this machine


def _require_smartctl() -> None:
    """smartctl is the collector's oracle on this host: CI installs it and sets
    DIAGDISK_REQUIRE_ORACLES, so a missing one fails there; a developer's machine may skip."""
    if find_executable("smartctl", None):  # where a live collect looks for it
        return
    if os.environ.get("DIAGDISK_REQUIRE_ORACLES"):
        pytest.fail("smartctl (apt package smartmontools) is required by DIAGDISK_REQUIRE_ORACLES", pytrace=False)
    pytest.skip("smartctl is not installed (set DIAGDISK_REQUIRE_ORACLES=1 to make this a failure)")


def test_real_run_on_this_host_produces_a_valid_bundle(world_dir):
    _require_smartctl()
    # generous bounds: what is checked is what smartctl reports, not how fast it answers here
    result = invoke(["-o", world_dir / "real.tar.gz", "--timeout", "300", "--deadline", "1800"], world_dir)
    assert result.exit_code == 0, result.output
    top, files, manifest, items = open_bundle(world_dir / "real.tar.gz")
    assert top.startswith("diagdisk-")
    assert manifest["root"] is None
    scan = items["smartctl scan"]
    assert scan["status"] == "ok" and scan["exit_status"] == 0
    assert json.loads(files["smartctl/scan-open.json"])["smartctl"]["exit_status"] == 0
    # Every disk smartctl found has its own record, whatever the container exposes (often nothing).
    device_records = [r for r in manifest["items"] if r["name"].startswith("smartctl /dev/")]
    assert len(device_records) == scan["devices_found"]
    for record in device_records:
        assert record["path"] is None or record["path"] in files
    for record in manifest["items"]:
        assert record["status"] in ("ok", "failed", "timeout", "skipped")
        assert record["status"] == "ok" or record["reason"], record
    assert {"hostname", "uname", "date", "manifest.json"} <= set(files)


def test_real_run_unprivileged_says_what_root_would_add(world_dir, frozen_clock, instant_commands):
    """A live run (this host's /proc, /sys, /dev, read as nobody) with its commands faked: what
    is checked is what an unprivileged run says and records, which no command's speed changes."""
    out = world_dir / "out"
    out.mkdir()
    out.chmod(0o777)
    result = run_unprivileged(["-o", out / "u.tar.gz"], world_dir)
    assert result["exit_code"] == 0, result["stderr"]
    first = result["stderr"].splitlines()[0]
    assert first.startswith("diagdisk: not running as root:") and "sudo" in first
    _, files, manifest, items = open_bundle(out / "u.tar.gz")
    assert manifest["privileged"] is False and "hostname" in files
    assert items["lsblk"]["status"] == "ok"
    assert files["sos_commands/block/lsblk"] == b"fake output of lsblk\n"


# ------------------------------------------------------------------ helpers


@pytest.mark.parametrize("command,name", [
    ("mdadm -D /dev/md0", "mdadm_-D_.dev.md0"),
    ("smartctl -a /dev/sda", "smartctl_-a_.dev.sda"),
    ("multipath -ll", "multipath_-ll"),
    ("/usr/sbin/lsblk -J -O", "lsblk_-J_-O"),
])
def test_mangle_command_matches_sosreport(command, name):
    assert mangle_command(command) == name


def test_parse_since():
    from datetime import datetime, timezone

    now = datetime(2026, 11, 21, 12, 0, tzinfo=timezone.utc)
    assert parse_since("30d", now) == datetime(2026, 10, 22, 12, 0, tzinfo=timezone.utc)
    assert parse_since("12h", now).hour == 0
    assert parse_since("2026-11-01T00:00:00+00:00", now) == datetime(2026, 11, 1, tzinfo=timezone.utc)


def test_collect_has_help():
    result = CliRunner().invoke(collect, ["--help"])
    assert result.exit_code == 0 and "--self-test" in result.output and "--deadline" in result.output


# ------------------------------------------------------------------ collect --analyze


def test_analyze_flag_reports_on_the_bundle_it_just_wrote(world_dir):
    root, bin_dir = make_root(world_dir), make_bin(world_dir)
    result = invoke(["--root", root, "--bin-dir", bin_dir, "-o", world_dir / "out.tar.gz", "--analyze"], world_dir)
    assert result.exit_code == 0, result.output
    report = result.stdout
    verdict = report.splitlines()[0]
    assert any(line.startswith("diagdisk ") and "out.tar.gz" in line for line in report.splitlines())
    # the recorded log has a medium error on sda and the replayed SMART sample is failing
    assert "Replace disk" in verdict and "sda" in verdict
    assert "Hitachi" in report and "db1" in report
    assert "scan-open" not in report.split("Sources")[0]  # the scan listing is not a device


def test_analyze_flag_on_a_real_run_prints_a_report(world_dir):
    result = invoke(["-o", world_dir / "real.tar.gz", "--timeout", "300", "--deadline", "1800", "--analyze"],
                    world_dir)
    assert result.exit_code == 0, result.output
    assert re.match(r"(FAILURE|DEGRADED|SUSPECT|UNEXPLAINED|INCONCLUSIVE|HEALTHY): ", result.stdout)
    assert (world_dir / "real.tar.gz").exists()


def test_bundle_by_id_listing_gives_the_disk_its_serial_and_wwn(world_dir):
    from diagdisk.diagnosis.analysis import analyze
    from diagdisk.report.build import build_report

    root, bin_dir = make_root(world_dir), make_bin(world_dir)
    assert invoke(["--root", root, "--bin-dir", bin_dir, "-o", world_dir / "b.tar.gz"], world_dir).exit_code == 0
    report = build_report(analyze([str(world_dir / "b.tar.gz")]))
    [sda] = [d for d in report["devices"] if d["name"] == "sda"]
    assert (sda["hctl"], sda["serial"], sda["wwn"]) == ("0:0:0:0", "MSK423Y20S3HBC", "0x5000cca37fca81a8")
