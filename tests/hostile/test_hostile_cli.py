"""The command line on hostile input: documented exit codes, one-line errors, no traceback, the
output never over an input nor half-written, and Ctrl-C cleaning up after itself."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from diagdisk.diagnosis import analysis as analysis_module
from diagdisk.inputs import opener as inputs
from diagdisk.cli.main import main
from diagdisk.errors import ExitCode

from hostile_builders import dir_member, file_member, permission_denied_for, write_archive

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples/modern-sas-medium-error-sdc"
TOP = "sosreport-db1"
MEDIUM_ERROR = (b"2024-03-14T02:17:43.512345+00:00 db1 kernel: sd 2:0:2:0: [sdc] tag#12 Sense Key : Medium Error "
                b"[current]\n")


def run(*args, stdin: bytes | None = None):
    return CliRunner().invoke(main, [str(arg) for arg in args], input=stdin)


def one_line_error(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.endswith(".tmp"))


def sosreport(tmp_path: Path, name: str = "sos.tar.xz", compression: str = "xz", messages: bytes = MEDIUM_ERROR * 20,
              extra=()):
    return write_archive(tmp_path / name, [dir_member(TOP), file_member(f"{TOP}/var/log/messages", messages),
                                           file_member(f"{TOP}/proc/scsi/scsi", b"Attached devices:\n"), *extra],
                         compression)


# -- exit codes ------------------------------------------------------------------------------------


def test_exit_codes_follow_the_documented_contract(tmp_path, scratch):
    assert run("analyze", SAMPLE).exit_code == ExitCode.OK
    assert run("analyze", SAMPLE, "--fail-on", "high").exit_code == ExitCode.FINDINGS
    assert run("analyze", tmp_path / "absent").exit_code == ExitCode.BAD_INPUT
    filler = file_member(f"{TOP}/sos_commands/filler", os.urandom(200_000))
    full = sosreport(tmp_path, "full.tar.gz", "gz", extra=[filler])
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(full.read_bytes()[: full.stat().st_size * 3 // 4])
    partial = run("analyze", cut)
    assert partial.exit_code == ExitCode.PARTIAL, partial.output
    assert "INCOMPLETE" in partial.stdout
    assert partial.stderr.startswith("diagdisk: warning: part of the input could not be read")
    # A finding at or above --fail-on wins over an incomplete read: the gate must still fire.
    assert run("analyze", cut, "--fail-on", "high").exit_code == ExitCode.FINDINGS


def test_events_lists_its_warnings_on_stderr_and_exits_3_when_partial(tmp_path):
    (tmp_path / "messages").write_bytes(MEDIUM_ERROR * 3)
    result = run("events", tmp_path / "messages", "--max-file-size", "150")
    assert result.exit_code == ExitCode.PARTIAL
    assert result.stdout.count('"kind":"sense"') == 1
    assert "diagdisk: warning: messages: read its first 150 bytes of text, the per-file cap" in result.stderr


@pytest.mark.parametrize("args, message", [
    (["analyze", "{tmp}/absent"], "{tmp}/absent: no such file or directory"),
    (["analyze", "{tmp}/fake.tar.xz"], "{tmp}/fake.tar.xz: not a tar archive (no gzip, xz, bzip2 or tar signature)"),
    (["analyze", "/dev/zero"], "/dev/zero: is a device, not a file diagdisk can read"),
    (["analyze", "{tmp}/empty-folder"], "{tmp}/empty-folder: holds no log, sosreport or command output"),
    (["analyze", "{tmp}/fake.tar.xz", "--max-file-size", "lots"], "Invalid value for '--max-file-size'"),
])
def test_bad_input_is_one_line_naming_the_path_and_exit_2(tmp_path, args, message):
    (tmp_path / "fake.tar.xz").write_text("<html>404</html>\n")
    (tmp_path / "empty-folder").mkdir()
    if not Path("/dev/zero").is_char_device():
        pytest.skip("this machine has no /dev/zero device")
    result = run(*[arg.format(tmp=tmp_path) for arg in args])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert message.format(tmp=tmp_path) in result.stderr
    assert "Traceback" not in result.output


def test_an_input_that_cannot_be_looked_at_is_a_one_line_error(tmp_path, monkeypatch):
    target = tmp_path / "messages"
    target.write_bytes(MEDIUM_ERROR)
    permission_denied_for(monkeypatch, inputs.os, "stat", target)
    result = run("analyze", target)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert one_line_error(result) == f"diagdisk: error: {target}: permission denied"


def test_unexpected_failure_is_one_line_without_debug_and_a_traceback_with_it(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("rule engine exploded")

    monkeypatch.setattr("diagdisk.diagnosis.engine.evaluate_rules", broken)
    result = run("analyze", SAMPLE)
    assert result.exit_code == ExitCode.INTERNAL == 70
    assert one_line_error(result) == ("diagdisk: internal error: RuntimeError: rule engine exploded "
                                      "(rerun with --debug)")
    debug = run("--debug", "analyze", SAMPLE)
    assert isinstance(debug.exception, RuntimeError)
    # --debug is taken after the command too, where the hint's reader is likely to add it
    debug_after = run("analyze", SAMPLE, "--debug")
    assert isinstance(debug_after.exception, RuntimeError)


# -- output -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["archive", "file inside input folder", "new file inside input folder",
                                    "symlink to input", "second input"])
def test_output_never_overwrites_an_input_and_is_refused_before_the_analysis(tmp_path, monkeypatch, target):
    archive = sosreport(tmp_path)
    folder = tmp_path / "sosreport"
    (folder / "var/log").mkdir(parents=True)
    (folder / "var/log/messages").write_bytes(MEDIUM_ERROR)
    (tmp_path / "link").symlink_to(archive)
    inputs_and_output = {
        "archive": ([archive], archive),
        "file inside input folder": ([folder], folder / "var/log/messages"),
        "new file inside input folder": ([folder], folder / "report.html"),
        "symlink to input": ([archive], tmp_path / "link"),
        "second input": ([folder, archive], archive),
    }[target]
    paths, output = inputs_and_output
    before = {path: path.read_bytes() for path in [archive, folder / "var/log/messages"]}
    monkeypatch.setattr(analysis_module, "analyze", lambda *a, **k: pytest.fail("analysed before refusing"))
    result = run("analyze", *paths, "-o", output)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "refusing to" in one_line_error(result)
    assert {path: path.read_bytes() for path in before} == before
    assert sorted(p.name for p in folder.rglob("*")) == ["log", "messages", "var"]


def test_output_onto_an_input_folder_is_a_usage_error(tmp_path):
    (tmp_path / "sosreport").mkdir()
    result = run("analyze", tmp_path / "sosreport", "-o", tmp_path / "sosreport")
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "refusing to overwrite the input" in result.stderr and "Traceback" not in result.output
    # a folder inside the input is refused too (reports are never written into an input)
    result = run("analyze", tmp_path / "sosreport", "-o", f"{tmp_path / 'sosreport' / 'reports'}/")
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "refusing to write inside the input folder" in result.stderr
    assert list((tmp_path / "sosreport").iterdir()) == []


@pytest.mark.parametrize("failure, code", [(RuntimeError("renderer crashed"), ExitCode.INTERNAL),
                                           (KeyboardInterrupt(), ExitCode.INTERRUPTED)])
def test_a_failure_mid_render_leaves_the_previous_report_whole(tmp_path, monkeypatch, failure, code):
    report = tmp_path / "report.html"
    report.write_text("previous complete report")

    def half_render(report_dict):
        raise failure

    monkeypatch.setattr("diagdisk.report.html.render_html", half_render)
    result = run("analyze", SAMPLE, "--format", "html", "-o", report)
    assert result.exit_code == code
    assert report.read_text() == "previous complete report"
    assert leftovers(tmp_path) == []


def test_a_failure_while_writing_leaves_no_half_written_report(tmp_path, monkeypatch):
    report = tmp_path / "report.json"
    written = []

    def failing_replace(source, destination):
        written.append(Path(source).read_text())
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("diagdisk.inputs.safeio.os.replace", failing_replace)
    result = run("analyze", SAMPLE, "--format", "json", "-o", report)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert one_line_error(result) == f"diagdisk: error: {report}: cannot write: no space left on device"
    assert written and written[0].startswith("{")  # the report was complete in its temp file
    assert not report.exists() and leftovers(tmp_path) == []


def test_the_report_lands_whole_and_only_at_the_output_path(tmp_path, scratch):
    archive = sosreport(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    result = run("analyze", archive, "--format", "json", "-o", out / "report.json")
    assert result.exit_code == ExitCode.OK
    assert sorted(p.name for p in out.iterdir()) == ["report.json"]
    assert (out / "report.json").read_text().rstrip().endswith("}")
    assert list(scratch.iterdir()) == []


# -- streams ----------------------------------------------------------------------------------------


def test_a_tarball_on_stdin_is_opened_as_an_archive_and_capped(tmp_path, scratch):
    data = sosreport(tmp_path, "sos.tar.gz", "gz").read_bytes()
    whole = run("analyze", "-", "--format", "json", stdin=data)
    assert whole.exit_code == ExitCode.OK
    assert '"path": "var/log/messages"' in whole.stdout
    empty = run("analyze", "-", stdin=b"")
    assert empty.exit_code == ExitCode.BAD_INPUT
    assert one_line_error(empty) == "diagdisk: error: <stdin>: empty file; nothing to analyze"
    capped = run("analyze", "-", "--max-total-size", "100", stdin=b"x" * 1000)
    assert capped.exit_code == ExitCode.PARTIAL
    assert "<stdin>: read its first 100 bytes, the total cap" in capped.stdout
    assert list(scratch.iterdir()) == []


def test_a_named_pipe_is_read_once_like_stdin(tmp_path, scratch):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)

    def writer():
        with open(pipe, "wb") as handle:
            handle.write(gzip.compress(MEDIUM_ERROR * 3))

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    result = run("events", pipe)
    thread.join(timeout=10)
    assert result.exit_code == ExitCode.OK
    assert result.stdout.count('"kind":"sense"') == 3


# -- Ctrl-C -----------------------------------------------------------------------------------------


def big_sosreport(tmp_path: Path) -> Path:
    line = (b"2024-03-14T02:17:%02d.512345+00:00 db1 kernel: sd 2:0:%d:0: [sd%s] tag#%d Sense Key : Medium Error "
            b"[current]\n")
    messages = b"".join(line % (i % 60, i % 4, b"abcd"[i % 4 : i % 4 + 1], i % 1000) for i in range(150_000))
    return sosreport(tmp_path, "big.tar.gz", "gz", messages)


def test_ctrl_c_exits_130_with_one_line_and_removes_the_extraction_folder(tmp_path):
    archive = big_sosreport(tmp_path)
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(private_tmp), PYTHONPATH=str(REPO))
    process = subprocess.Popen([sys.executable, "-m", "diagdisk", "analyze", str(archive)], cwd=tmp_path, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               # the test runner may ignore SIGINT; the child must take the default
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not any(private_tmp.iterdir()):
            assert process.poll() is None, "finished before it could be interrupted"
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(0.2)  # extracting or analysing
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    # 130, or killed by SIGINT itself (the shell shows 130 as well) when the signal arrives while
    # Python is shutting down after handling it
    assert process.returncode in (ExitCode.INTERRUPTED, -signal.SIGINT), stderr
    assert b"Traceback" not in stderr
    assert stderr.decode().strip() in ("diagdisk: interrupted", "")
    assert list(private_tmp.iterdir()) == []


def test_ctrl_c_while_a_subcommand_loads_exits_130_not_click_abort(monkeypatch):
    import importlib

    real_import = importlib.import_module

    def interrupted(name, *args):
        if name == "diagdisk.cli.rules":
            raise KeyboardInterrupt
        return real_import(name, *args)

    monkeypatch.setattr(importlib, "import_module", interrupted)
    result = run("rules", "list")
    assert result.exit_code == ExitCode.INTERRUPTED
    assert result.stderr.strip() == "diagdisk: interrupted"


def test_ctrl_c_while_the_command_line_loads_exits_130_without_a_traceback(monkeypatch, capsys):
    from diagdisk.__main__ import run as entry_point

    class InterruptedImport:
        def find_spec(self, name, path=None, target=None):
            if name == "diagdisk.cli.main":
                raise KeyboardInterrupt
            return None

    monkeypatch.delitem(sys.modules, "diagdisk.cli.main")
    monkeypatch.setattr(sys, "meta_path", [InterruptedImport(), *sys.meta_path])
    with pytest.raises(SystemExit) as exit_info:
        entry_point()
    assert exit_info.value.code == ExitCode.INTERRUPTED
    assert capsys.readouterr().err == "diagdisk: interrupted\n"
