#!/usr/bin/env python3
"""Start-up of the default install: how long `diagdisk` takes on a small input.

    python benchmarks/startup.py                      # makes a fresh venv with `pip install .`
    python benchmarks/startup.py --diagdisk PATH      # times an installed diagdisk command instead
    python benchmarks/startup.py --runs 9 --json

The default install is the product (`pip install .`, no extras), so by default this makes a
virtual environment in a temporary folder and installs the repository into it, as a user would
(pip compiles the package's bytecode on install). Each command is timed in a fresh process:
"cold" is its first run after the install, "warm" the median of the runs after it (the files are
in the page cache, the interpreter's bytecode on disk). Wall-clock time and the CPU time the
process used (user + system, from getrusage) are both shown: on a shared machine the wall clock
moves with the neighbours' load, the CPU time much less.

Targets (docs: README "Speed and memory"): `analyze` of a 20-line kernel log at most 0.5 s,
`decode` at most 0.2 s, `--help` at most 0.3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMALL_LOG_SOURCE = ROOT / "samples" / "modern-sas-medium-error-sdc" / "var" / "log" / "messages"
SMALL_LOG_LINES = 20
DECODE_LINE = "sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]"
TARGETS = {"analyze 20-line log": 0.5, "decode line": 0.2, "decode sense": 0.2, "--help": 0.3}


def commands(diagdisk: str, small_log: Path) -> dict[str, list[str]]:
    return {
        "analyze 20-line log": [diagdisk, "analyze", str(small_log)],
        "analyze 20-line log --format json": [diagdisk, "analyze", str(small_log), "--format", "json"],
        "decode line": [diagdisk, "decode", "line", DECODE_LINE],
        "decode sense": [diagdisk, "decode", "sense", "70 00 03 00 00 00 00 0a 00 00 00 00 11 00 00 00 00 00"],
        "--help": [diagdisk, "--help"],
    }


def timed(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_environment())
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode(errors='replace')}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user runs it
    env.pop("NO_COLOR", None)
    return env


def install(folder: Path) -> str:
    venv.create(folder, with_pip=True)
    python = folder / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(ROOT)], check=True)
    return str(folder / "bin" / "diagdisk")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--diagdisk", help="an installed diagdisk command to time (default: install into a fresh venv)")
    parser.add_argument("--runs", type=int, default=7, help="warm runs per command (default 7)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="diagdisk-startup-") as tmp:
        tmp_path = Path(tmp)
        small_log = tmp_path / "small.log"
        lines = SMALL_LOG_SOURCE.read_text().splitlines()[:SMALL_LOG_LINES]
        small_log.write_text("\n".join(lines) + "\n")
        diagdisk = args.diagdisk or install(tmp_path / "venv")
        results = []
        for name, argv in commands(diagdisk, small_log).items():
            cold = timed(argv)
            warm = [timed(argv) for _ in range(args.runs)]
            results.append({
                "command": name,
                "cold_wall": round(cold[0], 3), "cold_cpu": round(cold[1], 3),
                "warm_wall": round(statistics.median(w for w, _ in warm), 3),
                "warm_cpu": round(statistics.median(c for _, c in warm), 3),
                "target": TARGETS.get(name),
            })
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{'command':<36} {'cold wall':>9} {'cold cpu':>9} {'warm wall':>9} {'warm cpu':>9} {'target':>7}")
    for row in results:
        target = f"{row['target']:.2f}" if row["target"] else "-"
        print(f"{row['command']:<36} {row['cold_wall']:>9.3f} {row['cold_cpu']:>9.3f} "
              f"{row['warm_wall']:>9.3f} {row['warm_cpu']:>9.3f} {target:>7}")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; seconds; warm = median of {args.runs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
