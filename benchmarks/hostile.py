"""Time and peak memory of `diagdisk analyze` on hostile inputs, each run in a fresh process.

    python benchmarks/hostile.py                        # all scenarios, about a minute
    python benchmarks/hostile.py --storm-lines 10000000 long-line storm

Scenarios: a 200 MB single line between two error lines; an error storm of N I/O error lines for
one disk (default 1 million); 3000 rotated logs, half of them gzip; a gzip rotation that inflates
to 1 GB read under --max-file-size 256M; a tar bomb (a member of 2 GB of zeros in a few hundred KB
of xz) under --max-file-size 64M. The inputs are generated into a temporary folder (the largest
is the 200 MB line) and removed afterwards. Peak RSS comes from /usr/bin/time.
"""

from __future__ import annotations

import argparse
import gzip
import io
import lzma
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ERROR = b"2024-03-14T02:17:43.512345+00:00 db1 kernel: sd 2:0:2:0: [sdc] tag#12 Sense Key : Medium Error [current]\n"


def long_line(folder: Path, args) -> list[str]:
    path = folder / "messages"
    with open(path, "wb") as handle:
        handle.write(ERROR)
        handle.write(b"2024-03-14T02:17:44+00:00 db1 kernel: ")
        block = b"A" * (1 << 20)
        for _ in range(200):
            handle.write(block)
        handle.write(b"\n" + ERROR)
    return [str(path)]


def storm(folder: Path, args) -> list[str]:
    path = folder / "messages"
    with open(path, "wb") as handle:
        for start in range(0, args.storm_lines, 100_000):
            handle.write(b"".join(
                b"2024-03-14T02:%02d:%02d+00:00 db1 kernel: blk_update_request: I/O error, dev sdc, sector %d op "
                b"0x0:(READ) flags 0x0 phys_seg 1 prio class 0\n" % (i // 60 % 60, i % 60, i * 8)
                for i in range(start, min(start + 100_000, args.storm_lines))))
    return [str(path)]


def rotations(folder: Path, args) -> list[str]:
    logs = folder / "sosreport/var/log"
    logs.mkdir(parents=True)
    for index in range(3000):
        data = ERROR.replace(b"tag#12", b"tag#%d" % index)
        (logs / f"messages-{20200101 + index}").write_bytes(gzip.compress(data) if index % 2 else data)
    return [str(folder / "sosreport")]


def gzip_bomb(folder: Path, args) -> list[str]:
    logs = folder / "sosreport/var/log"
    logs.mkdir(parents=True)
    with gzip.open(logs / "messages-20240101", "wb", compresslevel=9) as handle:
        handle.write(ERROR)
        line = b"x" * 1023 + b"\n"
        block = line * 1024
        for _ in range(1024):
            handle.write(block)
    return [str(folder / "sosreport"), "--max-file-size", "256M"]


def tar_bomb(folder: Path, args) -> list[str]:
    compressor = lzma.LZMACompressor(preset=9)
    member = tarfile.TarInfo("sosreport-db1/var/log/messages")
    member.size = 2 << 30
    archive = folder / "bomb.tar.xz"
    with open(archive, "wb") as handle:
        handle.write(compressor.compress(member.tobuf(format=tarfile.GNU_FORMAT)))
        zeros = bytes(1 << 20)
        for _ in range(2048):
            handle.write(compressor.compress(zeros))
        end = io.BytesIO()
        end.write(bytes(1024))
        handle.write(compressor.compress(end.getvalue()))
        handle.write(compressor.flush())
    return [str(archive), "--max-file-size", "64M"]


SCENARIOS = {"long-line": long_line, "storm": storm, "rotations": rotations, "gzip-bomb": gzip_bomb,
             "tar-bomb": tar_bomb}


def measure(command: list[str]) -> dict:
    time_binary = shutil.which("time", path="/usr/bin:/bin")
    if not time_binary:
        sys.exit("needs /usr/bin/time for the peak RSS")
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        start = time.perf_counter()
        completed = subprocess.run([time_binary, "-f", "%M", "-o", report.name, *command], cwd=ROOT,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        seconds = time.perf_counter() - start
        peak_kb = int(report.read().split()[-1])
    stderr = completed.stderr.decode(errors="replace").strip().splitlines()
    return {"seconds": seconds, "peak_mb": peak_kb / 1024, "exit": completed.returncode,
            "stderr": stderr[-1][:110] if stderr else ""}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", choices=[*SCENARIOS, []], default=[])  # none named: all of them
    parser.add_argument("--storm-lines", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    print(f"{'scenario':<10} {'input':>9} {'seconds':>8} {'peak MB':>8} {'exit':>4}  stderr")
    for name in args.scenarios or SCENARIOS:
        with tempfile.TemporaryDirectory(prefix="diagdisk-bench-") as workdir:
            extra = SCENARIOS[name](Path(workdir), args)
            size = sum(p.stat().st_size for p in Path(workdir).rglob("*") if p.is_file())
            result = measure([sys.executable, "-m", "diagdisk", "analyze", *extra, "--format", "json"])
        print(f"{name:<10} {size / 1e6:>7.1f}MB {result['seconds']:>8.1f} {result['peak_mb']:>8.0f} "
              f"{result['exit']:>4}  {result['stderr']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
