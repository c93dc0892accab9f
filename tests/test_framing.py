"""Framing's one-step path for the common headers gives exactly what its general loop gives."""

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from diagdisk.framing import _frame_common, _frame_general, frame_line, normalize_text

ROOT = Path(__file__).resolve().parents[1]
HEADERS = ["Mar  2 18:07:17 db1 kernel: ", "Dec 31 23:59:59.123456 h kernel: [  12.5] ",
           "2024-03-02T18:07:17.123456+01:00 db1 kernel: ", "2024-03-02 18:07:17,5Z h multipathd[12]: ",
           "2024-02-30T18:07:17+99:99 h kernel: ", "Mar  2 18:07:17 db1 last message repeated 3 times",
           "Mar  2 18:07:17 db1 kernel:   ", "Mar  2 18:07:17 db1 kernel: <3>", "Mar  2 18:07:17 h kernel: 12:00:00 [ 1.0] "]


def _real_lines():
    for path in sorted((ROOT / "tests" / "corpus").rglob("*")) + sorted((ROOT / "samples").rglob("*")):
        if path.is_file() and ("messages" in path.name or "dmesg" in path.name):
            yield from path.read_text(errors="replace").splitlines()


def test_common_path_agrees_with_the_general_loop_on_every_real_line():
    checked = 0
    for line in _real_lines():
        text = normalize_text(line)
        common = _frame_common(text)
        if common is not None:
            assert common == _frame_general(text), line
            checked += 1
    assert checked > 100


@settings(max_examples=300, deadline=None)
@given(header=st.sampled_from(HEADERS), message=st.text(max_size=80))
def test_common_path_agrees_with_the_general_loop_on_any_message(header, message):
    text = normalize_text((header + message).rstrip("\r\n"))
    common = _frame_common(text)
    assert common is None or common == _frame_general(text)
    assert frame_line(header + message) == (common or _frame_general(text))
