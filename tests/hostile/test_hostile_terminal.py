"""Log text never reaches a terminal raw: ESC, BEL, the other C0 and C1 controls and the bidi
controls in log lines, unparsed samples, host names, file names inside an archive and pasted
lines are shown as escapes in every text output (report, stderr, decode, CSV, HTML)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from diagdisk.cli.main import main
from diagdisk.safetext import escape_control, escape_lines

from hostile_builders import dir_member, file_member, write_archive

# what a crafted log line may carry: retitle the terminal (OSC ... BEL), clear the screen (CSI 2J),
# a C1 CSI (0x9b), a carriage return over what was printed, a backspace, right-to-left override
TITLE = "\x1b]0;owned\x07"
CLEAR = "\x1b[2J\x1b[H"
C1 = "\x9b31m"
OVERWRITE = "\rHEALTHY\b"
RLO = "\u202etxt.exe"
RAW = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
TOP = "sosreport-db1"


def hostile_sosreport(tmp_path: Path) -> Path:
    messages = (
        # a medium error whose syslog host field carries a title change: parsed, so it is evidence
        f"Mar  2 18:07:17 db1{TITLE} kernel: sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]\n"
        f"Mar  2 18:07:18 db1{TITLE} kernel: sd 2:0:1:0: [sdb] tag#4 Sense Key : Medium Error [current]\n"
        # a candidate line no grammar takes and no device prefix claims: an unparsed sample
        f"Mar  2 18:07:19 db1 kernel: Sense Key {CLEAR}{C1}{OVERWRITE}{RLO} garbled\n"
    ).encode()
    return write_archive(tmp_path / "sos.tar.xz", [
        dir_member(TOP),
        file_member(f"{TOP}/var/log/messages", messages),
        file_member(f"{TOP}/hostname", f"db1{CLEAR}{RLO}\n".encode()),
        file_member(f"{TOP}/sos_commands/logs/journalctl{CLEAR}_--no-pager", b"\x00\x01binary\x02" * 64),
    ])


def test_escape_control_writes_controls_as_python_does():
    assert escape_control(f"a{TITLE}b") == "a\\x1b]0;owned\\x07b"
    assert escape_control(C1 + RLO) == "\\x9b31m\\u202etxt.exe"
    assert escape_control("tab\tstays, é and ü stay") == "tab\tstays, é and ü stay"
    assert escape_lines("one\ntwo\x1b") == "one\ntwo\\x1b"
    assert RAW.search(escape_control("".join(map(chr, range(0x00, 0xA0))))) is None


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    return hostile_sosreport(tmp_path_factory.mktemp("hostile-terminal"))


def test_the_text_report_shows_every_control_character_escaped(archive):
    result = CliRunner().invoke(main, ["analyze", str(archive)])
    assert result.exit_code in (0, 3), result.output
    assert RAW.search(result.stdout.replace("\n", "")) is None
    assert "\\x1b]0;owned\\x07" in result.stdout            # the evidence line, escaped
    assert "\\x9b31m" in result.stdout and "\\u202etxt.exe" in result.stdout   # the unparsed sample
    assert "\\x0dHEALTHY\\x08" in result.stdout          # a carriage return cannot overwrite the line
    assert result.stdout.startswith("FAILURE: ")            # and the verdict still comes first


def test_stderr_warnings_are_escaped_too(archive):
    result = CliRunner().invoke(main, ["analyze", str(archive), "--format", "json"])
    assert RAW.search(result.stderr.replace("\n", "")) is None


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_the_event_listing_is_escaped(archive, fmt):
    result = CliRunner().invoke(main, ["events", str(archive), "--format", fmt])
    assert result.exit_code in (0, 3)
    assert RAW.search(result.stdout.replace("\n", "").replace("\r", "")) is None
    assert "owned" in result.stdout


def test_the_html_page_is_safe_to_cat(archive, tmp_path):
    page = tmp_path / "report.html"
    CliRunner().invoke(main, ["analyze", str(archive), "--format", "html", "-o", str(page)])
    text = page.read_text()
    assert RAW.search(text.replace("\n", "")) is None
    assert "\\x1b]0;owned\\x07" in text


def test_a_pasted_line_is_decoded_with_its_controls_escaped():
    line = f"sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current] {TITLE}"
    result = CliRunner().invoke(main, ["decode", "line", line])
    assert RAW.search(result.stdout.replace("\n", "")) is None
    stream = CliRunner().invoke(main, ["decode", "line", "-"], input=f"{line}\nnot a kernel line {CLEAR}\n")
    assert RAW.search(stream.stdout.replace("\n", "")) is None


def test_an_error_naming_a_hostile_path_is_escaped(tmp_path):
    missing = tmp_path / f"sos{CLEAR}.tar.xz"
    result = CliRunner().invoke(main, ["analyze", str(missing)])
    assert result.exit_code == 2
    assert RAW.search(result.stderr.replace("\n", "")) is None and "\\x1b[2J" in result.stderr
