"""Write a synthetic BSD-syslog /var/log/messages of any size for benchmarks.

    python benchmarks/generate_log.py --size 1G --storage-ratio 0.01 --seed 1 -o FILE

The text mixes everyday daemon noise (systemd, sshd, CRON, NetworkManager, audit, chronyd, dbus,
kernel chatter, including harmless storage look-alikes such as "Attached SCSI disk") with failing
storage messages of every family diagdisk reads: SCSI sense blocks, block-layer I/O errors, buffer
I/O errors, command timeouts/aborts/resets, libata exception blocks, NVMe timeouts and I/O errors,
md raid1 member failures, multipath path failures and EXT4/XFS errors. `--storage-ratio` is the
share of *lines* that belong to storage failure blocks (0.01 typical, 0.30 an error storm).

The output is a pure function of (--size, --storage-ratio, --seed, --hostname): benchmarks cache
files by those values. Only the standard library is used so the script runs from any Python.

Speed matters more than literal fidelity (a 1 GB file must be written in well under a minute): the
noise messages come from a pool rendered once per run with varied PIDs, users, addresses and units,
and only the syslog header is rebuilt when the clock ticks; storage blocks are rendered fresh each
time so LBAs, tags and devices keep varying.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Iterator

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
BATCH_BYTES = 4 << 20
NOISE_POOL_SIZE = 60_000

# A handful of disks, each with every name the kernel gives it, so cross-family joins have
# something to join: (hctl, sd name, ata port, md array it belongs to).
SCSI_DISKS = (
    ("0:0:0:0", "sda", "ata1", "md0"),
    ("1:0:0:0", "sdb", "ata2", "md0"),
    ("2:0:1:0", "sdc", "ata3", "md1"),
    ("2:0:2:0", "sdd", "ata4", "md1"),
    ("6:0:7:0", "sde", None, None),
)
NVME_DISKS = ("nvme0", "nvme1")
MULTIPATH_MAPS = (("mpatha", ("8:64", "8:80", "65:0", "65:16")), ("mpathb", ("8:96", "8:112")))
SENSE = (
    ("Medium Error", "Unrecovered read error", "critical medium error"),
    ("Medium Error", "Unrecovered read error - auto reallocate failed", "critical medium error"),
    ("Hardware Error", "Internal target failure", "critical target error"),
    ("Aborted Command", "SCSI parity error", "I/O error"),
    ("Not Ready", "Logical unit not ready, cause not reportable", "I/O error"),
    ("Illegal Request", "Invalid field in cdb", "critical target error"),
)
HOST_BYTES = ("DID_OK driverbyte=DRIVER_SENSE", "DID_TIME_OUT driverbyte=DRIVER_OK",
              "DID_NO_CONNECT driverbyte=DRIVER_OK", "DID_ERROR driverbyte=DRIVER_OK")


def parse_size(text: str) -> int:
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    number, unit = (text[:-1], text[-1]) if text and text[-1] in units else (text, "")
    try:
        size = int(float(number) * units[unit])
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (examples: 500M, 1G, 2048)") from None
    if size <= 0:
        raise argparse.ArgumentTypeError("size must be positive")
    return size


def _ip(rng: random.Random) -> str:
    return f"{rng.choice((10, 172, 192))}.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"


def noise_makers(rng: random.Random) -> list[tuple[Callable[[], str], float]]:
    """(renderer of a message after the host name, relative weight): everyday lines, no storage failure."""
    users = ("root", "admin", "deploy", "postgres", "jenkins", "ansible", "backup", "oracle")
    units = ("sshd.service", "crond.service", "rsyslog.service", "chronyd.service", "httpd.service",
             "postgresql.service", "docker.service", "sysstat-collect.service", "dnf-makecache.service",
             "logrotate.service", "fstrim.service", "NetworkManager-dispatcher.service",
             "systemd-tmpfiles-clean.service", "unbound-anchor.service", "kdump.service")
    ifaces = ("eth0", "eth1", "ens192", "bond0", "enp3s0f0")
    pid = lambda: rng.randrange(300, 4_000_000)  # noqa: E731 - a tiny local helper reads better
    audit_types = ("USER_START", "USER_END", "CRED_ACQ", "CRED_DISP", "USER_ACCT", "SERVICE_START",
                   "SERVICE_STOP", "USER_LOGIN", "SYSCALL")
    makers: list[tuple[Callable[[], str], float]] = [
        (lambda: f"systemd[1]: Started {rng.choice(units)[:-8].replace('-', ' ')} service.", 6),
        (lambda: f"systemd[1]: {rng.choice(units)}: Deactivated successfully.", 5),
        (lambda: f"systemd[1]: Starting {rng.choice(units)[:-8]}...", 4),
        (lambda: f"systemd[1]: Started Session {rng.randrange(1, 90000)} of User {rng.choice(users)}.", 5),
        (lambda: f"systemd-logind[{pid()}]: New session {rng.randrange(1, 90000)} of user {rng.choice(users)}.", 4),
        (lambda: f"systemd-logind[{pid()}]: Session {rng.randrange(1, 90000)} logged out. Waiting for processes to exit.", 3),
        (lambda: f"sshd[{pid()}]: Accepted publickey for {rng.choice(users)} from {_ip(rng)} port {rng.randrange(1024, 65535)} ssh2: RSA SHA256:{''.join(rng.choices('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', k=43))}", 4),
        (lambda: f"sshd[{pid()}]: pam_unix(sshd:session): session opened for user {rng.choice(users)}(uid={rng.randrange(0, 2000)}) by (uid=0)", 4),
        (lambda: f"sshd[{pid()}]: Disconnected from user {rng.choice(users)} {_ip(rng)} port {rng.randrange(1024, 65535)}", 3),
        (lambda: f"sshd[{pid()}]: Invalid user {rng.choice(('test', 'guest', 'ubuntu', 'pi', 'user1'))} from {_ip(rng)} port {rng.randrange(1024, 65535)}", 2),
        (lambda: f"CROND[{pid()}]: ({rng.choice(users)}) CMD ({rng.choice(('run-parts /etc/cron.hourly', '/usr/lib64/sa/sa1 1 1', '/usr/local/bin/backup.sh --incremental', 'php /var/www/cron.php'))})", 6),
        (lambda: f"CROND[{pid()}]: ({rng.choice(users)}) CMDEND ({rng.choice(('run-parts /etc/cron.hourly', '/usr/lib64/sa/sa1 1 1'))})", 3),
        (lambda: f"anacron[{pid()}]: Job `cron.daily' terminated", 1),
        (lambda: f"NetworkManager[{pid()}]: <info>  [{rng.randrange(1_600_000_000, 1_800_000_000)}.{rng.randrange(10000):04d}] dhcp4 ({rng.choice(ifaces)}): state changed new lease, address={_ip(rng)}", 3),
        (lambda: f"NetworkManager[{pid()}]: <info>  [{rng.randrange(1_600_000_000, 1_800_000_000)}.{rng.randrange(10000):04d}] device ({rng.choice(ifaces)}): state change: activated -> activated (reason 'none', sys-iface-state: 'managed')", 2),
        (lambda: f"dbus-daemon[{pid()}]: [system] Activating via systemd: service name='org.freedesktop.{rng.choice(('hostname1', 'timedate1', 'nm_dispatcher', 'PackageKit'))}' unit='dbus-org.freedesktop.x.service' requested by ':1.{rng.randrange(9999)}' (uid=0 pid={pid()} comm=\"/usr/bin/python3 \")", 3),
        (lambda: f"dbus-daemon[{pid()}]: [system] Successfully activated service 'org.freedesktop.{rng.choice(('hostname1', 'timedate1', 'nm_dispatcher'))}'", 2),
        (lambda: f"audit[{pid()}]: {rng.choice(audit_types)} pid={pid()} uid=0 auid={rng.randrange(0, 2000)} ses={rng.randrange(1, 9000)} subj=system_u:system_r:sshd_t:s0-s0:c0.c1023 msg='op=PAM:session_open grantors=pam_selinux,pam_loginuid acct=\"{rng.choice(users)}\" exe=\"/usr/sbin/sshd\" hostname={_ip(rng)} addr={_ip(rng)} terminal=ssh res=success'", 5),
        (lambda: f"kernel: audit: type=1130 audit({rng.randrange(1_600_000_000, 1_800_000_000)}.{rng.randrange(1000):03d}:{rng.randrange(1, 99999)}): pid=1 uid=0 auid=4294967295 ses=4294967295 msg='unit={rng.choice(units)[:-8]} comm=\"systemd\" exe=\"/usr/lib/systemd/systemd\" hostname=? addr=? terminal=? res=success'", 4),
        (lambda: f"chronyd[{pid()}]: Selected source {_ip(rng)} ({rng.choice(('0', '1', '2'))}.pool.ntp.org)", 1),
        (lambda: f"chronyd[{pid()}]: System clock wrong by {rng.uniform(-2, 2):.6f} seconds, adjustment started", 1),
        (lambda: f"rsyslogd[{pid()}]: imjournal: {rng.randrange(1000, 90000)} messages lost due to rate-limiting (20000 allowed within 600 seconds)", 1),
        (lambda: f"postfix/smtpd[{pid()}]: connect from unknown[{_ip(rng)}]", 2),
        (lambda: f"postfix/qmgr[{pid()}]: {rng.randrange(16**10):010X}: from=<{rng.choice(users)}@example.com>, size={rng.randrange(300, 90000)}, nrcpt=1 (queue active)", 2),
        (lambda: f"dockerd[{pid()}]: time=\"2026-01-01T00:00:00.{rng.randrange(10**9):09d}Z\" level=info msg=\"ignoring event\" container={rng.randrange(16**16):016x} module=libcontainerd namespace=moby topic=/tasks/delete type=\"*events.TaskDelete\"", 3),
        (lambda: f"containerd[{pid()}]: time=\"2026-01-01T00:00:00Z\" level=info msg=\"shim disconnected\" id={rng.randrange(16**16):016x}", 2),
        (lambda: f"kernel: IPv6: ADDRCONF(NETDEV_CHANGE): veth{rng.randrange(16**7):07x}: link becomes ready", 2),
        (lambda: f"kernel: docker0: port {rng.randrange(1, 30)}(veth{rng.randrange(16**7):07x}) entered {rng.choice(('blocking', 'forwarding', 'disabled'))} state", 2),
        (lambda: f"kernel: TCP: request_sock_TCP: Possible SYN flooding on port {rng.choice((80, 443, 5432))}. Sending cookies.  Check SNMP counters.", 0.3),
        (lambda: f"kernel: {rng.choice(('python3', 'java', 'node'))}[{pid()}]: segfault at {rng.randrange(16**12):x} ip {rng.randrange(16**12):016x} sp {rng.randrange(16**12):016x} error 4 in libc.so.6[7f0000000000+175000]", 0.2),
        (lambda: f"kernel: perf: interrupt took too long ({rng.randrange(2500, 9000)} > {rng.randrange(2500, 9000)}), lowering kernel.perf_event_max_sample_rate to {rng.randrange(20000, 80000)}", 0.2),
        (lambda: f"kernel: EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#{rng.randrange(4)}_DIMM#0 (channel:{rng.randrange(4)} slot:0 page:0x{rng.randrange(16**6):x} offset:0x0 grain:32 syndrome:0x0)", 0.1),
        (lambda: f"smartd[{pid()}]: Device: /dev/{rng.choice(SCSI_DISKS)[1]} [SAT], SMART Usage Attribute: 194 Temperature_Celsius changed from {rng.randrange(25, 45)} to {rng.randrange(25, 45)}", 1),
        (lambda: f"sudo[{pid()}]: {rng.choice(users)} : TTY=pts/{rng.randrange(9)} ; PWD=/home/{rng.choice(users)} ; USER=root ; COMMAND=/usr/bin/systemctl status {rng.choice(units)}", 2),
        (lambda: f"polkitd[{pid()}]: Registered Authentication Agent for unix-process:{pid()}:{rng.randrange(10**8)} (system bus name :1.{rng.randrange(9999)} [/usr/bin/pkttyagent --notify-fd 5 --fallback], object path /org/freedesktop/PolicyKit1/AuthenticationAgent, locale en_US.UTF-8)", 1),
        # Harmless storage look-alikes: a prefilter may pick them, the grammars must not call them failures.
        (lambda: (lambda d: f"kernel: sd {d[0]}: [{d[1]}] Attached SCSI disk")(rng.choice(SCSI_DISKS)), 0.2),
        (lambda: (lambda d: f"kernel: sd {d[0]}: [{d[1]}] Write cache: enabled, read cache: enabled, doesn't support DPO or FUA")(rng.choice(SCSI_DISKS)), 0.1),
        (lambda: f"kernel: ata{rng.randrange(1, 5)}: SATA link up 6.0 Gbps (SStatus 133 SControl 300)", 0.1),
        (lambda: f"kernel: EXT4-fs ({rng.choice(('sda1', 'dm-0', 'md0', 'nvme0n1p2'))}): mounted filesystem with ordered data mode. Quota mode: none.", 0.1),
        (lambda: f"kernel: XFS ({rng.choice(('dm-2', 'sdc1', 'md1'))}): Ending clean mount", 0.1),
        (lambda: f"kernel: nvme nvme{rng.randrange(2)}: {rng.choice((4, 8, 16))}/0/0 default/read/poll queues", 0.1),
        (lambda: f"multipathd[{pid()}]: {rng.choice(MULTIPATH_MAPS)[0]}: load table [0 {rng.randrange(10**9, 10**10)} multipath 1 queue_if_no_path 1 alua 1 1 service-time 0 1 1 8:64 1]", 0.1),
        (lambda: f"kernel: md: {rng.choice(('md0', 'md1'))}: data-check done.", 0.05),
        (lambda: "kernel: md/raid1:md0: active with 2 out of 2 mirrors", 0.05),
    ]
    return makers


def build_noise_pool(rng: random.Random) -> list[str]:
    makers = noise_makers(rng)
    picks = rng.choices(range(len(makers)), weights=[weight for _, weight in makers], k=NOISE_POOL_SIZE)
    return [makers[i][0]() for i in picks]


def _cdb(rng: random.Random, lba: int, blocks: int) -> str:
    op, name = rng.choice(((0x28, "Read(10)"), (0x2A, "Write(10)")))
    lba_bytes = " ".join(f"{b:02x}" for b in (lba & 0xFFFFFFFF).to_bytes(4, "big"))
    return f"CDB: {name} {op:02x} 00 {lba_bytes} 00 {blocks >> 8:02x} {blocks & 0xFF:02x} 00"


def storage_blocks(rng: random.Random) -> list[tuple[Callable[[], list[str]], float]]:
    """(renderer of one failure block as kernel/daemon messages, relative weight)."""

    def scsi_sense() -> list[str]:
        hctl, dev, _, _ = rng.choice(SCSI_DISKS)
        tag = rng.randrange(32)
        sense_key, asc_text, blk_kind = rng.choice(SENSE)
        lba = rng.randrange(1 << 31)
        blocks = rng.choice((8, 16, 128, 256))
        lines = [
            f"kernel: sd {hctl}: [{dev}] tag#{tag} FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_SENSE cmd_age={rng.randrange(0, 31)}s",
            f"kernel: sd {hctl}: [{dev}] tag#{tag} Sense Key : {sense_key} [current]",
            f"kernel: sd {hctl}: [{dev}] tag#{tag} Add. Sense: {asc_text}",
            f"kernel: sd {hctl}: [{dev}] tag#{tag} {_cdb(rng, lba, blocks)}",
            f"kernel: {blk_kind}, dev {dev}, sector {lba + rng.randrange(blocks)} op 0x0:(READ) flags 0x0 phys_seg {rng.randrange(1, 9)} prio class 0",
        ]
        if rng.random() < 0.4:
            lines.append(f"kernel: Buffer I/O error on dev {dev}1, logical block {lba // 8}, async page read")
        return lines

    def blk_update_request() -> list[str]:
        _, dev, _, _ = rng.choice(SCSI_DISKS)
        return [f"kernel: blk_update_request: I/O error, dev {dev}, sector {rng.randrange(1 << 31)} op 0x{rng.choice((0, 1))}:({rng.choice(('READ', 'WRITE'))}) flags 0x{rng.choice((0, 800, 4800))} phys_seg 1 prio class 0"]

    def buffer_io() -> list[str]:
        _, dev, _, _ = rng.choice(SCSI_DISKS)
        block = rng.randrange(1 << 28)
        return [f"kernel: Buffer I/O error on dev {dev}{rng.randrange(1, 4)}, logical block {block + i}, lost async page write" for i in range(rng.randrange(1, 4))]

    def timeout_abort_reset() -> list[str]:
        hctl, dev, _, _ = rng.choice(SCSI_DISKS)
        host = hctl.split(":")[0]
        tag = rng.randrange(32)
        lba = rng.randrange(1 << 31)
        return rng.choice((
            [f"kernel: sd {hctl}: timing out command, waited {rng.choice((30, 60, 180))}s",
             f"kernel: sd {hctl}: [{dev}] tag#{tag} FAILED Result: hostbyte=DID_TIME_OUT driverbyte=DRIVER_OK cmd_age={rng.randrange(30, 200)}s",
             f"kernel: sd {hctl}: [{dev}] tag#{tag} {_cdb(rng, lba, 8)}"],
            [f"kernel: sd {hctl}: [{dev}] tag#{tag} abort scheduled",
             f"kernel: sd {hctl}: [{dev}] tag#{tag} aborting command",
             f"kernel: sd {hctl}: [{dev}] tag#{tag} {_cdb(rng, lba, 8)}",
             f"kernel: scsi host{host}: sas: Enter sas_scsi_recover_host busy: {rng.randrange(1, 32)} failed: {rng.randrange(1, 32)}",
             f"kernel: scsi host{host}: sas: trying to find task 0x{rng.randrange(16**16):016x}",
             f"kernel: sas: sas_scsi_find_task: aborting task 0x{rng.randrange(16**16):016x}",
             f"kernel: scsi host{host}: sas: --- Exit sas_scsi_recover_host: busy: 0 failed: {rng.randrange(1, 32)} tries: 1"],
            [f"kernel: scsi {hctl}: Device offlined - not ready after error recovery",
             f"kernel: sd {hctl}: rejecting I/O to offline device",
             f"kernel: sd {hctl}: [{dev}] tag#{tag} FAILED Result: hostbyte=DID_NO_CONNECT driverbyte=DRIVER_OK cmd_age={rng.randrange(0, 60)}s"],
        ))

    def libata() -> list[str]:
        _, dev, port, _ = rng.choice([d for d in SCSI_DISKS if d[2]])
        tag = rng.randrange(32)
        lba = rng.randrange(1 << 40)
        low = f"{lba & 0xFF:02x}:{lba >> 8 & 0xFF:02x}:{lba >> 16 & 0xFF:02x}"
        high = f"{lba >> 24 & 0xFF:02x}:{lba >> 32 & 0xFF:02x}:00"
        unc = rng.random() < 0.6
        lines = [
            f"kernel: {port}.00: exception Emask 0x0 SAct 0x{rng.randrange(1 << 32):x} SErr 0x0 action 0x0",
            f"kernel: {port}.00: irq_stat 0x40000008",
            f"kernel: {port}.00: failed command: READ FPDMA QUEUED",
            f"kernel: {port}.00: cmd 60/08:{tag * 8:02x}:{low}/00:00:{high}/40 tag {tag} ncq dma 4096 in",
            f"kernel:          res 41/{'40' if unc else '84'}:00:{low}/00:00:{high}/00 Emask 0x{'409 (media error)' if unc else '10 (ATA bus error)'} <F>",
            f"kernel: {port}.00: status: {{ DRDY ERR }}",
            f"kernel: {port}.00: error: {{ {'UNC' if unc else 'ICRC ABRT'} }}",
        ]
        if not unc:
            lines.insert(1, f"kernel: {port}: SError: {{ UnrecovData 10B8B BadCRC }}")
            lines.append(f"kernel: {port}: hard resetting link")
            lines.append(f"kernel: {port}: SATA link up 3.0 Gbps (SStatus 123 SControl 300)")
        lines += [f"kernel: {port}.00: configured for UDMA/133", f"kernel: {port}: EH complete"]
        return lines

    def nvme() -> list[str]:
        ctrl = rng.choice(NVME_DISKS)
        qid = rng.randrange(1, 9)
        return rng.choice((
            [f"kernel: nvme {ctrl}: I/O {rng.randrange(1024)} QID {qid} timeout, aborting",
             f"kernel: nvme {ctrl}: Abort status: 0x0",
             f"kernel: nvme {ctrl}: I/O {rng.randrange(1024)} QID {qid} timeout, reset controller"],
            [f"kernel: {ctrl}n1: I/O Cmd(0x{rng.choice((1, 2))}) @ LBA {rng.randrange(1 << 33)}, {rng.choice((8, 32, 256))} blocks, I/O Error (sct 0x2 / sc 0x81) MORE DNR",
             f"kernel: critical medium error, dev {ctrl}n1, sector {rng.randrange(1 << 33)} op 0x0:(READ) flags 0x0 phys_seg 1 prio class 2"],
            [f"kernel: nvme {ctrl}: controller is down; will reset: CSTS=0xffffffff, PCI_STATUS=0x10",
             f"kernel: nvme {ctrl}: Removing after probe failure status: -19"],
        ))

    def md_raid1() -> list[str]:
        hctl, dev, _, array = rng.choice([d for d in SCSI_DISKS if d[3]])
        member = f"{dev}1"
        other = next(d[1] for d in SCSI_DISKS if d[3] == array and d[1] != dev) + "1"
        return [
            f"kernel: md/raid1:{array}: Disk failure on {member}, disabling device.",
            f"kernel: md/raid1:{array}: Operation continuing on 1 devices.",
            f"kernel: md/raid1:{array}: {member}: rescheduling sector {rng.randrange(1 << 31)}",
            f"kernel: md/raid1:{array}: redirecting sector {rng.randrange(1 << 31)} to other mirror: {other}",
        ]

    def multipath() -> list[str]:
        name, paths = rng.choice(MULTIPATH_MAPS)
        path = rng.choice(paths)
        remaining = rng.randrange(0, len(paths))
        return [
            f"kernel: device-mapper: multipath: 253:{rng.randrange(2, 9)}: Failing path {path}.",
            f"multipathd[{rng.randrange(600, 2000)}]: checker failed path {path} in map {name}",
            f"multipathd[{rng.randrange(600, 2000)}]: {name}: remaining active paths: {remaining}",
        ]

    def filesystem() -> list[str]:
        if rng.random() < 0.5:
            dev = rng.choice(("sdb1", "dm-3", "md0"))
            return [f"kernel: EXT4-fs error (device {dev}): ext4_find_entry:1455: inode #{rng.randrange(1 << 24)}: comm {rng.choice(('postgres', 'java', 'rsync'))}: reading directory lblock 0",
                    f"kernel: EXT4-fs warning (device {dev}): ext4_end_bio:{rng.randrange(300, 350)}: I/O error 10 writing to inode {rng.randrange(1 << 24)} starting block {rng.randrange(1 << 30)})"]
        dev = rng.choice(("sdc1", "dm-2", "md1"))
        return [f"kernel: XFS ({dev}): metadata I/O error in \"xfs_da_read_buf+0x{rng.randrange(16**2):x}/0x{rng.randrange(16**3):x} [xfs]\" at daddr 0x{rng.randrange(1 << 32):x} len 8 error 5",
                f"kernel: XFS ({dev}): xfs_do_force_shutdown(0x2) called from line 1211 of file fs/xfs/xfs_log.c. Return address = {rng.randrange(16**16):016x}",
                f"kernel: XFS ({dev}): Log I/O Error Detected. Shutting down filesystem"]

    return [(scsi_sense, 8), (blk_update_request, 4), (buffer_io, 3), (timeout_abort_reset, 3),
            (libata, 4), (nvme, 3), (md_raid1, 1), (multipath, 2), (filesystem, 1)]


class SyslogClock:
    """The BSD-syslog header ("Nov 21 12:00:01 host "), rebuilt only when the second changes."""

    def __init__(self, rng: random.Random, hostname: str):
        self.rng = rng
        self.hostname = hostname
        self.epoch = 1_767_225_600 + rng.randrange(300 * 86400)  # some day in 2026, UTC
        self.header = ""
        self._render()

    def _render(self) -> None:
        t = time.gmtime(self.epoch)
        self.header = f"{MONTHS[t.tm_mon - 1]} {t.tm_mday:2d} {t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} {self.hostname} "

    def tick(self) -> None:
        self.epoch += 1
        self._render()


def generate(size: int, storage_ratio: float, seed: int, hostname: str = "db1") -> Iterator[bytes]:
    """Yield encoded batches of whole lines until at least `size` bytes have been produced."""
    if not 0.0 <= storage_ratio <= 1.0:
        raise ValueError("storage ratio must be between 0 and 1")
    rng = random.Random(seed)
    noise_pool = build_noise_pool(rng)
    blocks = storage_blocks(rng)
    block_makers = [make for make, _ in blocks]
    block_weights = [weight for _, weight in blocks]
    mean_block_lines = sum(len(rng.choices(block_makers, block_weights)[0]()) for _ in range(2000)) / 2000
    # One step emits either one noise line or one storage block of B lines on average; choosing a
    # block with probability s = r / (B(1 - r) + r) makes storage lines a share r of all lines.
    block_probability = storage_ratio / (mean_block_lines * (1 - storage_ratio) + storage_ratio) if storage_ratio < 1 else 1.0
    clock = SyslogClock(rng, hostname)
    written = 0
    random_ = rng.random
    while written < size:
        # A busy host logs a few to a few hundred lines a second; draw the per-second rate in bulk.
        lines: list[str] = []
        batch_chars = 0
        while batch_chars < BATCH_BYTES:
            lines_this_second = int(rng.expovariate(1 / 40)) + 1
            header = clock.header
            second_lines = []
            for noise in rng.choices(noise_pool, k=lines_this_second):
                if random_() < block_probability:
                    make = rng.choices(block_makers, block_weights)[0]
                    second_lines.extend(header + message for message in make())
                else:
                    second_lines.append(header + noise)
            chunk = "\n".join(second_lines) + "\n"
            lines.append(chunk)
            batch_chars += len(chunk)
            clock.tick()
        data = "".join(lines).encode()
        if written + len(data) >= size:
            cut = data.find(b"\n", size - written - 1)
            data = data[: cut + 1] if cut >= 0 else data
        written += len(data)
        yield data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=parse_size, default=parse_size("100M"), help="bytes to write, e.g. 100M, 1G (default 100M)")
    parser.add_argument("--storage-ratio", type=float, default=0.01, help="share of lines from failing storage (default 0.01)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hostname", default="db1")
    parser.add_argument("-o", "--output", required=True, help="file to write ('-' for stdout)")
    args = parser.parse_args(argv)
    if not 0.0 <= args.storage_ratio <= 1.0:
        parser.error("--storage-ratio must be between 0 and 1")
    out = sys.stdout.buffer if args.output == "-" else open(args.output, "wb")
    try:
        for batch in generate(args.size, args.storage_ratio, args.seed, args.hostname):
            out.write(batch)
    finally:
        if out is not sys.stdout.buffer:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
