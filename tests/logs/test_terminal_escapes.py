"""A dmesg printed with colours (`dmesg --color=always`, or a script/tmux/screen capture of a
terminal) reads as the same dmesg without them: the sequences are removed before framing and
counted in a note, and the verdict does not change. Other control characters stay, shown escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from diagdisk.cli.main import main
from diagdisk.logs.framing import frame_line, strip_terminal_escapes

ROOT = Path(__file__).resolve().parents[2]
PLAIN = ROOT / "samples" / "md-raid1-degraded-sdb" / "sos_commands" / "kernel" / "dmesg"

# util-linux dmesg.c's default scheme: the time green, the subsystem prefix (the text up to the
# first ": ") brown, the message of an error red, of a critical message bold red; each coloured
# part ends with a reset.
GREEN, BROWN, RED, BOLD_RED, RESET = "\x1b[32m", "\x1b[33m", "\x1b[31m", "\x1b[1m\x1b[31m", "\x1b[0m"
_STAMPED = re.compile(r"(\[ *\d+\.\d+\] )(.*)")


def _level(message: str) -> str:
    if "Disk failure" in message:
        return "crit"
    if re.search(r"error|failed|exception|Sense Key", message, re.I):
        return "err"
    return "info"


def _subsystem_end(message: str) -> int:
    """Where dmesg's subsystem prefix ends: after the first colon that a blank follows."""
    for match in re.finditer(":", message):
        if message[match.end():match.end() + 1] in (" ", "\t") and match.end() + 1 < len(message):
            return match.end() + 1
    return 0


def coloured_dmesg(plain: str, decode: bool) -> tuple[str, int]:
    """`plain` as `dmesg --color=always` (with `-x`, `decode`) prints it, and how many escape
    sequences that adds. A record's continuation lines carry its message colour on."""
    out: list[str] = []
    sequences = 0
    open_colour = False
    for line in plain.splitlines():
        match = _STAMPED.match(line)
        if match is None:  # a continuation line of the record above
            out.append(line)
            continue
        if open_colour:
            out[-1] += RESET
            sequences += 1
            open_colour = False
        stamp, message = match.groups()
        level = _level(message)
        prefix = f"{'kern':<6}:{level:<6}: " if decode else ""
        text = f"{prefix}{GREEN}{stamp}{RESET}"
        sequences += 2
        cut = _subsystem_end(message)
        if cut:
            text += f"{BROWN}{message[:cut]}{RESET}"
            sequences += 2
            message = message[cut:]
        if level in ("err", "crit"):
            colour = RED if level == "err" else BOLD_RED
            text += colour + message
            sequences += colour.count("\x1b")
            open_colour = True
        else:
            text += message
        out.append(text)
    if open_colour:
        out[-1] += RESET
        sequences += 1
    return "\n".join(out) + "\n", sequences


def _analyze(path: Path) -> tuple[int, dict]:
    result = CliRunner().invoke(main, ["analyze", str(path), "--format", "json"])
    assert result.exit_code in (0, 1, 3), result.output
    (report,) = json.loads(result.stdout)["reports"]
    return result.exit_code, report


@pytest.fixture(scope="module")
def plain_report():
    return _analyze(PLAIN)


@pytest.mark.parametrize("decode", [False, True], ids=["color", "color+decode"])
def test_a_coloured_dmesg_gives_the_verdict_of_the_plain_one(tmp_path, plain_report, decode):
    text, sequences = coloured_dmesg(PLAIN.read_text(), decode)
    assert text.count("\x1b") == sequences > 40
    coloured = tmp_path / "dmesg"
    coloured.write_text(text)
    plain_code, plain = plain_report
    code, report = _analyze(coloured)
    assert code == plain_code
    assert report["verdict"]["status"] == plain["verdict"]["status"] == "failure"
    assert report["verdict"]["headline"] == plain["verdict"]["headline"]
    assert [s["device"] for s in report["verdict"]["suspects"]] == ["sdb"]
    (source,) = report["sources"]
    (plain_source,) = plain["sources"]
    assert source["unparsed_candidates"] == plain_source["unparsed_candidates"]
    assert source["events"] == plain_source["events"]
    assert report["complete"] is True
    assert not any("terminal control sequences" in w for w in source["warnings"])
    note = [n for n in source["notes"] if "terminal control sequences" in n]
    assert note == [f"dmesg: {sequences} terminal control sequences (colours, as dmesg "
                    f"--color=always or a terminal capture writes them) were removed before reading"]
    # the evidence reads as the terminal showed it: no colour codes, escaped or not
    evidence = [e["text"] for f in report["findings"] for e in f["evidence"]]
    assert evidence and not any("\x1b" in e or "[0m" in e for e in evidence)


def test_the_text_report_of_a_coloured_dmesg_shows_no_colour_codes(tmp_path):
    coloured = tmp_path / "dmesg"
    coloured.write_text(coloured_dmesg(PLAIN.read_text(), decode=False)[0])
    result = CliRunner().invoke(main, ["analyze", str(coloured)])
    assert result.stdout.startswith("FAILURE: Replace disk 1:0:0:0 (sdb")
    assert "x1b" not in result.stdout and "[0m" not in result.stdout


def test_framing_strips_every_terminal_sequence_and_leaves_other_controls():
    title, clear, charset, screen_title = "\x1b]0;owned\x07", "\x1b[2J\x1b[H", "\x1b(B", "\x1bkbash\x1b\\"
    line = f"{GREEN}[    5.1] {RESET}{title}{clear}{charset}{screen_title}sd 2:0:1:0: [sdb] x\x07\u202ey\x1b"
    framed = frame_line(line)
    assert framed.header == "dmesg" and framed.uptime == 5.1
    # BEL, a bidi override and a lone ESC are not sequences: they stay, for the outputs to escape
    assert framed.message == "sd 2:0:1:0: [sdb] x\x07\u202ey\x1b"
    assert strip_terminal_escapes("\x1b[38:5:208mamber\x1b[0m \x1b]8;;http://x\x1b\\link") == "amber link"
    assert strip_terminal_escapes("no escapes") == "no escapes"


def test_a_title_sequence_in_a_log_line_stays_in_the_evidence_escaped(tmp_path):
    log = tmp_path / "dmesg"
    log.write_text("".join(f"[   {n}.000000] sd 2:0:1:0: [sdb] tag#{n} Sense Key : Medium Error [current]"
                           f" \x1b]0;owned\x07\n" for n in range(10, 13)))
    result = CliRunner().invoke(main, ["analyze", str(log)])
    assert "\\x1b]0;owned\\x07" in result.stdout and "\x1b]" not in result.stdout
