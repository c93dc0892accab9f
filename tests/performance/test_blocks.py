"""Blocks of rows (performance.blocks) give the same samples as the row-by-row readers, bit for bit:
on every fixture and real case, on generated texts full of what breaks a block (restarts, Average
lines, headers, localised values, odd characters, wrong widths, midnight), and through the whole
stage to the report. The row-by-row reader is the reference; blocks only change the speed."""

import dataclasses
import json
import random
import struct
from pathlib import Path

import pytest

from diagdisk.diagnosis.analysis import analyze
from diagdisk.diagnosis.engine import evaluate_rules, load_rules
from diagdisk.diagnosis.perf import evaluate_performance_rules
from diagdisk.performance import blocks
from diagdisk.performance.blocks import SampleBlock
from diagdisk.performance.sadf import iter_sadf_csv
from diagdisk.inputs.safeio import decode_log_bytes
from diagdisk.performance.sysstat import iter_sysstat_text, plain_chunk, raw_samples
from diagdisk.report.build import build_report

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
TEXTS = sorted(FIXTURES.glob("*.txt")) + sorted(p for p in (HERE / "cases").glob("*/input/*") if p.is_file())
CSVS = sorted(FIXTURES.glob("*.csv"))
BY_LINE = (10 ** 9, 8192)                       # MIN_ROWS, MAX_ROWS: no block is ever tried
BY_BLOCK = [(1, 8192), (1, 5), (2, 3), (64, 8192)]


def bits(value):
    return None if value is None else struct.pack("<d", value)


def key(sample):
    return (sample.device, bits(sample.t), bits(sample.interval),
            sorted((name, bits(value)) for name, value in sample.values.items()), sample.line, sample.segment)


def read(reader, lines, name, monkeypatch, setting):
    monkeypatch.setattr(blocks, "MIN_ROWS", setting[0])
    monkeypatch.setattr(blocks, "MAX_ROWS", setting[1])
    source, items = reader(lines, name)
    items = list(items)
    return (dataclasses.asdict(source), [key(s) for s in raw_samples(items)],
            sum(len(i) for i in items if isinstance(i, SampleBlock)))


def sysstat(lines, name):
    return iter_sysstat_text(lines, name)


@pytest.mark.parametrize("setting", BY_BLOCK, ids=str)
@pytest.mark.parametrize("path", TEXTS, ids=lambda p: str(p.relative_to(HERE)))
def test_every_fixture_and_case_reads_the_same_by_block(path, setting, monkeypatch):
    lines = path.read_text().splitlines()
    assert read(sysstat, lines, path.name, monkeypatch, setting)[:2] == read(sysstat, lines, path.name, monkeypatch, BY_LINE)[:2]


@pytest.mark.parametrize("setting", BY_BLOCK, ids=str)
@pytest.mark.parametrize("path", CSVS, ids=lambda p: p.name)
def test_sadf_d_fixtures_read_the_same_by_block(path, setting, monkeypatch):
    lines = path.read_text().splitlines()
    assert read(iter_sadf_csv, lines, path.name, monkeypatch, setting)[:2] == \
        read(iter_sadf_csv, lines, path.name, monkeypatch, BY_LINE)[:2]


# ---------------------------------------------------------------- generated texts

HEADERS = [
    ["DEV", "tps", "rkB/s", "wkB/s", "dkB/s", "areq-sz", "aqu-sz", "await", "%util"],
    ["DEV", "tps", "rd_sec/s", "wr_sec/s", "avgrq-sz", "avgqu-sz", "await", "svctm", "%util"],
    ["tps", "rkB/s", "wkB/s", "areq-sz", "aqu-sz", "await", "%util", "DEV"],                 # --pretty
    ["DEV", "r/s", "w/s", "rkB/s", "wkB/s", "rareq-sz", "wareq-sz", "r_await", "w_await", "%rrqm", "%util"],
]
ODD_VALUES = ["1,5", "True", "false", "nan", "NaN", "inf", "-inf", "1_000", "-0", "-0.00", "+7", "1e5", "1E-3", ".5",
              "5.", "2.0M", "35.5%", "0x10", "", "-", "1e999", "１", "1.2.3", "-12.50", ".50", "12.5", "00012.00",
              "1234567890123456", "123456789012.25", "9.", "1-2", "--1", "1.-2", " 1.00", "1 .00"]
ODD_NAMES = ["sd\u00e4", "dev\u00a0x", "AM", "PM", "p.m.", "tps", "\"quoted", "a,b", "True", "nan", "x\x1fy", "12:00:00",
             "Average:", "NA", "-"]


def clock(seconds, twelve_hour):
    h, m, s = seconds // 3600 % 24, seconds // 60 % 60, seconds % 60
    if twelve_hour:
        return f"{(h % 12) or 12:02d}:{m:02d}:{s:02d} {'AM' if h < 12 else 'PM'}"
    return f"{h:02d}:{m:02d}:{s:02d}"


def generated_sar(seed: int, rows: int = 400) -> list[str]:
    """sar -d text with every kind of line that has to end a block, at random."""
    rng = random.Random(seed)
    twelve = rng.random() < 0.3
    padded = rng.random() < 0.7      # sysstat's fixed-width columns, or one space between values
    header = rng.choice(HEADERS)
    devices = [f"dev8-{16 * i}" for i in range(rng.randint(1, 6))]
    date = rng.choice(["03/19/2024", "19/03/24", "19.03.2024", "2024-03-19"])
    lines = [f"Linux 5.14.0 (host) \t{date} \t_x86_64_\t(4 CPU)", ""]
    second = rng.randint(0, 86399)

    def header_line():
        return f"{clock(second, twelve)} " + " ".join(f"{c:>9}" for c in header)

    def row(device):
        values = [f"{rng.random() * 10 ** rng.randint(0, 6):.2f}" for _ in header]
        if rng.random() < 0.02:
            values[rng.randrange(len(values))] = rng.choice(ODD_VALUES)
        if rng.random() < 0.01:
            device = rng.choice(ODD_NAMES)
        values[header.index("DEV")] = device
        separator = "\t" if rng.random() < 0.02 else " "
        text = f"{clock(second, twelve)} " + separator.join(f"{v:>9}" if padded else v for v in values)
        if rng.random() < 0.01:
            text += " extra"
        if rng.random() < 0.01:
            text = text.rsplit(None, 1)[0]
        if rng.random() < 0.01:
            text = "  " + text + "  "
        return text

    lines.append(header_line())
    while len(lines) < rows:
        second += rng.choice([1, 1, 1, 10, 600])
        if rng.random() < 0.01:
            second -= rng.choice([5, 7200])            # a clock that goes back: midnight, or not
        second %= 86400
        for device in devices:
            lines.append(row(device))
        event = rng.random()
        if event < 0.03:
            lines += ["", header_line()]
        elif event < 0.04:
            lines += [f"{clock(second, twelve)}     LINUX RESTART\t(4 CPU)", "", header_line()]
        elif event < 0.05:
            lines += [f"Average:  {d} " + " ".join("1.00" for _ in header[1:]) for d in devices]
        elif event < 0.06:
            lines += ["", f"{clock(second, twelve)}     CPU     %user     %idle", f"{clock(second, twelve)}     all      1.00     99.00"]
        elif event < 0.065:
            lines += ["   ", "\x0c"]
        elif event < 0.07:
            lines.append(f"{clock(second, twelve)} " + " ".join(f"{c:>9}" for c in rng.choice(HEADERS)))
    return lines


@pytest.mark.parametrize("seed", range(60))
def test_generated_sar_reads_the_same_by_block(seed, monkeypatch):
    lines = generated_sar(seed)
    expected = read(sysstat, lines, f"sar{seed % 28 + 1:02d}", monkeypatch, BY_LINE)
    for setting in ((1, 8192), (3, 7), (16, 50)):
        got = read(sysstat, lines, f"sar{seed % 28 + 1:02d}", monkeypatch, setting)
        assert got[:2] == expected[:2], setting


def test_fixed_width_and_pandas_blocks_are_both_tried(monkeypatch):
    calls = {"fixed": 0, "pandas": 0}
    fixed, pandas_rows = blocks.fixed_rows, blocks.read_rows

    def count(name, function):
        def counted(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)
        return counted

    import diagdisk.performance.sysstat as sysstat_module
    monkeypatch.setattr(sysstat_module, "fixed_rows", count("fixed", fixed))
    monkeypatch.setattr(sysstat_module, "read_rows", count("pandas", pandas_rows))
    for seed in range(20):
        read(sysstat, generated_sar(seed), "sar19", monkeypatch, (8, 8192))
    assert calls["fixed"] > 20 and calls["pandas"] > 20


def chunked(data: bytes, rng: random.Random) -> list:
    """`data` cut at random line ends into chunks, each given as the reader of a file gives it:
    its bytes when plain_chunk() takes them, else its decoded lines."""
    ends = [i + 1 for i, byte in enumerate(data) if byte == 10]
    cuts = sorted(rng.sample(ends[:-1], min(len(ends) - 1, rng.randint(0, 5)))) if len(ends) > 1 else []
    pieces = [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]
    return [piece if plain_chunk(piece) else decode_log_bytes(piece).splitlines() for piece in pieces]


def batched(batches):
    def reader(_lines, name):
        return iter_sysstat_text(batches, name, batched=True)
    return reader


@pytest.mark.parametrize("source", [p.name for p in TEXTS] + [f"generated-{seed}" for seed in range(30)])
def test_reading_byte_chunks_is_reading_lines(source, monkeypatch):
    rng = random.Random(source)
    if source.startswith("generated-"):
        lines = generated_sar(int(source.split("-")[1]))
        data = ("\n".join(lines) + ("\n" if rng.random() < 0.5 else "")).encode("utf-8", "surrogateescape")
    else:
        data = next(p for p in TEXTS if p.name == source).read_bytes()
    expected = read(sysstat, decode_log_bytes(data).splitlines(), "sar19", monkeypatch, BY_LINE)
    for setting in (BY_LINE, (1, 8192), (3, 7), (16, 50)):
        got = read(batched(chunked(data, rng)), None, "sar19", monkeypatch, setting)
        assert got[:2] == expected[:2], setting


def test_a_plain_sar_file_is_read_in_blocks(monkeypatch):
    lines = ["Linux 5.14.0 (host) \t03/19/2024 \t_x86_64_\t(4 CPU)", "",
             "00:00:00 DEV tps rkB/s wkB/s dkB/s areq-sz aqu-sz await %util"]
    for second in range(3000):
        lines += [f"{clock(second, False)} dev8-{i} 1.00 2.00 3.00 0.00 4.00 0.10 1.50 {i}.00" for i in range(4)]
    lines.append("Average:  dev8-0 1.00 2.00 3.00 0.00 4.00 0.10 1.50 1.00")
    source, samples, in_blocks = read(sysstat, lines, "sar19", monkeypatch, (64, 8192))
    assert len(samples) == 12000 and in_blocks >= 11900
    assert (source, samples) == read(sysstat, lines, "sar19", monkeypatch, BY_LINE)[:2]


def generated_sadf(seed: int, rows: int = 400) -> list[str]:
    rng = random.Random(seed)
    header = ["DEV", "tps", "rkB/s", "wkB/s", "areq-sz", "aqu-sz", "await", "%util"]
    lines = ["# hostname;interval;timestamp;" + ";".join(header)]
    second = 1710806400
    while len(lines) < rows:
        second += 1
        stamp = f"2024-03-19 {clock(second % 86400, False)} UTC"
        for device in ("dev8-0", "dev8-16", "dev253-0"):
            values = [f"{rng.random() * 1000:.2f}" for _ in header[1:]]
            if rng.random() < 0.03:
                values[rng.randrange(len(values))] = rng.choice(ODD_VALUES)
            name = rng.choice(ODD_NAMES) if rng.random() < 0.01 else device
            fields = ["host", rng.choice(["1", "1", "1", "0", "x"]) if rng.random() < 0.05 else "1", stamp, name] + values
            if rng.random() < 0.01:
                fields = fields[:-1]
            if rng.random() < 0.01:
                fields.append("9")
            lines.append(";".join(fields))
        event = rng.random()
        if event < 0.02:
            lines.append(f"host;-1;{stamp};LINUX-RESTART\t(4 CPU)")
        elif event < 0.03:
            lines.append("")
        elif event < 0.04:
            lines.append(lines[0])
        elif event < 0.045:
            lines.append(f"host;1;19/03/2024 00:00:00;dev8-0;" + ";".join("1" for _ in header[1:]))
    return lines


@pytest.mark.parametrize("seed", range(20))
def test_generated_sadf_d_reads_the_same_by_block(seed, monkeypatch):
    lines = generated_sadf(seed)
    expected = read(iter_sadf_csv, lines, "sadf", monkeypatch, BY_LINE)
    for setting in ((1, 8192), (3, 7)):
        assert read(iter_sadf_csv, lines, "sadf", monkeypatch, setting)[:2] == expected[:2], setting


# ---------------------------------------------------------------- the whole stage

RULES = load_rules()


def report_of(path: Path) -> str:
    analysis = analyze([str(path)])
    findings, verdict = evaluate_rules(RULES, analysis)
    performance = evaluate_performance_rules(RULES, analysis.performance, findings, analysis.topology)
    report = build_report(analysis, findings, verdict, performance)
    return json.dumps(report.get("performance"), sort_keys=True, default=str)


def long_sar(folder: Path) -> Path:
    """Three devices for 50 minutes at 1 s, one restart: each series is halved several times."""
    rng = random.Random(11)
    lines = ["Linux 5.14.0 (host) \t03/19/2024 \t_x86_64_\t(4 CPU)", "",
             "00:00:00          DEV       tps     rkB/s     wkB/s     dkB/s   areq-sz    aqu-sz     await     %util"]
    for second in range(1, 3001):
        if second == 1700:
            lines += ["", "00:28:20     LINUX RESTART\t(4 CPU)", "",
                      "00:28:20          DEV       tps     rkB/s     wkB/s     dkB/s   areq-sz    aqu-sz     await     %util"]
        for device, busy in (("dev8-0", 95), ("dev8-16", 20), ("dev253-0", 50)):
            tps = 100 + rng.random() * 50
            lines.append(f"{clock(second, False)} {device:>12} {tps:9.2f} {tps * 8:9.2f} {tps * 4:9.2f}      0.00     "
                         f"12.00 {busy / 10 * rng.random():9.2f} {5 + busy * rng.random():9.2f} {busy * rng.random():9.2f}")
    lines.append("Average:       dev8-0      1.00      1.00      1.00      0.00      1.00      0.00      1.00      1.00")
    path = folder / "sos_commands" / "sar" / "sar19"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.parametrize("case", sorted(p for p in (HERE / "cases").iterdir() if p.is_dir()) + ["long"],
                         ids=lambda p: p if isinstance(p, str) else p.name)
def test_reports_are_the_same_by_block(case, monkeypatch, tmp_path):
    path = long_sar(tmp_path) if case == "long" else case / "input"
    monkeypatch.setattr(blocks, "MIN_ROWS", BY_LINE[0])
    by_line = report_of(path)
    monkeypatch.setattr(blocks, "MIN_ROWS", 1)
    assert report_of(path) == by_line
