"""The progress line is erased before the report is printed on the same terminal: the verdict
starts its own line, nothing of 'diagdisk: writing the report 00:00' in front of it. Checked on a
real pseudo-terminal, with what it received replayed on a model of the screen."""

from __future__ import annotations

import re

import pytest

from test_conventions import REPO, run_in_terminal

DEMO = REPO / "samples" / "demo-sosreport"
_CSI = re.compile(r"\x1b\[([0-9;?]*)([@-~])")


def screen_lines(received: bytes) -> list[str]:
    """The lines a terminal shows after receiving these bytes: carriage return, line feed, erase to
    the end of the line (CSI K); colours (CSI m) take no room."""
    text = received.decode(errors="replace").replace("\r\n", "\n")
    lines: list[list[str]] = [[]]
    column = 0
    position = 0
    while position < len(text):
        char = text[position]
        escape = _CSI.match(text, position)
        if escape:
            if escape.group(2) == "K":
                del lines[-1][column:]
            position = escape.end()
            continue
        if char == "\r":
            column = 0
        elif char == "\n":
            lines.append([])
            column = 0
        else:
            line = lines[-1]
            if column < len(line):
                line[column] = char
            else:
                line.append(char)
            column += 1
        position += 1
    return ["".join(line).rstrip() for line in lines]


def test_the_model_of_the_screen():
    assert screen_lines(b"abc\r\x1b[Kxy\n12345\r9\n") == ["xy", "92345", ""]
    assert screen_lines(b"working 00:00\rFAIL") == ["FAILing 00:00"]


@pytest.mark.parametrize("delay", ["0", "0.5"])
def test_the_verdict_starts_a_clean_line(delay):
    code, terminal, _ = run_in_terminal(["analyze", str(DEMO), "--color", "always"],
                                        env={"DIAGDISK_PROGRESS_DELAY": delay})
    assert code == 0
    lines = screen_lines(terminal)
    verdict = [line for line in lines if "FAILURE" in line]
    assert verdict, lines
    assert verdict[0].startswith("FAILURE: Replace disk 2:0:2:0 (sdc"), verdict[0]
    assert not any("diagdisk:" in line for line in lines), lines


def test_brief_on_a_terminal_is_the_verdict_line_alone():
    code, terminal, _ = run_in_terminal(["analyze", str(DEMO), "--brief"], env={"DIAGDISK_PROGRESS_DELAY": "0.5"})
    assert code == 0
    shown = [line for line in screen_lines(terminal) if line]
    assert len(shown) == 1 and shown[0].startswith("FAILURE: Replace disk 2:0:2:0"), shown


def test_events_listing_starts_a_clean_line(tmp_path):
    log = tmp_path / "messages"
    log.write_text("Mar  2 18:07:17 db1 kernel: sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]\n")
    code, terminal, _ = run_in_terminal(["events", str(log)], env={"DIAGDISK_PROGRESS_DELAY": "0"})
    assert code == 0
    shown = [line for line in screen_lines(terminal) if line]
    assert shown and all(line.startswith("{") for line in shown), shown
