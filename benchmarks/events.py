"""Peak memory of `diagdisk events` on error storms of growing size, each run in a fresh process,
and what `| head -1` costs.

    python benchmarks/events.py                     # 10M and 40M storms, about a minute
    python benchmarks/events.py --sizes 10M 300M    # the storm size the listing once needed 13 GB for

The storms come from generate_log.py (--storage-ratio 0.3, seed 1; BSD syslog, so the listing
reads the months of each file once before its events). Every event is written to /dev/null; peak
RSS is the child's (wait4). `head -1` reads the first line and closes the pipe: the run's CPU
seconds say how much of the log it read before it noticed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(args: list[str], head: bool = False) -> dict:
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "diagdisk", *args], cwd=ROOT,
                               stdout=subprocess.PIPE if head else subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    lines = 0
    if head:
        lines = 1 if process.stdout.readline() else 0
        process.stdout.close()
    _, status, usage = os.wait4(process.pid, 0)
    return {"exit": os.waitstatus_to_exitcode(status), "seconds": time.monotonic() - started,
            "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024, "lines": lines}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", default=["10M", "40M"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="diagdisk-events-") as folder:
        print(f"{'storm':>6} {'events peak RSS':>16} {'events CPU s':>13} {'| head -1 CPU s':>16}")
        for size in args.sizes:
            log = Path(folder) / f"storm-{size}"
            subprocess.run([sys.executable, str(ROOT / "benchmarks/generate_log.py"), "--size", size,
                            "--storage-ratio", "0.3", "--seed", "1", "-o", str(log)], check=True)
            whole = _run(["events", str(log)])
            first = _run(["events", str(log)], head=True)
            assert whole["exit"] == 0 and first["exit"] == 0 and first["lines"] == 1, (whole, first)
            print(f"{size:>6} {whole['rss_mb']:>13.0f} MB {whole['cpu']:>13.1f} {first['cpu']:>16.1f}")


if __name__ == "__main__":
    main()
