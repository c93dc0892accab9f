"""Reading sar data at scale: time and peak memory of the performance stage on generated `sar -d`
text at a 1-second interval for many devices, over growing spans, so memory shows flat (it follows
the devices, not the duration) and throughput extrapolates to a month.

    python benchmarks/performance.py                         # 200 devices, 10 min, 30 min, 1 h
    python benchmarks/performance.py --spans 3600,21600      # longer spans (1 h = ~70 MB of text)
    python benchmarks/performance.py --devices 50 --spans 86400
    python benchmarks/performance.py --binary --spans 3600,21600,86400   # sysstat's saDD files instead
    python benchmarks/performance.py --binary --interval 600 --spans 2592000   # a month of sa1's 10-minute files

With --binary, sysstat's own `sadf -d` reads the same files after diagdisk (when sadf is installed):
its wall clock and CPU seconds, and the ratio sadf / diagdisk on the wall clock, are printed beside.

Each span is a sosreport-shaped folder (sos_commands/sar/sarDD, C locale, one file a day) read by
`diagnosis.analysis.analyze` in a fresh process, timed on the wall clock and in CPU seconds (user +
system: on a shared machine the wall clock also counts the neighbours' turns), with its peak RSS
from the kernel. Rates are per CPU second. The generated files are cached in benchmarks/.cache/
(git-ignored).

With --binary the folder holds sysstat's binary daily files (var/log/sa/saDD, 86,400 records a
day): the header, activity list and every other activity of each record are copied from the saDD
sadc 12.6.1 wrote for tests/performance/fixtures, and the disk activity holds `devices` items whose
counters grow by random amounts each second, so each record is the size a real one would be.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache" / "performance"
HEADER = "          DEV       tps     rkB/s     wkB/s     dkB/s   areq-sz    aqu-sz     await     %util"
MONTH = 30 * 86400


def generate(folder: Path, devices: int, seconds: int, seed: int = 1) -> int:
    """sar -d text of `devices` disks for `seconds` seconds at 1 s, one file a day; returns bytes."""
    rng = random.Random(seed)
    written = 0
    names = [f"dev{8 + i // 16}-{(i % 16) * 16}" if i < 256 else f"dev259-{i}" for i in range(devices)]
    day, second = 0, 0
    while second < seconds:
        path = folder / "sos_commands" / "sar" / f"sar{day + 1:02d}"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as handle:
            handle.write(f"Linux 5.14.0-362.el9.x86_64 (bench) \t03/{day + 1:02d}/2024 \t_x86_64_\t(64 CPU)\n\n")
            handle.write(f"00:00:00{HEADER}\n")
            end = min(seconds, (day + 1) * 86400)
            while second < end:
                clock = time.strftime("%H:%M:%S", time.gmtime(second))
                rows = []
                for index, name in enumerate(names):
                    busy = 30 + 60 * (index == 7 and (second // 600) % 2)   # one device busy half the time
                    tps = 100 + rng.random() * 50
                    rows.append(f"{clock} {name:>12} {tps:9.2f} {tps * 8:9.2f} {tps * 4:9.2f}      0.00     "
                                f"12.00 {busy / 50:9.2f} {5 + busy / 10:9.2f} {busy:9.2f}\n")
                handle.write("".join(rows))
                second += 1
            handle.write(f"Average:    {'dev8-0':>12}      1.00      1.00      1.00      0.00      1.00      0.00      1.00      1.00\n")
        written += path.stat().st_size
        day += 1
    return written


SA_TEMPLATE = HERE.parent / "tests" / "performance" / "fixtures" / "sa26-12.6.1-restart-hotplug"


def generate_binary(folder: Path, devices: int, seconds: int, seed: int = 1, interval: int = 1) -> int:
    """saDD files of `devices` disks for `seconds` seconds at `interval` s, one file a day; returns bytes."""
    import numpy

    sys.path.insert(0, str(HERE.parent))
    from diagdisk.performance.sabinary import _Reader

    template = SA_TEMPLATE.read_bytes()
    reader = _Reader(template, SA_TEMPLATE.name)
    first = reader.start
    while template[first + 20] != 1:        # a restart (the CPU count) or a comment before the first statistics
        first += reader.rec_size + (4 if template[first + 20] == 2 else 64)
    length, _, (disk_at, disk_nr) = reader.layout(first)
    record = template[first:first + length]
    item = reader.disk_dtype
    body = record[:disk_at] + bytes(item.itemsize * devices) + record[disk_at + item.itemsize * disk_nr:]
    size = len(body)
    layout = numpy.dtype({"names": ["uptime", "time", "nr", "disks"],
                          "formats": ["<u8", "<u8", "<i4", (item, (devices,))],
                          "offsets": [0, 8, disk_at - 4, disk_at], "itemsize": size})
    rng = numpy.random.default_rng(seed)
    counters = {name: numpy.zeros(devices, dtype=item[name].base) for name in item.names}
    counters["major"][:] = [8 + i // 16 if i < 256 else 259 for i in range(devices)]
    counters["minor"][:] = [(i % 16) * 16 if i < 256 else i for i in range(devices)]
    busy = numpy.zeros(devices)
    written, second, day = 0, 0, 0
    start = 1709251200                       # 2024-03-01 00:00:00 UTC
    while second < seconds:
        path = folder / "var" / "log" / "sa" / f"sa{day + 1:02d}"
        path.parent.mkdir(parents=True, exist_ok=True)
        end = min(seconds, (day + 1) * 86400)
        with open(path, "wb") as handle:
            handle.write(template[:reader.start])
            while second < end:
                count = min(4096, (end - second + interval - 1) // interval)
                # the bytes are kept as bytes: a copy of a structured array leaves the gaps between
                # its named fields undefined, and those gaps are the other activities
                raw = bytearray(body * count)
                block = numpy.frombuffer(raw, dtype=layout)
                steps = numpy.arange(second, second + count * interval, interval, dtype=numpy.uint64)
                block["uptime"] = 100 * (steps + 1000)
                block["time"] = start + steps
                block["nr"] = devices
                ios = rng.integers(100, 150, size=(count, devices)).astype(numpy.uint64) * numpy.uint64(interval)
                busy = (300 + 600 * ((numpy.arange(devices) == 7)[None, :] & ((steps[:, None] // 600) % 2 == 1))) * interval
                for name, step in (("nr_ios", ios), ("rd_sect", ios * 16), ("wr_sect", ios * 8),
                                   ("rd_ticks", ios * 5), ("wr_ticks", ios * 5), ("tot_ticks", busy),
                                   ("rq_ticks", busy * 2)):
                    values = counters[name] + numpy.cumsum(step, axis=0).astype(counters[name].dtype)
                    block["disks"][name] = values
                    counters[name] = values[-1]
                for name in ("major", "minor"):
                    block["disks"][name] = counters[name]
                handle.write(raw)
                second += count * interval
        written += path.stat().st_size
        day += 1
    return written


_CHILD = """
import json, resource, sys, time
started, cpu_started = time.perf_counter(), time.process_time()
from diagdisk.diagnosis.analysis import analyze
analysis = analyze([sys.argv[1]], jobs=int(sys.argv[2]) or None)
performance = analysis.performance
elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
print(json.dumps({"seconds": elapsed, "cpu": cpu, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "samples": sum(s.raw_count for s in performance.series.values()),
                  "kept": sum(len(s.samples) for s in performance.series.values()),
                  "devices": len(performance.series)}))
"""


def measure(folder: Path, jobs: int = 1) -> dict:
    result = subprocess.run([sys.executable, "-c", _CHILD, str(folder), str(jobs)], capture_output=True, text=True,
                            check=True, cwd=HERE.parent)
    return json.loads(result.stdout.strip().splitlines()[-1])


def measure_sadf(folder: Path) -> dict | None:
    """sysstat's own `sadf -d` over the same saDD files, one after the other as a loop over the days
    would run it, output discarded: the wall clock and the children's CPU seconds."""
    import shutil

    sadf = shutil.which("sadf")
    if sadf is None:
        return None
    files = sorted((folder / "var" / "log" / "sa").glob("sa[0-9][0-9]"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    for path in files:
        subprocess.run([sadf, "-d", "--", "-d", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"seconds": time.perf_counter() - started,
            "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=200)
    parser.add_argument("--spans", default="600,1800,3600", help="seconds of samples, comma-separated")
    parser.add_argument("--interval", type=int, default=1, help="seconds between samples (--binary only; sa1 "
                                                                 "takes one every 600 s by default)")
    parser.add_argument("--binary", action="store_true", help="sysstat's binary saDD files instead of sar text")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes reading saDD days at once (0: one "
                                                           "per CPU); CPU seconds count the parent only")
    args = parser.parse_args()
    spans = [int(x) for x in args.spans.split(",")]
    baseline = measure_empty()
    kind = "saDD (binary)" if args.binary else "sar -d text"
    interval = args.interval if args.binary else 1
    print(f"performance stage: {kind}, {interval}-second interval, {args.devices} devices "
          f"(python {sys.version.split()[0]}; empty start-up {baseline['seconds']:.2f} s, {baseline['rss_mb']:.0f} MB)")
    print(f"{'span':>8} {'MB':>8} {'samples':>11} {'kept':>7} {'wall s':>7} {'CPU s':>7} {'samples/s':>11} {'MB/s':>7} "
          f"{'peak RSS MB':>12}" + (f" {'sadf -d s':>10} {'CPU s':>7} {'sadf/ours':>9}" if args.binary else ""))
    rates = []
    for span in spans:
        suffix = f"-i{interval}" if interval != 1 else ""
        folder = CACHE / f"{'sa-' if args.binary else ''}d{args.devices}-s{span}{suffix}"
        marker = folder / ".complete"
        if not marker.exists():
            if args.binary:
                size = generate_binary(folder, args.devices, span, interval=interval)
            else:
                size = generate(folder, args.devices, span)
            marker.write_text(str(size))
        size = int(marker.read_text())
        figures = measure(folder, args.jobs)
        rate = figures["samples"] / figures["cpu"]
        rates.append((rate, size / figures["cpu"]))
        line = (f"{span:>7}s {size / 1e6:8.1f} {figures['samples']:>11,} {figures['kept']:>7,} {figures['seconds']:7.2f} "
                f"{figures['cpu']:7.2f} {rate:11,.0f} {size / 1e6 / figures['cpu']:7.1f} {figures['rss_mb']:12.0f}")
        sadf = measure_sadf(folder) if args.binary else None
        if sadf is not None:
            # the ratio on the wall clock: both read the same files on the same machine, one run each
            line += f" {sadf['seconds']:10.2f} {sadf['cpu']:7.2f} {sadf['seconds'] / figures['seconds']:9.2f}"
        elif args.binary:
            line += "  (no sadf here: apt-get install sysstat)"
        print(line)
    rate, byte_rate = rates[-1]
    month_samples = MONTH // interval * args.devices
    print(f"a month at this rate: {month_samples:,} samples ({month_samples * (size / figures['samples']) / 1e9:.0f} GB "
          f"of {'saDD' if args.binary else 'text'}) in {month_samples / rate:.0f} CPU seconds "
          f"({month_samples / rate / 60:.1f} minutes) on one core; memory stays at the figure above "
          f"(series are capped at 1024 samples a device, merged as exact averages)")


def measure_empty() -> dict:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import diagdisk.diagnosis.analysis"], check=True, cwd=HERE.parent)
    return {"seconds": time.perf_counter() - started,
            "rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


if __name__ == "__main__":
    main()
