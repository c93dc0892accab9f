"""What `diagdisk collect` gathers for the performance section: /proc/diskstats twice (with a fake
clock and sleep: no test waits), iostat -x -t -y 1 N through a fake binary, sysstat files, queue
settings, lsblk -t and blockdev --report; and the bundle reads back with a performance section."""

import time
from datetime import datetime
from pathlib import Path

from diagdisk.collect.items import Context, _diskstats_twice_item, _iostat_item
from diagdisk.diagnosis.analysis import analyze
from diagdisk.diagnosis.engine import evaluate_rules, load_rules
from diagdisk.diagnosis.perf import evaluate_performance_rules

from test_collect import invoke, make_bin, make_root, open_bundle, world_dir, write  # noqa: F401

FAKE_IOSTAT = """#!/bin/sh
echo "$*" >> "{log}"
printf 'Linux 5.14.0 (db1) \\t11/25/2026 \\t_x86_64_\\t(2 CPU)\\n\\n'
for s in 01 02 03; do
printf '11/25/2026 09:00:%s PM\\n' $s
printf 'Device            r/s     rkB/s   rrqm/s  %%rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %%wrqm w_await wareq-sz     d/s     dkB/s   drqm/s  %%drqm d_await dareq-sz     f/s f_await  aqu-sz  %%util\\n'
printf 'sda            180.00   2880.00     0.00   0.00   45.00    16.00   20.00    160.00     0.00   0.00   30.00     8.00    0.00      0.00     0.00   0.00    0.00     0.00    0.00    0.00    8.70  99.00\\n\\n'
done
"""


def context(root: Path, **changes) -> Context:
    values = dict(root=root, since=datetime(2000, 1, 1).astimezone(), timeout=5, deadline=time.monotonic() + 60,
                  search_path=None, run_commands=False, privileged=False)
    values.update(changes)
    return Context(**values)


def test_diskstats_is_read_twice_with_the_contexts_clock_and_sleep(tmp_path):
    stats = write(tmp_path / "proc/diskstats", "   8       0 sda 100 0 800 50 0 0 0 0 0 40 50\n")
    clock = iter([1000.0, 1005.0])
    slept = []

    def fake_sleep(seconds):
        slept.append(seconds)
        stats.write_text("   8       0 sda 600 0 4800 5050 0 0 0 0 2 4990 9000\n")

    outcome = _diskstats_twice_item().collect(context(tmp_path, sample_counters=True, clock=lambda: next(clock),
                                                      sleep=fake_sleep))
    assert slept == [5.0] and outcome.records[0]["status"] == "ok"
    data = outcome.artifacts[0].data.decode()
    assert data.startswith("=== 1000.000 ===\n") and "=== 1005.000 ===\n" in data
    bundle = tmp_path / "bundle"
    write(bundle / "sos_commands/diagdisk/diskstats_twice", data)
    write(bundle / "sys/block/sda/queue/rotational", "1\n")
    performance = analyze([str(bundle)]).performance
    series = performance.series["sda"].samples[0]
    assert series[2] == 100.0 and series[10] == 10.0 and series[14] == 99.0   # IOPS, await, util


def test_a_recorded_tree_is_not_sampled_over_time(tmp_path):
    outcome = _diskstats_twice_item().collect(context(tmp_path, sleep=lambda s: (_ for _ in ()).throw(AssertionError)))
    assert outcome.records[0]["status"] == "skipped" and "recorded tree" in outcome.records[0]["reason"]


def test_perf_seconds_zero_runs_no_iostat(tmp_path):
    outcome = _iostat_item().collect(context(tmp_path, perf_seconds=0, run_commands=True))
    assert outcome.records[0]["status"] == "skipped" and outcome.records[0]["reason"] == "--perf-seconds 0"


def test_bundle_holds_iostat_settings_and_sysstat_files_and_reads_back(world_dir):  # noqa: F811
    root, bin_dir = make_root(world_dir), make_bin(world_dir)
    log = world_dir / "iostat.log"
    write(bin_dir / "iostat", FAKE_IOSTAT.format(log=log), 0o755)
    write(bin_dir / "lsblk", "#!/bin/sh\n[ \"$1\" = -t ] && printf 'NAME ALIGNMENT MIN-IO OPT-IO PHY-SEC LOG-SEC ROTA SCHED       RQ-SIZE  RA WSAME\\nsda          0    512      0     512     512    1 mq-deadline      64 128    0B\\n'\nexit 0\n", 0o755)
    write(root / "var/log/sa/sar25", "Linux 5.14.0 (db1) \t11/25/2026 \t_x86_64_\t(2 CPU)\n")
    write(root / "proc/pressure/io", "some avg10=12.50 avg60=8.00 avg300=2.00 total=1\nfull avg10=10.00 avg60=6.00 avg300=1.00 total=1\n")
    result = invoke(["--root", root, "--bin-dir", bin_dir, "--perf-seconds", "3", "-o", world_dir / "out.tar.gz"],
                    world_dir)
    assert result.exit_code == 0, result.output
    _, files, _, items = open_bundle(world_dir / "out.tar.gz")
    assert log.read_text().split() == ["-x", "-t", "-y", "1", "3"]
    assert items["iostat -x -t -y 1 3"]["status"] == "ok"
    for path in ("sos_commands/diagdisk/iostat_-x_-t_-y_1_3", "sos_commands/block/lsblk_-t", "var/log/sa/sar25",
                 "proc/pressure/io", "sys/block/sda/queue/rotational"):
        assert path in files, path
    analysis = analyze([str(world_dir / "out.tar.gz")])
    findings, _ = evaluate_rules(load_rules(), analysis)
    performance = evaluate_performance_rules(load_rules(), analysis.performance, findings, analysis.topology)
    assert analysis.performance.devices["sda"].cls == "hdd"
    assert analysis.performance.pressure["some"]["avg10"] == 12.5
    # -y: every report is an interval; three of them, sustained saturation of the rotating disk
    assert analysis.performance.series["sda"].raw_count == 3
    assert ("saturated", "sda") in {(f["verdict"], f["device"]) for f in performance}
    # the medium error the failure rules find on sda is named beside the performance finding
    saturated = next(f for f in performance if f["verdict"] == "saturated")
    assert "DD101" in saturated["related_findings"]
