"""Line plans (diagdisk/lineplan.py) are a faster way to read the same events, never other events."""

from pathlib import Path

import pytest

from diagdisk.logs.framing import frame_line

from diagdisk.logs.reader import LogReader, LogReadResult, as_event
from perf_data import generated_log

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
SAMPLES = Path(__file__).resolve().parents[2] / "samples"


# what a plan adds for the stages after it to save work: not a field of the event
_HINTS = ("_signature", "_wall_second")


def _events(path: Path, use_plans: bool) -> tuple[list[dict], LogReader]:
    reader = LogReader(use_plans=use_plans)
    result = LogReadResult()
    events = [as_event(item) for item in reader.iter_events(path, path.name, result)]
    for event in events:
        for hint in _HINTS:
            event.pop(hint, None)
    return events, reader


def _logs():
    for root in (CORPUS, SAMPLES):
        for path in sorted(root.rglob("*")):
            if path.is_file() and ("messages" in path.name or "dmesg" in path.name or "journal" in path.name):
                yield pytest.param(path, id=str(path.relative_to(root.parent)))


@pytest.mark.parametrize("path", list(_logs()))
def test_plans_read_real_logs_as_framing_and_grammars_do(path):
    # every line twice over, so the second copy of each shape is read by its plan
    assert _events(path, True)[0] == _events(path, False)[0]


@pytest.mark.parametrize("ratio, seed", [(0.3, 5), (0.01, 6), (0.9, 8)])
def test_plans_read_generated_logs_as_framing_and_grammars_do(tmp_path, ratio, seed):
    path = tmp_path / "messages"
    path.write_bytes(generated_log(400_000, ratio, seed))
    with_plans, reader = _events(path, True)
    without, _ = _events(path, False)
    assert with_plans == without
    if ratio >= 0.3:
        assert reader.plan_hits > 0.8 * len(with_plans), "plans should read most lines of a storm"


def test_plans_read_repeated_real_lines_as_the_general_way(tmp_path):
    """Real lines of every family, each repeated with other numbers: the repeats go to plans."""
    lines = []
    for path in sorted(CORPUS.rglob("var/log/messages")):
        # plans read syslog lines: the corpus's pasted dmesg excerpts under this name stay out
        lines += [line for line in path.read_bytes().splitlines()
                  if frame_line(line.decode("utf-8", "replace")).header == "syslog"]
    text = b"\n".join(lines + [line.replace(b"1", b"7").replace(b"a", b"c") for line in lines]
                      + [line.replace(b"0", b"12") for line in lines]) + b"\n"
    path = tmp_path / "messages"
    path.write_bytes(text)
    with_plans, reader = _events(path, True)
    assert with_plans == _events(path, False)[0]
    assert reader.plan_hits > 0


@pytest.mark.parametrize("ratio, seed", [(0.3, 9), (0.9, 10)])
def test_records_are_the_same_with_plans_and_without(tmp_path, ratio, seed):
    """Lines plans read go through a shorter way to their records when their event stands alone
    (logsource._take_standalone): what comes out must be what the whole way gives."""
    from diagdisk.logs.source import read_log_source
    path = tmp_path / "messages"
    path.write_bytes(generated_log(400_000, ratio, seed))
    fast = read_log_source(path, "messages", None, reader=LogReader(use_plans=True))
    slow = read_log_source(path, "messages", None, reader=LogReader(use_plans=False))
    assert fast.records == slow.records and fast.events == slow.events
    assert len(fast.records) > 50


def test_plans_read_the_month_of_each_line(tmp_path):
    """The same day and time in another month is another time: a plan's times are remembered
    by the whole stamp, month included."""
    line = (b"%s  4 06:19:22 db1 kernel: blk_update_request: I/O error, dev sdd, sector %d op 0x1:(READ) "
            b"flags 0x4800 phys_seg 1 prio class 0")
    lines = [line % (month, 1040489143 + index) for index, month in enumerate((b"Feb", b"Feb", b"Mar", b"Mar"))]
    path = tmp_path / "messages"
    path.write_bytes(b"\n".join(lines + [b"Mar  4 06:19:23 db1 sshd[1]: closed"]) + b"\n")
    with_plans, reader = _events(path, True)
    assert reader.plan_hits >= 2
    assert [event["_mdt"][0] for event in with_plans] == [2, 2, 3, 3]
    assert with_plans == _events(path, False)[0]
