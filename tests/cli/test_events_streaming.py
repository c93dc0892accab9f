"""`diagdisk events` writes each event as it is read and keeps none: the listing starts before the
log is read through, memory does not grow with the log, and a reader that goes away (`| head -1`)
ends the run cleanly. No test here depends on how fast the machine is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from diagdisk import progress as progress_module
from diagdisk.diagnosis.eventstream import month_runs, stream_log
from diagdisk.inputs.limits import Limits
from diagdisk.inputs.sources import Source

REPO = Path(__file__).resolve().parents[2]
STORM_LINE = ("2024-03-14T02:{m:02d}:{s:02d}.512345+00:00 db1 kernel: sd 2:0:2:0: [sdc] tag#{tag} "
              "Sense Key : Medium Error [current]\n")


def storm(path: Path, lines: int) -> Path:
    with path.open("w") as handle:
        for n in range(lines):
            handle.write(STORM_LINE.format(m=(n // 60) % 60, s=n % 60, tag=n % 1000))
    return path


class _Stop(Exception):
    pass


class _Counted(progress_module.Progress):
    shown = True

    def __init__(self):
        self.read = 0

    def bytes_read(self, total):
        self.read = total


def test_the_first_event_is_out_before_the_log_is_read_through(tmp_path):
    log = storm(tmp_path / "messages", 60_000)
    seen = []

    def emit(event):
        seen.append(event)
        raise _Stop   # the reader of the listing went away after one event

    counted = _Counted()
    progress_module.start_counting(counted)
    try:
        with pytest.raises(_Stop):
            stream_log(Source(path=log, name="messages", format="log"), None, Limits(), emit, chunk_size=1 << 16)
    finally:
        progress_module.stop_counting()
    assert seen[0]["kind"] == "sense" and seen[0]["line"] == 1
    assert 0 < counted.read < log.stat().st_size // 4


def test_bsd_stamps_get_their_year_from_the_whole_file(tmp_path):
    log = tmp_path / "messages"
    log.write_text("Dec 31 23:59:58 db1 kernel: sd 2:0:2:0: [sdc] tag#1 Sense Key : Medium Error [current]\n"
                   "Jan  1 00:00:01 db1 kernel: sd 2:0:2:0: [sdc] tag#2 Sense Key : Medium Error [current]\n")
    runs = month_runs(log, "messages", Limits())
    assert (runs.first_lines, runs.months, runs.last_month_day) == ([1, 2], [12, 1], (1, 1))
    from datetime import datetime
    times = []
    stream_log(Source(path=log, name="messages", format="log"), datetime(2024, 3, 1), Limits(),
               lambda event: times.append(event["time"]))
    assert times == ["2023-12-31T23:59:58", "2024-01-01T00:00:01"]


def _peak_rss_kb(args: list[str]) -> int:
    """The peak resident memory of one `diagdisk` run, its output thrown away."""
    process = subprocess.Popen([sys.executable, "-m", "diagdisk", *args], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0, process.stderr.read()
    process.stderr.close()
    return usage.ru_maxrss


def test_memory_does_not_grow_with_the_log(tmp_path):
    small = storm(tmp_path / "small.log", 5_000)
    large = storm(tmp_path / "large.log", 80_000)
    grown_mb = (_peak_rss_kb(["events", str(large)]) - _peak_rss_kb(["events", str(small)])) / 1024
    # holding the 75,000 more events (as the listing once did) takes well over 100 MB
    assert grown_mb < 30, f"peak memory grew by {grown_mb:.0f} MB"


def test_a_reader_that_goes_away_ends_the_run_cleanly(tmp_path):
    log = storm(tmp_path / "messages", 40_000)
    process = subprocess.Popen([sys.executable, "-m", "diagdisk", "events", str(log)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    first = process.stdout.readline()
    process.stdout.close()   # `| head -1`
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=300) == 0, stderr
    assert json.loads(first)["kind"] == "sense"
    assert "Traceback" not in stderr and "error" not in stderr
