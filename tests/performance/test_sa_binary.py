"""sysstat's binary saDD read directly (performance.sabinary): the figures are the ones sadf -d
prints for the same file, a file of another format is refused in one line, a damaged or cut file
never raises.

The fixture sa26-12.6.1-restart-hotplug was written by sysstat 12.6.1's sadc (-S DISK) on a
64-bit host: five records a second apart with a loop device attached part-way (a device that
appears mid-file), a restart record, a comment record, then three more records. Beside it is what
`sadf -d -- -d` of sysstat 12.6.1 printed for it on that host, where 254:0 is vda and 7:0 loop0.
"""

import shutil
import struct
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from diagdisk.inputs.sources import Source, classify_in_tree, sniff_format
from diagdisk.performance.read import read_performance
from diagdisk.performance.sabinary import SaFormatError, read_sa_binary

FIXTURES = Path(__file__).parent / "fixtures"
SA = FIXTURES / "sa26-12.6.1-restart-hotplug"
SADF = FIXTURES / "sa26-12.6.1-restart-hotplug.sadf-d.csv"
# the names sadf looked up on the host that wrote the fixture
HOST_NAMES = {"vda": "dev254-0", "loop0": "dev7-0"}
FIELDS = ("tps", "rkb_s", "wkb_s", "dkb_s", "areq_kb", "aqu", "await", "util")


def rows_of(path: Path, name: str = "sa26"):
    """(info, [(time, device, segment, figures...)]) as the reader gives them."""
    info, blocks = read_sa_binary(path, name)
    rows = []
    for block in blocks:
        for i in range(len(block)):
            rows.append((float(block.t[i]), block.devices[block.codes[i]], block.segment,
                         *(float(block.values[f][i]) for f in FIELDS)))
    return info, rows


def sadf_rows(text: str, names: dict):
    rows, segment = [], 0
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        host, interval, stamp, device, *figures = line.split(";")
        if interval == "-1":
            segment += 1
            continue
        t = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S UTC").replace(tzinfo=timezone.utc).timestamp()
        rows.append((t, names.get(device, device), segment, *map(float, figures)))
    return rows


def assert_same_figures(ours, theirs):
    assert len(ours) == len(theirs)
    for mine, printed in zip(ours, theirs):
        assert mine[:3] == printed[:3]
        # sadf prints two decimals: each figure is within half a unit of the last printed digit
        for value, shown in zip(mine[3:], printed[3:]):
            assert abs(value - shown) <= 0.005 + 1e-9, (mine, printed)


def test_figures_match_what_sadf_printed_for_the_file():
    info, rows = rows_of(SA)
    assert_same_figures(rows, sadf_rows(SADF.read_text(), HOST_NAMES))
    assert info.version == "12.6.1" and info.host == "vm" and info.day == "2026-11-26"
    assert info.restarts == 1 and info.records == 10 and not info.truncated and info.interval == 1.0
    # the loop device attached mid-file is differenced against zero, as sar does
    assert any(row[1] == "dev7-0" and row[3] == 216.0 for row in rows)


@pytest.mark.skipif(shutil.which("sadf") is None, reason="sysstat's sadf is not installed here")
def test_figures_match_this_hosts_sadf():
    printed = subprocess.run(["sadf", "-d", "--", "-d", str(SA)], capture_output=True, text=True, check=True,
                             env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"}).stdout
    _, rows = rows_of(SA)
    # sadf names the devices after this host's /sys: compare the figures, in order
    theirs = sadf_rows(printed, {})
    assert [row[0] for row in rows] == [row[0] for row in theirs]
    assert_same_figures([(r[0], "", r[2], *r[3:]) for r in rows], [(r[0], "", r[2], *r[3:]) for r in theirs])


def _patched(tmp_path: Path, offset: int, fmt: str, value) -> Path:
    data = bytearray(SA.read_bytes())
    struct.pack_into(fmt, data, offset, value)
    path = tmp_path / "sa26"
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("offset, fmt, value, says", [
    (2, "<H", 0x2171, "format 0x2171"),          # sysstat before 11.7.1
    (2, "<H", 0x1234, "format 0x1234"),
    (0, "<H", 0x1234, "not a sysstat data file"),
    (76 + 66, "<b", 4, "32-bit host"),            # sa_sizeof_long
    (8, "<I", 12, "damaged header"),             # header_size
])
def test_other_formats_are_refused_in_one_line(tmp_path, offset, fmt, value, says):
    with pytest.raises(SaFormatError) as refused:
        read_sa_binary(_patched(tmp_path, offset, fmt, value), "sa26")
    message = str(refused.value)
    assert says in message and "\n" not in message and message.startswith("sa26: ")


def test_garbage_and_empty_files_are_refused(tmp_path):
    for content in (b"", b"\x96\xd5", b"\x96\xd5" + bytes(range(256)) * 8, b"not sysstat at all\n" * 10):
        path = tmp_path / "sa01"
        path.write_bytes(content)
        with pytest.raises(SaFormatError):
            read_sa_binary(path, "sa01")


def test_a_file_cut_anywhere_gives_its_whole_records_and_says_so(tmp_path):
    full = SA.read_bytes()
    _, all_rows = rows_of(SA)
    path = tmp_path / "sa26"
    for cut in range(0, len(full), 29):
        path.write_bytes(full[:cut])
        try:
            info, rows = rows_of(path)
        except SaFormatError:
            continue
        assert rows == all_rows[:len(rows)]
        if info.truncated:
            assert len(info.warnings) == 1 and "cut short or damaged" in info.warnings[0]
    # one byte short of the end is mid-record: the last record is dropped and the file said cut
    path.write_bytes(full[:-1])
    info, rows = rows_of(path)
    assert info.truncated and rows == all_rows[:-2] and info.records == 9


def test_records_overwritten_with_garbage_never_raise(tmp_path):
    import random

    full = SA.read_bytes()
    rng = random.Random(26)
    path = tmp_path / "sa26"
    for _ in range(200):
        data = bytearray(full)
        start = rng.randrange(1000, len(full))
        for i in range(start, min(len(full), start + rng.randrange(1, 64))):
            data[i] = rng.randrange(256)
        path.write_bytes(bytes(data))
        info, rows = rows_of(path)      # damage after the header: never SaFormatError, never a crash
        assert all(len(row) == 3 + len(FIELDS) for row in rows)


def test_sosreport_paths_and_lone_files_are_classified_as_sadd(tmp_path):
    assert classify_in_tree("var/log/sa/sa26") == "sa_binary"
    assert classify_in_tree("var/log/sysstat/sa26") == "sa_binary"
    assert sniff_format(SA) == "sa_binary"


def _source(path: Path, name: str, fmt: str) -> Source:
    return Source(name=name, path=path, format=fmt)


def test_performance_stage_reads_the_binary_first_and_its_days_text_is_a_duplicate(tmp_path):
    text = tmp_path / "sar26"
    text.write_text("Linux 6.1 (vm) \t11/26/26 \t_x86_64_\t(2 CPU)\n")
    sources = [_source(SA, "var/log/sa/sa26", "sa_binary"), _source(text, "var/log/sa/sar26", "sar")]
    data = read_performance(sources, None, run_sadf=False)
    by_name = {s.name: s for s in data.sources}
    binary = by_name["var/log/sa/sa26"]
    assert binary.status == "read" and binary.kind == "saDD (binary)" and binary.samples == 10
    assert binary.devices == ["dev254-0", "dev7-0"] and binary.restarts == 1 and binary.day == "2026-11-26"
    assert by_name["var/log/sa/sar26"].status == "duplicate"
    assert by_name["var/log/sa/sar26"].duplicate_of == "var/log/sa/sa26"
    assert data.series["dev254-0"].raw_count == 6 and data.series["dev7-0"].raw_count == 4


def test_performance_stage_warns_in_one_line_on_an_older_format(tmp_path):
    old = _patched(tmp_path, 2, "<H", 0x2171)
    data = read_performance([_source(old, "var/log/sa/sa26", "sa_binary")], None, run_sadf=False)
    (source,) = data.sources
    assert source.status == "present, not read"
    assert "format 0x2171" in source.warnings[0] and "\n" not in source.warnings[0]


def _generate_days():
    """benchmarks/performance.py's saDD generator (sadc 12.6.1's records with more disks)."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "performance.py"
    spec = importlib.util.spec_from_file_location("performance_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate_binary


def test_days_read_in_parallel_give_what_one_process_gives(tmp_path):
    _generate_days()(tmp_path, devices=5, seconds=5 * 86400, interval=600)
    files = sorted((tmp_path / "var" / "log" / "sa").glob("sa*"))
    assert len(files) == 5
    sources = [_source(path, f"var/log/sa/{path.name}", "sa_binary") for path in files]
    alone = read_performance(sources, None, run_sadf=False, jobs=1)
    together = read_performance([_source(path, f"var/log/sa/{path.name}", "sa_binary") for path in files], None,
                                run_sadf=False, jobs=2)
    assert [s.to_dict() for s in together.sources] == [s.to_dict() for s in alone.sources]
    assert sorted(together.series) == sorted(alone.series) and len(alone.series) == 5
    for name, series in alone.series.items():
        other = together.series[name]
        assert other.matrix().tobytes() == series.matrix().tobytes()
        assert list(other.lines) == list(series.lines) and list(other.segments) == list(series.segments)
        assert series.raw_count == 5 * 143      # a day's first record has no interval before it
