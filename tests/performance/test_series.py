"""Normalised samples and bounded series: merging neighbours keeps exact averages."""

import math
import random
import struct

import numpy
import pytest

from diagdisk.performance.series import (FIELDS, WIDTH, Series, _merge_rows, _tree, add_blocks, merge, normalise,
                                         normalise_block)

I = {name: i for i, name in enumerate(FIELDS)}


def sample(t, iops, await_ms, util, interval=1.0):
    values = {"tps": iops, "rkb_s": iops * 4, "wkb_s": 0.0, "await": await_ms, "util": util, "aqu": iops * await_ms / 1000}
    return normalise(values, t, interval)[0]


def test_merge_weights_rates_by_time_and_await_by_requests():
    a, b = sample(1, 100, 10.0, 50), sample(2, 300, 2.0, 100)
    both = merge(a, b)
    assert both[I["iops"]] == 200 and both[I["util"]] == 75 and both[I["interval"]] == 2
    assert both[I["await"]] == pytest.approx((100 * 10 + 300 * 2) / 400)    # 4 ms: per request, not per sample
    assert both[I["areq_kb"]] == pytest.approx(4.0)


def test_series_memory_is_bounded_and_averages_stay_exact():
    series = Series("sda", "s", cap=8)
    for t in range(1000):
        series.add(sample(t, 100 + (t % 2) * 100, 5.0, 40.0), t + 1, 0)
    series.finish()
    assert len(series.samples) <= 8 and series.raw_count == 1000
    assert all(s[I["iops"]] == pytest.approx(150) and s[I["util"]] == pytest.approx(40) for s in series.samples)
    assert sum(s[I["interval"]] for s in series.samples) == pytest.approx(1000)


def test_a_restart_is_never_merged_across():
    series = Series("sda", "s", cap=2)
    for t in range(5):
        series.add(sample(t, 10, 1.0, 1.0), t, 0 if t < 3 else 1)
    series.finish()
    assert sorted(set(series.segments)) == [0, 1]


def test_apparent_service_time_when_svctm_is_not_printed():
    normal, apparent = normalise({"r_s": 300.0, "w_s": 0.0, "util": 99.0}, None, None)
    assert apparent and normal[I["svctm"]] == pytest.approx(3.3) and math.isnan(normal[I["await"]])


def bits(value):
    return struct.pack("<d", value)


# ---------------------------------------------------------------- columns: the same doubles as one sample at a time

NUMBERS = [0.0, -0.0, 1.0, 3.5, 100.0, 1e-3, -2.0, 1e308, 12345.678]


def test_normalise_block_gives_normalise_for_every_mix_of_columns():
    rng = random.Random(7)
    names = ["tps", "r_s", "w_s", "d_s", "rkb_s", "wkb_s", "dkb_s", "areq_kb", "rareq_kb", "wareq_kb", "dareq_kb",
             "aqu", "await", "r_await", "w_await", "d_await", "svctm", "util"]
    for _ in range(400):
        present = [n for n in names if rng.random() < 0.4]
        rows = [{n: rng.choice(NUMBERS) if rng.random() < 0.5 else rng.random() * 500 for n in present} for _ in range(20)]
        t = numpy.arange(20, dtype=float)
        interval = numpy.full(20, 1.0) if rng.random() < 0.5 else None
        columns = {n: numpy.array([r[n] for r in rows]) for n in present}
        block, apparent_block = normalise_block(columns, t, interval)
        for i, values in enumerate(rows):
            one, apparent = normalise(values, float(i), None if interval is None else 1.0)
            assert [bits(v) for v in block[i].tolist()] == [bits(v) for v in one], (present, values)
            assert apparent == apparent_block


def test_merged_rows_are_merge():
    rng = random.Random(3)
    a = [[rng.choice(NUMBERS + [math.nan, rng.random()]) for _ in FIELDS] for _ in range(500)]
    b = [[rng.choice(NUMBERS + [math.nan, rng.random()]) for _ in FIELDS] for _ in range(500)]
    merged = _merge_rows(numpy.array(a), numpy.array(b)).tolist()
    for x, y, got in zip(a, b, merged):
        assert [bits(v) for v in got] == [bits(v) for v in merge(x, y)]


@pytest.mark.parametrize("cap, restarts", [(2, 0.0), (2, 0.2), (3, 0.2), (8, 0.2), (50, 0.2)])
def test_add_block_keeps_the_series_add_keeps(cap, restarts):
    rng = random.Random(cap)
    one, many = Series("sda", "s", cap=cap), Series("sda", "s", cap=cap)
    line, segment = 1, 0
    for _ in range(30):
        size = rng.choice([1, 2, 5, 17, 40])
        if rng.random() < restarts:
            segment += 1
        rows = numpy.array([[rng.random() * 100 if rng.random() < 0.9 else math.nan for _ in FIELDS] for _ in range(size)])
        rows[:, 0] = numpy.arange(line, line + size)
        lines = numpy.arange(line, line + size)
        for row, at in zip(rows.tolist(), lines.tolist()):
            one.add(row, at, segment)
        many.add_block(rows, lines, segment)
        line += size
    for series in (one, many):
        series.fill_interval(2.0)
        series.finish()
    assert [[bits(v) for v in s] for s in one.samples] == [[bits(v) for v in s] for s in many.samples]
    assert (one.lines, one.segments, one.merged, one.raw_count) == (many.lines, many.segments, many.merged, many.raw_count)
    assert len(many) <= max(cap, len(set(many.segments)))


def test_a_series_that_cannot_merge_keeps_every_sample():
    series = Series("sda", "s", cap=1)
    series.add_block(numpy.ones((5, WIDTH)), numpy.arange(5), 0)
    for segment in range(1, 4):
        series.add_block(numpy.ones((1, WIDTH)), numpy.array([10 + segment]), segment)
    series.finish()
    assert list(series.segments) == [0, 1, 2, 3] and series.raw_count == 8


# ---------------------------------------------------------------- long series: uniform, exact, bounded

def one_second(t, util):
    """A sar sample: sar text carries no interval (it is filled in from the steps at the end)."""
    return normalise({"tps": 100.0, "rkb_s": 400.0, "wkb_s": 0.0, "await": 2.0, "util": util, "aqu": 0.2}, t, None)[0]


def test_a_long_series_keeps_every_sample_the_same_weight():
    series = Series("sda", "s", cap=8)
    raw = [float(t % 7) for t in range(1000)]
    for t, util in enumerate(raw):
        series.add(one_second(t, util), t + 1, 0)
    series.fill_interval(1.0)
    series.finish()
    samples = series.samples
    intervals = [s[I["interval"]] for s in samples]
    assert sum(intervals) == 1000 and len(samples) <= 8
    # every sample but the last stands for the same number of seconds: the newest are not finer
    assert len(set(intervals[:-1])) == 1 and intervals[0] == series.merged
    start = 0
    for s in samples:
        width = int(s[I["interval"]])
        assert s[I["util"]] == pytest.approx(sum(raw[start:start + width]) / width)
        assert s[I["t"]] == start + width - 1
        start += width


def test_a_month_of_one_second_samples_stays_bounded():
    series = Series("sda", "s")
    block = numpy.array([one_second(t, 50.0) for t in range(86400)])
    for day in range(30):
        block[:, I["t"]] = numpy.arange(86400) + day * 86400
        series.add_block(block, numpy.arange(86400) + day * 86400, 0)
    series.fill_interval(1.0)
    series.finish()
    assert len(series.samples) <= 1024 and series.raw_count == 30 * 86400
    assert sum(s[I["interval"]] for s in series.samples) == 30 * 86400
    assert series.merged <= 4096


@pytest.mark.parametrize("by_block", [False, True])
def test_each_kept_sample_is_the_merge_tree_of_its_group(by_block):
    """However the samples arrive, kept sample i is the balanced merge of raw samples
    [i x merged, (i + 1) x merged): aligned groups, all the same size."""
    rng = random.Random(5)
    raw = numpy.array([one_second(t, rng.random() * 100) for t in range(3000)])
    raw[:, I["iops"]] = [rng.random() * 500 for _ in range(3000)]
    series = Series("sda", "s", cap=16)
    done = 0
    while done < len(raw):
        size = rng.choice([1, 3, 7, 64, 200]) if by_block else 1
        part = raw[done:done + size]
        if by_block:
            series.add_block(part, numpy.arange(done, done + len(part)), 0)
        else:
            series.add(part[0].tolist(), done, 0)
        done += len(part)
    size = series.merged
    kept = series.samples
    full = len(raw) // size
    assert len(kept) == full and 16 < full <= 32 and len(series.pending) == bin(len(raw) % size).count("1")
    expected = _tree(raw[:full * size], size).tolist()
    assert [[bits(v) for v in s] for s in kept] == [[bits(v) for v in s] for s in expected]
    assert list(series.lines) == list(range(0, full * size, size)) and set(series.counts) == {size}


@pytest.mark.parametrize("seed", range(12))
def test_add_blocks_keeps_what_each_series_keeps_alone(seed):
    """Devices added together (one block of sar rows a step) end as each would alone, also when
    they joined late, restarted apart or halve at different times."""
    rng = random.Random(seed)
    cap = rng.choice([2, 3, 5, 8])
    devices = rng.randint(2, 6)
    alone = [Series(f"d{i}", "s", cap=cap) for i in range(devices)]
    together = [Series(f"d{i}", "s", cap=cap) for i in range(devices)]
    line, segment = 1, 0
    for _ in range(40):
        size = rng.choice([1, 2, 3, 7, 16, 33])
        if rng.random() < 0.15:
            segment += 1
        members = sorted(rng.sample(range(devices), rng.randint(1, devices))) if rng.random() < 0.4 else list(range(devices))
        rows = numpy.array([[[rng.random() * 100 if rng.random() < 0.9 else math.nan for _ in FIELDS]
                             for _ in range(size)] for _ in members])
        lines = numpy.array([numpy.arange(line, line + size) + 1000 * m for m in members])
        for index, member in enumerate(members):
            for row, at in zip(rows[index].tolist(), lines[index].tolist()):
                alone[member].add(row, at, segment)
        add_blocks([together[m] for m in members], rows, lines, segment)
        line += size
    for one, other in zip(alone, together):
        for series in (one, other):
            series.finish()
        assert [[bits(v) for v in s] for s in one.samples] == [[bits(v) for v in s] for s in other.samples]
        assert (one.lines, one.segments, one.counts, one.merged, one.raw_count) == \
            (other.lines, other.segments, other.counts, other.merged, other.raw_count)


def test_series_in_one_state_that_halve_apart_go_on_alone():
    """Two series alike in length and group, but restarted at different points: the halving in the
    middle of a block leaves them different lengths, and each must finish the block on its own."""
    rng = random.Random(1)

    def rows(count):
        return numpy.array([[rng.random() * 100 for _ in FIELDS] for _ in range(count)])

    alone, together = [Series(n, "s", cap=2) for n in "ab"], [Series(n, "s", cap=2) for n in "ab"]
    for segment, sizes in ((0, (2, 3)), (1, (2, 1))):
        for size, one, other in zip(sizes, alone, together):
            block, lines = rows(size), numpy.arange(size) + 100 * segment
            one.add_block(block, lines, segment)
            other.add_block(block, lines, segment)
    assert together[0].state() == together[1].state()
    block, lines = numpy.stack([rows(10), rows(10)]), numpy.stack([numpy.arange(500, 510), numpy.arange(600, 610)])
    for index, one in enumerate(alone):
        for row, at in zip(block[index].tolist(), lines[index].tolist()):
            one.add(row, at, 1)
    add_blocks(together, block, lines, 1)
    for one, other in zip(alone, together):
        one.finish()
        other.finish()
        assert [[bits(v) for v in s] for s in one.samples] == [[bits(v) for v in s] for s in other.samples]
        assert (one.lines, one.segments, one.counts, one.raw_count) == (other.lines, other.segments, other.counts, other.raw_count)
