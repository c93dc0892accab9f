"""Throughput and cost of `diagdisk fleet` on a generated fleet (benchmarks/generate_fleet.py).

    python benchmarks/fleet.py                       # 2,000 small sosreports + 3 large ones
    python benchmarks/fleet.py --count 200 --large 1 # a quick look
    python benchmarks/fleet.py --cohorts             # the cohort step only (below)

Runs the same inputs (into a fresh output folder each time, so nothing is skipped) three ways:
serially in this process (one isolated analysis process, no Dask), and on a dask.distributed
LocalCluster of 1 and of 2 worker processes (loopback). For each it prints inputs per minute
(the cluster's start-up included and left out), the peak and the first and last quarter's mean
RSS of each worker with its analysis process (flat memory: the last quarter is no larger than the
first), the analysis time per input measured inside the analysis process, and what the rest
costs per input: Dask scheduling plus hashing plus moving the report to the client plus writing
it (wall x workers - analysis time, divided by inputs). It also times N empty tasks on the
2-worker cluster: the scheduler's own overhead per task.

`--cohorts` measures the cohort step (diagdisk.fleet.cohorts) on fleets made by
generate_fleet.fleet_records, 3,000 hosts and 3,300 reports each (--hosts): for 20 seeds with one
planted cohort (a drive firmware failing at 5 times the base rate, --factor), whether it is flagged and
what else is; for 20 seeds with none, whether any cohort is flagged (or rises); for 20 seeds where
the planted firmware fails only in the last four weeks, whether it rises; then the time of the cohort
step for 10,000 reports. It prints figures; nothing here is a timed test. `--cohorts-e2e N`
analyses N generated sosreports (generate_fleet.generate, whose weak firmware revisions fail more)
on a 2-worker LocalCluster and prints the cohorts the run flags and the cohort step's time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.generate_fleet import generate  # noqa: E402
from diagdisk.fleet import run as fleet_run  # noqa: E402
from diagdisk.fleet.run import DaskExecutor, FleetOptions, Progress, SerialExecutor, run_fleet  # noqa: E402


class Recording:
    """Wraps an executor: keeps each result's analysis seconds and status."""

    def __init__(self, inner, seconds: dict):
        self.inner = inner
        self.seconds = seconds

    def run(self, tasks):
        for index, result in self.inner.run(tasks):
            self.seconds[index] = (result.get("seconds") or 0.0, result.get("status"))
            yield index, result

    def close(self):
        self.inner.close()


class MemorySampler(threading.Thread):
    """RSS of each given process and its children (the isolated analysers), every half second."""

    def __init__(self, pids_of):
        super().__init__(daemon=True)
        self.pids_of = pids_of
        self.samples: dict[int, list[int]] = {}
        self.stop = threading.Event()

    def run(self):
        import psutil
        while not self.stop.wait(0.5):
            for pid in self.pids_of():
                try:
                    process = psutil.Process(pid)
                    total = process.memory_info().rss + sum(c.memory_info().rss for c in process.children(recursive=True))
                except psutil.Error:
                    continue
                self.samples.setdefault(pid, []).append(total)


def _memory_lines(samples: dict[int, list[int]]) -> list[str]:
    lines = []
    for pid, values in sorted(samples.items()):
        if len(values) < 4:
            continue
        quarter = max(len(values) // 4, 1)
        first, last = statistics.mean(values[:quarter]), statistics.mean(values[-quarter:])
        lines.append(f"    pid {pid}: peak {max(values) / 2**20:.0f} MB, first quarter {first / 2**20:.0f} MB, "
                     f"last quarter {last / 2**20:.0f} MB ({len(values)} samples)")
    return lines


def measure(name: str, inputs: Path, make_executor, workers: int, startup: float = 0.0, pids_of=None) -> dict:
    out = Path(tempfile.mkdtemp(prefix=f"diagdisk-fleet-bench-{name}-"))
    seconds: dict[int, tuple] = {}
    record_seconds = []
    real_record = fleet_run._record

    def timed_record(*args, **kwargs):
        started = time.perf_counter()
        try:
            return real_record(*args, **kwargs)
        finally:
            record_seconds.append(time.perf_counter() - started)

    fleet_run._record = timed_record
    sampler = MemorySampler(pids_of or (lambda: [os.getpid()]))
    sampler.start()
    started = time.monotonic()
    try:
        summary = run_fleet([str(inputs)], out, FleetOptions(checkpoint_every=500),
                            executor_factory=lambda: Recording(make_executor(), seconds),
                            progress=Progress(0, enabled=sys.stderr.isatty()))
    finally:
        fleet_run._record = real_record
        sampler.stop.set()
        sampler.join()
    wall = time.monotonic() - started
    analysis = [s for s, status in seconds.values() if status == "ok"]
    report_bytes = [p.stat().st_size for p in (out / "reports").glob("*.json")]
    shutil.rmtree(out, ignore_errors=True)
    total = summary.total
    overhead = (wall * workers - sum(analysis)) / max(total, 1)
    result = {
        "name": name, "inputs": total, "analysed": summary.analysed, "failed": summary.failed, "wall": wall,
        "startup": startup, "per_minute": total / wall * 60, "per_minute_with_startup": total / (wall + startup) * 60,
        "analysis_median": statistics.median(analysis) if analysis else 0, "analysis_max": max(analysis or [0]),
        "analysis_sum": sum(analysis), "overhead_per_input": overhead,
        "client_record_median": statistics.median(record_seconds) if record_seconds else 0,
        "report_kb_mean": statistics.mean(report_bytes) / 1024 if report_bytes else 0,
        "memory": _memory_lines(sampler.samples),
    }
    print(f"\n{name}: {total} inputs ({summary.analysed} analysed, {summary.failed} failed) in {wall:.1f} s"
          f" + {startup:.1f} s start-up: {result['per_minute']:.0f} inputs/min"
          f" ({result['per_minute_with_startup']:.0f} with start-up)")
    print(f"  analysis per input: median {result['analysis_median'] * 1000:.0f} ms, largest {result['analysis_max']:.1f} s,"
          f" sum {result['analysis_sum']:.0f} s")
    print(f"  everything else per input (hash, scheduling, transfer, client writes) x workers: "
          f"{overhead * 1000:.0f} ms; client writes one result in {result['client_record_median'] * 1000:.1f} ms "
          f"(median), reports {result['report_kb_mean']:.0f} KB mean")
    print("  memory (RSS of the worker and its analysis process):")
    for line in result["memory"]:
        print(line)
    return result


def cluster(workers: int):
    import dask
    from distributed import Client, LocalCluster
    dask.config.set({"distributed.scheduler.allowed-failures": 1})
    started = time.monotonic()
    local = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                         dashboard_address="127.0.0.1:0")
    client = Client(local)
    return local, client, time.monotonic() - started


def worker_pids(client) -> list[int]:
    return list(client.run(os.getpid).values())


def empty_task_overhead(client, count: int) -> float:
    from distributed import wait
    started = time.monotonic()
    futures = client.map(_nothing, range(count), pure=False)
    wait(futures)
    client.gather(futures)
    return (time.monotonic() - started) / count


def _nothing(value):
    return value


PLANTED = "ATA Micron_5200_MTFD D1MU020"


def cohort_benchmark(seeds: int, hosts: int, reports: int, timed_reports: int, factor: float = 5.0) -> dict:
    from benchmarks.generate_fleet import fleet_records, inventory_of
    from diagdisk.fleet.cohorts import compute_cohorts
    planted_hits, planted_other, planted_patterns, null_flagged, null_patterns, null_rising = 0, 0, 0, 0, 0, 0
    for planted in (PLANTED, None):
        print(f"\n{'planted ' + PLANTED if planted else 'no planted cohort'}: {hosts} hosts, {reports} reports, "
              f"drives failing at 4% (x{factor:g} on the planted firmware)")
        for seed in range(seeds):
            records = fleet_records(hosts, reports, seed, planted, factor=factor)
            result = compute_cohorts(records, inventory_of(records))
            flagged = result.flagged()
            names = [f"{c['kind']} {c['value']} ({c['failing_hosts']}/{c['hosts']}, q={c['q_value']:.2g})"
                     for c in flagged]
            pattern_hit = any(p["kind"] == "drive" and p["value"] == planted for p in result.patterns)
            if planted:
                hit = any(c["kind"] == "drive" and c["value"] == planted for c in flagged)
                planted_hits += hit
                planted_other += len(flagged) - hit
                planted_patterns += pattern_hit
            else:
                null_flagged += bool(flagged)
                null_patterns += bool(result.patterns)
                null_rising += bool(result.rising())
            print(f"  seed {seed:2d}: flagged {names or 'none'}; patterns {len(result.patterns)}; "
                  f"rising {[c['kind'] + ' ' + c['value'] for c in result.rising()] or 'none'}")
    print(f"\nplanted cohort flagged in {planted_hits} of {seeds} seeds (other cohorts flagged beside it: "
          f"{planted_other}); its signature found as a pattern in {planted_patterns} of {seeds}")
    print(f"fleets with no planted cohort: a flagged cohort in {null_flagged} of {seeds} seeds, a pattern in "
          f"{null_patterns}, a rising cohort in {null_rising}")
    records = fleet_records(int(timed_reports * 0.8), timed_reports, 1, PLANTED)
    inventory = inventory_of(records)
    times = []
    for _ in range(3):
        started = time.perf_counter()
        compute_cohorts(records, inventory)
        times.append(time.perf_counter() - started)
    # a firmware whose failures start four weeks before the last report: a rollout gone bad
    late = 0
    for seed in range(seeds):
        records = fleet_records(hosts, reports, seed, PLANTED, factor=factor, planted_since=28)
        result = compute_cohorts(records, inventory_of(records))
        late += any(c["kind"] == "drive" and c["value"] == PLANTED for c in result.rising())
    print(f"a planted firmware failing only in the last four weeks: rising in {late} of {seeds} seeds")
    print(f"cohort step for {timed_reports} reports ({int(timed_reports * 0.8)} hosts): "
          f"{', '.join(f'{t:.2f}' for t in times)} s (3 runs; the machine is shared)")
    return {"planted_flagged": planted_hits, "null_flagged": null_flagged, "seconds": times}


def cohort_end_to_end(count: int, seed: int, cache: Path) -> None:
    from diagdisk.fleet import cohorts as cohorts_module
    folder = cache / f"n{count}-l0-s{seed}"
    generate(folder, count, 0, seed)
    timed = []
    real = fleet_run.compute_cohorts

    def timed_cohorts(*args, **kwargs):
        started = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            timed.append(time.perf_counter() - started)

    fleet_run.compute_cohorts = timed_cohorts
    out = Path(tempfile.mkdtemp(prefix="diagdisk-fleet-cohorts-"))
    try:
        summary = run_fleet([str(folder)], out, FleetOptions(checkpoint_every=500),
                            executor_factory=lambda: DaskExecutor(workers=2), progress=Progress(0, enabled=False))
        import pandas as pd
        cohorts = pd.read_parquet(out / "cohorts.parquet")
    finally:
        fleet_run.compute_cohorts = real
        shutil.rmtree(out, ignore_errors=True)
    print(f"\n{summary.total} generated sosreports ({summary.analysed} analysed, {summary.failed} failed) in "
          f"{summary.seconds:.0f} s on 2 workers; cohort step {timed[-1]:.2f} s; {len(cohorts)} cohorts")
    for line in summary.flagged or ["no cohort flagged"]:
        print(f"  flagged: {line}")
    for line in summary.patterns:
        print(f"  pattern: {line}")
    for line in summary.rising:
        print(f"  rising: {line}")
    drives = cohorts[cohorts.kind == cohorts_module.DRIVE].sort_values("p_value")
    print("  drive cohorts (weak revisions in generate_fleet: SN04, D1MU020, N004):")
    for row in drives.itertuples():
        print(f"    {row.value:<34} {row.failing_hosts:4d}/{row.hosts:<4d} {row.rate:6.1%} (fleet {row.base_rate:.1%}) "
              f"p={row.p_value:.2g} q={row.q_value:.2g}{'  FLAGGED' if row.flagged else ''}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--large", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--inputs", type=Path, default=Path(__file__).resolve().parent / ".cache" / "fleet")
    parser.add_argument("--skip-serial", action="store_true")
    parser.add_argument("--cohorts", action="store_true", help="measure the cohort step only")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--cohorts-e2e", type=int, default=0, metavar="N",
                        help="analyse N generated sosreports and show the cohorts the run flags")
    parser.add_argument("--hosts", type=int, default=3000, help="hosts of each --cohorts fleet")
    parser.add_argument("--factor", type=float, default=5.0, help="the planted firmware's failure rate over the base")
    args = parser.parse_args()
    if args.cohorts_e2e:
        cohort_end_to_end(args.cohorts_e2e, args.seed, args.inputs)
        return
    if args.cohorts:
        cohort_benchmark(args.seeds, hosts=args.hosts, reports=int(args.hosts * 1.1), timed_reports=10_000,
                         factor=args.factor)
        return
    folder = args.inputs / f"n{args.count}-l{args.large}-s{args.seed}"
    started = time.monotonic()
    paths = generate(folder, args.count, args.large, args.seed)
    size = sum(p.stat().st_size for p in paths)
    print(f"fleet: {len(paths)} archives, {size / 1e6:.0f} MB compressed, in {folder} "
          f"(generated or checked in {time.monotonic() - started:.0f} s); {os.cpu_count()} CPUs")
    results = []
    if not args.skip_serial:
        results.append(measure("serial, 1 process", folder, SerialExecutor, workers=1))
    for workers in (1, 2):
        local, client, startup = cluster(workers)
        try:
            pids = worker_pids(client)
            results.append(measure(f"LocalCluster, {workers} worker{'s' if workers > 1 else ''}", folder,
                                   lambda: _SharedExecutor(client), workers=workers, startup=startup,
                                   pids_of=lambda: pids))
            if workers == 2:
                per_task = empty_task_overhead(client, 5000)
                print(f"\nscheduler overhead: {per_task * 1000:.2f} ms per empty task (5000 tasks, 2 workers)")
        finally:
            client.close()
            local.close()
    print("\n" + json.dumps(results, indent=1, default=str))


class _SharedExecutor:
    """The DaskExecutor on a cluster that outlives the run."""

    def __init__(self, client):
        self.inner = DaskExecutor(client=client)

    def run(self, tasks):
        return self.inner.run(tasks)

    def close(self):
        pass


if __name__ == "__main__":
    main()
