"""Generate a fleet of small sosreport archives (and a few large ones) for benchmarks/fleet.py.

    python benchmarks/generate_fleet.py --count 2000 --large 3 --seed 1 -o /tmp/fleet-inputs

Each archive is `sosreport-<host>-<case>-<date>-<random>.tar.gz` holding `hostname`, `uname`,
`date`, `proc/scsi/scsi` and `var/log/messages` (RFC 3339 rsyslog) with boot lines for every disk,
daemon noise and, for some hosts, one fault: medium errors on one disk, SATA CRC errors on a
cable, NVMe media errors, resets of every target behind one controller, or an md member failing.
What varies, drawn from a seeded generator: the host (a few hosts have several nightly reports),
the disk model and firmware revision (some revisions fail more often, as a fleet report should
show), the controller driver and the number of disks (a host's own, the same in each of its
reports), the log size (a few hundred to several
thousand lines) and the report date (spread over eight weeks). `--large N` adds N archives with
logs of about 40 MB each. Output is a pure function of the arguments.

`fleet_records` makes what the analysis of such a fleet leaves for the cohort step (each input's
row, suspects and holdings, as diagdisk.fleet.run keeps them), without the logs: fleets of
thousands of hosts in a second, with or without one planted cohort (a drive firmware whose hosts
fail at several times the base rate, leaving a signature of their own), for benchmarks/fleet.py
--cohorts.
"""

from __future__ import annotations

import argparse
import io
import random
import tarfile
import time
from datetime import datetime, timedelta
from pathlib import Path

MODELS = [  # (vendor, model as INQUIRY shows it, firmware revisions, weight of failing revisions)
    ("ATA", "ST4000NM0033-9ZM", ["SN04", "SN06"], {"SN04": 3.0}),
    ("ATA", "WDC WD40EFRX-68N", ["0A80", "0A82"], {}),
    ("SEAGATE", "ST1200MM0088", ["N004", "N005"], {"N004": 2.0}),
    ("HGST", "HUS726T4TALA6L4", ["W9G0"], {}),
    ("ATA", "Micron_5200_MTFD", ["D1MU020", "D1MU404"], {"D1MU020": 2.5}),
]
DRIVERS = [("mpt3sas", "mpt3sas_cm0", "LSISAS3008"), ("megaraid_sas", "megaraid_sas 0000:03:00.0", "MegaRAID"),
           ("ahci", "ahci 0000:00:17.0", "AHCI")]
FAULTS = ["none"] * 14 + ["medium", "medium", "cable", "reset", "md"]
NOISE = [
    "systemd[1]: Started Session {n} of user root.",
    "sshd[{pid}]: Accepted publickey for deploy from 10.1.{a}.{b} port {port} ssh2",
    "CROND[{pid}]: (root) CMD (run-parts /etc/cron.hourly)",
    "chronyd[812]: Selected source 10.0.0.{a}",
    "NetworkManager[901]: <info>  [{n}.1234] dhcp4 (eth0): state changed bound -> bound",
    "kernel: IPv4: martian source 10.1.{a}.{b} from 10.1.{b}.{a}, on dev eth0",
    "dbus-daemon[700]: [system] Successfully activated service 'org.freedesktop.nm_dispatcher'",
    "postfix/qmgr[{pid}]: {hexid}: removed",
]


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.%f") + "+00:00"


def sosreport(rng: random.Random, host: str, when: datetime, lines: int) -> dict[str, bytes]:
    # drawn and left, so that every later draw (names, dates, faults) is what it always was
    rng.choice(rng.choice(MODELS)[2]), rng.choice(DRIVERS), rng.randint(2, 6)
    hardware = random.Random(f"hardware-{host}")  # a host keeps its disks and controller from report to report
    vendor, model, revisions, weights = hardware.choice(MODELS)
    revision = hardware.choice(revisions)
    driver, adapter, chip = hardware.choice(DRIVERS)
    disks = hardware.randint(2, 6)
    fault = rng.choice(FAULTS)
    if fault == "none" and rng.random() < 0.08 * weights.get(revision, 0.0):
        fault = "medium"  # the fleet's weak firmware revisions fail more
    boot = when - timedelta(days=rng.randint(1, 20))
    log: list[str] = [f"{_stamp(boot)} {host} kernel: {adapter}: {chip}: FWVersion(16.00.10.00), ChipRevision(0x02)",
                      f"{_stamp(boot)} {host} kernel: scsi host0: {'Fusion MPT SAS Host' if driver == 'mpt3sas' else driver}"]
    scsi = ["Attached devices:"]
    for target in range(disks):
        name = "sd" + chr(ord("a") + target)
        log.append(f"{_stamp(boot)} {host} kernel: sd 0:0:{target}:0: [{name}] 7814037168 512-byte logical blocks: "
                   f"(4.00 TB/3.64 TiB)")
        log.append(f"{_stamp(boot)} {host} kernel: sd 0:0:{target}:0: [{name}] Attached SCSI disk")
        scsi += [f"Host: scsi0 Channel: 00 Id: {target:02d} Lun: 00",
                 f"  Vendor: {vendor:<8} Model: {model:<16} Rev: {revision}",
                 "  Type:   Direct-Access                    ANSI  SCSI revision: 06"]
    t = boot + timedelta(minutes=5)
    step = (when - t) / max(lines, 1)
    fault_at = rng.randint(lines // 3, max(lines // 3, lines - 1))
    bad = rng.randrange(disks)
    bad_name = "sd" + chr(ord("a") + bad)
    for index in range(lines):
        t += step
        template = rng.choice(NOISE)
        log.append(f"{_stamp(t)} {host} " + template.format(n=index, pid=rng.randint(1000, 60000), a=rng.randint(1, 254),
                                                             b=rng.randint(1, 254), port=rng.randint(30000, 60000),
                                                             hexid=f"{rng.getrandbits(40):010X}"))
        if index == fault_at:
            log += _fault_lines(rng, fault, host, t, bad, bad_name, disks, adapter)
    files = {
        "hostname": f"{host}\n".encode(),
        "uname": f"Linux {host} 4.18.0-513.5.1.el8_9.x86_64 #1 SMP Fri Sep 29 05:21:10 EDT 2023 x86_64 GNU/Linux\n".encode(),
        "date": when.strftime("%a %b %d %H:%M:%S UTC %Y\n").encode(),
        "proc/scsi/scsi": ("\n".join(scsi) + "\n").encode(),
        "var/log/messages": ("\n".join(log) + "\n").encode(),
    }
    if fault == "md":
        files["proc/mdstat"] = (f"Personalities : [raid1]\nmd0 : active raid1 {bad_name}1[1](F) sd{'a' if bad else 'b'}1[0]\n"
                                "      976630336 blocks super 1.2 [2/1] [U_]\n\nunused devices: <none>\n").encode()
    return files


def _fault_lines(rng: random.Random, fault: str, host: str, t: datetime, target: int, name: str, disks: int,
                 adapter: str) -> list[str]:
    out = []
    k = f"{_stamp(t)} {host} kernel:"
    if fault == "medium":
        for repeat in range(rng.randint(2, 6)):
            sector = rng.randint(10_000, 7_000_000_000)
            tag = rng.randint(1, 60)
            out += [f"{k} sd 0:0:{target}:0: [{name}] tag#{tag} FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_SENSE",
                    f"{k} sd 0:0:{target}:0: [{name}] tag#{tag} Sense Key : Medium Error [current] [descriptor] ",
                    f"{k} sd 0:0:{target}:0: [{name}] tag#{tag} Add. Sense: Unrecovered read error",
                    f"{k} blk_update_request: critical medium error, dev {name}, sector {sector} op 0x0:(READ) flags 0x0 "
                    f"phys_seg 1 prio class 0"]
    elif fault == "cable":
        for repeat in range(rng.randint(2, 5)):
            out += [f"{k} ata{target + 1}.00: exception Emask 0x10 SAct 0x0 SErr 0x400100 action 0x6 frozen",
                    f"{k} ata{target + 1}.00: irq_stat 0x08000000, interface fatal error",
                    f"{k} ata{target + 1}: SError: {{ UnrecovData Handshk }}",
                    f"{k} ata{target + 1}.00: error: {{ ICRC ABRT }}",
                    f"{k} ata{target + 1}: hard resetting link"]
    elif fault == "reset":
        for other in range(disks):
            out.append(f"{k} sd 0:0:{other}:0: attempting task abort! scmd(0x00000000{rng.getrandbits(32):08x})")
            out.append(f"{k} sd 0:0:{other}:0: task abort: FAILED scmd(0x00000000{rng.getrandbits(32):08x})")
        out.append(f"{k} {adapter}: sending diag reset !!")
        out.append(f"{k} {adapter}: diag reset: SUCCESS")
        out += [f"{k} sd 0:0:{other}:0: Power-on or device reset occurred" for other in range(disks)]
    elif fault == "md":
        out += [f"{k} md/raid1:md0: Disk failure on {name}1, disabling device.",
                f"{k} md/raid1:md0: Operation continuing on 1 devices."]
    return out


KERNELS = ["4.18.0-513.5.1.el8_9.x86_64", "5.14.0-362.8.1.el9_3.x86_64", "6.8.0-45-generic"]
CONTROLLERS = {"mpt3sas": ("LSISAS3008", ["16.00.10.00", "16.00.12.00"]),
               "megaraid_sas": ("MegaRAID SAS-3 3108", ["4.680.00-8290", "4.740.00-8452"]), "ahci": None}
MEDIUM_SIGNATURES = ["sense key 0x3 asc/ascq 0x11/0x00", "io error"]
# what the planted firmware's own fault leaves (a drive answering internal target failure)
PLANTED_SIGNATURES = ["sense key 0x4 asc/ascq 0x44/0x00", "reset device"]


def fleet_records(hosts: int, reports: int, seed: int, planted: str | None = None, base_rate: float = 0.04,
                  factor: float = 4.0, other_rate: float = 0.02, racks: int = 40,
                  planted_since: int | None = None, retention: int = 28) -> list[tuple[dict, list, dict]]:
    """(row, suspects, holdings) of ``reports`` inputs from ``hosts`` hosts (each reports at least
    once; the rest are later reports of random hosts), as diagdisk.fleet.run keeps them.

    Each host has one drive model and firmware, one controller driver (and for mpt3sas and
    megaraid_sas a controller model and firmware), a kernel and an inventory rack. Its drives fail
    (a disk suspect, medium error signatures) with probability ``base_rate``, ``factor`` times that
    when its firmware is ``planted`` ("<model> <firmware>", e.g. "ATA Micron_5200_MTFD D1MU020"),
    where most failures leave the planted signature; controllers and cables fail elsewhere at
    ``other_rate``. Report dates spread over eight weeks. A failing host's fault starts on a day
    from ``retention`` days before them to their end (for the planted firmware with
    ``planted_since``, from that day of the eight weeks on: a rollout gone bad), and its reports
    show it for ``retention`` days, while their logs hold it (four weekly rotations)."""
    rng = random.Random(seed)
    start = datetime(2026, 9, 1, 2, 0, 0)
    fleet = []
    for index in range(hosts):
        vendor, model, revisions, _ = rng.choice(MODELS)
        driver = rng.choice(DRIVERS)[0]
        controller = CONTROLLERS[driver]
        firmware = rng.choice(revisions)
        drive = f"{vendor} {model}"
        planted_here = planted == f"{drive} {firmware}"
        rate = min(base_rate * (factor if planted_here else 1.0), 1.0)
        fails = rng.random() < rate
        other = None if fails else ("controller" if rng.random() < other_rate else
                                    "cable" if rng.random() < other_rate else None)
        fleet.append({"host": f"h{index:05d}", "drive": (drive, firmware), "driver": driver,
                      "controller": [controller[0], rng.choice(controller[1]), driver] if controller else None,
                      "kernel": rng.choice(KERNELS), "rack": f"r{rng.randrange(racks):02d}",
                      "fails": fails, "planted": planted_here and fails and rng.random() < 0.8, "other": other,
                      "fails_on": start + timedelta(days=rng.randint(
                          planted_since if planted_here and planted_since is not None else -retention, 55))})
    chosen = list(range(hosts)) + [rng.randrange(hosts) for _ in range(max(reports - hosts, 0))]
    records = []
    for number, index in enumerate(chosen):
        host = fleet[index]
        when = start + timedelta(days=rng.randint(0, 55), minutes=rng.randint(0, 1439))
        # a report shows a failure while its logs still hold it
        shown = host["fails_on"] <= when < host["fails_on"] + timedelta(days=retention)
        failing = host["fails"] and shown
        suspects, signatures = [], []
        if failing:
            suspects.append({"fru": "disk", "driver": host["driver"], "model": host["drive"][0],
                             "firmware": host["drive"][1]})
            for signature in PLANTED_SIGNATURES if host["planted"] else MEDIUM_SIGNATURES:
                signatures.append([f"{signature} ({host['driver']})", when.isoformat()])
        elif host["other"] and shown:
            suspects.append({"fru": host["other"], "driver": host["driver"], "model": None, "firmware": None})
            signatures.append([f"{'reset host' if host['other'] == 'controller' else 'ata link hard reset'} "
                               f"({host['driver']})", when.isoformat()])
        row = {"host": host["host"], "input": f"/fleet/{host['host']}-{number:06d}.tar.gz", "outcome": "analysed",
               "kernel": host["kernel"], "report_date": when.isoformat(), "rack": host["rack"],
               "verdict": "failure" if suspects else "healthy"}
        holds = {"drives": [list(host["drive"])], "failing_drives": [list(host["drive"])] if failing else [],
                 "controllers": [host["controller"]] if host["controller"] else [], "drivers": [host["driver"]],
                 "enclosures": [], "signatures": signatures}
        records.append((row, [dict(s, host=host["host"], input=row["input"]) for s in suspects], holds))
    return records


def inventory_of(records: list[tuple[dict, list, dict]]) -> dict[str, dict[str, str]]:
    """The inventory of a fleet_records fleet (host -> {"rack": rack}), as --inventory gives it."""
    return {row["host"]: {"rack": row["rack"]} for row, _, _ in records}


def write_archive(path: Path, top: str, files: dict[str, bytes], mtime: float) -> None:
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            info.mtime = mtime
            tar.addfile(info, io.BytesIO(data))


def generate(folder: Path, count: int, large: int, seed: int) -> list[Path]:
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    start = datetime(2026, 9, 1, 2, 0, 0)
    hosts = [f"{rng.choice(['db', 'web', 'app', 'nas', 'build', 'kv'])}{index:05d}" for index in range(int(count * 0.8))]
    written = []
    for index in range(count + large):
        host = rng.choice(hosts) if index < count else f"storm{index - count:03d}"
        when = start + timedelta(days=rng.randint(0, 55), minutes=rng.randint(0, 1439))
        lines = rng.choice([200, 500, 1000, 2000, 5000]) if index < count else 350_000
        top = f"sosreport-{host}-{rng.randint(1_000_000, 9_999_999)}-{when:%Y-%m-%d}-{rng.getrandbits(20):05x}"
        path = folder / f"{top}.tar.gz"
        if not path.exists():
            write_archive(path, top, sosreport(rng, host, when, lines), time.mktime(when.timetuple()))
        else:
            sosreport(rng, host, when, lines)  # keep the generator's sequence whatever exists
        written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--large", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    started = time.monotonic()
    paths = generate(args.output, args.count, args.large, args.seed)
    size = sum(p.stat().st_size for p in paths)
    print(f"{len(paths)} archives, {size / 1e6:.1f} MB in {args.output} ({time.monotonic() - started:.1f} s)")


if __name__ == "__main__":
    main()
