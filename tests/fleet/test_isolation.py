"""The isolated analysis process a worker uses: time limit, a process that dies, progress only on a
terminal, and the one line `fleet` prints when its extra is missing. None of this needs Dask."""

from __future__ import annotations

import io
import os
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from diagdisk.cli.main import main
from diagdisk.errors import ExitCode
from diagdisk.fleet.isolate import IsolatedAnalyser
from diagdisk.fleet.run import Progress

REPO = Path(__file__).resolve().parents[2]


def _fifo_request(tmp_path: Path) -> dict:
    """An input that never ends: a named pipe nobody writes to (opening it waits for a writer)."""
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    return {"inputs": [{"path": str(fifo), "kind": "stream", "files": None, "identity": None}]}


def test_an_input_past_the_time_limit_is_stopped_and_the_next_one_is_analysed(tmp_path):
    analyser = IsolatedAnalyser()
    try:
        stuck = analyser.analyse(_fifo_request(tmp_path), timeout=2)
        assert stuck["status"] == "failed"
        assert stuck["reason"].startswith("took longer than 2 s, the per-input time limit")
        sample = {"inputs": [{"path": str(REPO / "samples/demo-sosreport"), "kind": "sosreport", "files": None,
                              "identity": None}]}
        after = analyser.analyse(sample, timeout=300)
        assert after["status"] == "ok" and after["host"] == "pgdb02"
    finally:
        analyser.close()


def test_a_process_that_dies_is_replaced_once_then_the_input_fails(tmp_path):
    analyser = IsolatedAnalyser()
    killed = []

    def kill_each_child():
        # kill the child serving the stuck input, and its replacement
        while len(killed) < 2:
            child = analyser._child
            if child is not None and child.pid not in killed and child.poll() is None:
                time.sleep(0.5)
                os.kill(child.pid, 9)
                killed.append(child.pid)
            time.sleep(0.05)

    killer = threading.Thread(target=kill_each_child, daemon=True)
    killer.start()
    try:
        result = analyser.analyse(_fifo_request(tmp_path), timeout=600)
    finally:
        analyser.close()
    killer.join(timeout=10)
    assert len(killed) == 2
    assert result == {"status": "failed", "reason": "the analysis process died twice on this input "
                                                    "(killed by SIGKILL, likely out of memory)"}


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_is_drawn_on_a_terminal_and_silent_on_a_pipe():
    pipe = io.StringIO()
    quiet = Progress(10, stream=pipe)
    quiet.update(3, 1, force=True)
    quiet.finish()
    assert pipe.getvalue() == ""
    terminal = _Terminal()
    shown = Progress(10, stream=terminal)
    shown.update(3, 1, force=True)
    shown.finish()
    line = terminal.getvalue()
    assert line.startswith("\rfleet: 3/10 inputs, 1 failed, ") and "/min, ETA " in line and line.endswith("\n")


def test_progress_on_a_real_pseudo_terminal(tmp_path):
    leader, follower = os.openpty()
    with os.fdopen(follower, "w") as stream:
        progress = Progress(2, stream=stream)
        assert progress.enabled
        progress.update(1, 0, force=True)
    seen = os.read(leader, 4096).decode()
    os.close(leader)
    assert "fleet: 1/2 inputs, 0 failed" in seen


def test_fleet_without_its_extra_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails as when not installed
    result = CliRunner().invoke(main, ["fleet", str(REPO / "samples"), "-o", str(tmp_path / "out")])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.stderr.strip().splitlines() == [
        "diagdisk: error: the fleet needs distributed" + (" and pyarrow" if _missing("pyarrow") else "")
        + ": pip install 'diagdisk[fleet]'"]
    assert not (tmp_path / "out").exists()


def _missing(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return True
    return False


@pytest.mark.parametrize("argv", [["fleet", "--help"]])
def test_fleet_help_has_examples_and_exit_codes(argv):
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 0
    assert "diagdisk fleet /srv/sosreports/ -o fleet-out/" in result.output
    assert "Exit codes:" in result.output
