"""Progress on stderr when it is a terminal (checked on a real pseudo-terminal), nothing on a pipe
or with --quiet, and the report on stdout the same either way."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from diagdisk import progress as progress_module
from diagdisk.inputs.chunks import iter_chunks

from test_conventions import REPO, run_in_terminal

DEMO = REPO / "samples" / "demo-sosreport"


def _log(tmp_path: Path, lines: int = 20000) -> Path:
    path = tmp_path / "messages"
    line = "Mar  2 18:07:17 db1 kernel: sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]\n"
    path.write_text(line * lines)
    return path


def test_a_terminal_sees_the_source_the_bytes_the_rate_and_the_stages(tmp_path):
    log = _log(tmp_path)
    code, terminal, report = run_in_terminal(["analyze", str(log), "--jobs", "1"], stdout_terminal=False)
    assert code == 0
    shown = terminal.decode(errors="replace")
    assert "reading messages" in shown
    assert f"/{log.stat().st_size / 1e6:.2f}M" in shown          # bytes of the total
    assert "B/s" in shown and "left" in shown                   # rate and time left
    assert "running the rules" in shown and "writing the report" in shown
    assert report.startswith(b"FAILURE: ")                      # stdout is the report alone


def test_workers_report_their_bytes_too(tmp_path):
    logs = [_log(tmp_path / str(n)) for n in range(3) if (tmp_path / str(n)).mkdir() is None]
    for n, log in enumerate(logs):   # three logs, not three copies of one (a copy is read once)
        with log.open("a") as handle:
            handle.write(f"Mar  2 18:08:0{n} db1 kernel: sd 2:0:{n}:0: [sdc] Attached SCSI disk\n")
    code, terminal, _ = run_in_terminal(["analyze", *map(str, logs), "--jobs", "2"], stdout_terminal=False)
    assert code == 0
    shown = terminal.decode(errors="replace")
    assert "reading 3 logs" in shown and "3/3 done" in shown


def test_nothing_but_the_report_on_a_pipe(tmp_path):
    done = subprocess.run([sys.executable, "-m", "diagdisk", "analyze", str(_log(tmp_path))], capture_output=True,
                          env={**os.environ, "DIAGDISK_PROGRESS_DELAY": "0"}, cwd=REPO)
    assert done.returncode == 0
    assert done.stderr == b""
    assert done.stdout.startswith(b"FAILURE: ")


def test_quiet_silences_a_terminal(tmp_path):
    code, terminal, report = run_in_terminal(["analyze", str(_log(tmp_path)), "--quiet"], stdout_terminal=False)
    assert code == 0 and terminal == b"" and report.startswith(b"FAILURE: ")


def test_events_shows_progress_on_a_terminal(tmp_path):
    code, terminal, _ = run_in_terminal(["events", str(_log(tmp_path, 200))], stdout_terminal=False)
    assert code == 0 and b"reading messages" in terminal


def test_collect_shows_its_items_on_a_terminal(tmp_path):
    root = tmp_path / "host"
    (root / "proc/scsi").mkdir(parents=True)
    (root / "proc/scsi/scsi").write_text("Attached devices:\n")
    code, terminal, _ = run_in_terminal(["collect", "--root", str(root), "-o", str(tmp_path / "b.tar.gz")],
                                        stdout_terminal=False)
    assert code == 0
    shown = terminal.decode(errors="replace")
    assert "collecting" in shown and "items done" in shown
    assert "wrote" in shown


def test_bytes_are_counted_as_files_are_read(tmp_path):
    seen = []

    class Recorder(progress_module.Progress):
        shown = True

        def bytes_read(self, total):
            seen.append(total)

    log = _log(tmp_path)
    progress_module.start_counting(Recorder())
    try:
        for _ in iter_chunks(log, chunk_size=1 << 16):
            pass
    finally:
        progress_module.stop_counting()
    assert seen[-1] == log.stat().st_size
    assert seen == sorted(seen)
    progress_module.count_read(100)   # not counting: nothing happens
