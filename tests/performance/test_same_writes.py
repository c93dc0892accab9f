"""Mirror halves found by their writes: the grid comparison counts what comparing two devices'
samples time by time counts."""

import math
import random
from types import SimpleNamespace

import numpy
import pytest

from diagdisk.performance import read
from diagdisk.performance.read import SAME_WRITES_MIN_WS, SAME_WRITES_TOLERANCE, _same_writes
from diagdisk.performance.series import INDEX, WIDTH, Series

W, WKB = INDEX["w_s"], INDEX["wkb_s"]


def same_writes_sample_by_sample(data) -> list[list[str]]:
    """The definition: each device's writes by time (the last sample of a time), compared pair by
    pair at the times both write."""
    candidates = {}
    for name, device in data.devices.items():
        series = data.series.get(name)
        if series is None or device.groups or device.cls in ("md", "dm", "other"):
            continue
        writes = {s[0]: (s[W], s[WKB]) for s in series.samples if s[W] == s[W] and s[W] >= SAME_WRITES_MIN_WS}
        if writes:
            candidates[name] = writes
    names = sorted(candidates)
    linked = {name: set() for name in names}
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            common = candidates[first].keys() & candidates[second].keys()
            if not common:
                continue
            same = sum(1 for t in common if all(abs(a - b) <= SAME_WRITES_TOLERANCE * max(a, b)
                                                for a, b in zip(candidates[first][t], candidates[second][t])))
            if same >= 0.8 * len(common):
                linked[first].add(second)
                linked[second].add(first)
    groups, seen = [], set()
    for name in names:
        if name in seen or not linked[name]:
            continue
        component, stack = [], [name]
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                component.append(current)
                stack.extend(linked[current] - seen)
        groups.append(sorted(component))
    return groups


def fleet_of_disks(seed: int):
    """Disks with writes drawn so that some pairs are mirror-like, some near the 5% and 80% edges;
    times partly shared, repeated, missing; NaN figures here and there."""
    rng = random.Random(seed)
    count = rng.randint(2, 12)
    base_times = [float(t) for t in range(rng.randint(5, 60))]
    loads = [[rng.choice([0.0, 3.0, 5.0, 20.0, 100.0]) for _ in base_times] for _ in range(3)]
    series, devices = {}, {}
    for index in range(count):
        load = loads[index % 3]
        rows = []
        for t, w in zip(base_times, load):
            if rng.random() < 0.15:
                continue
            t = t if rng.random() < 0.9 else t + rng.choice([0.5, 1000.0])
            jitter = 1 + rng.choice([0.0, 0.01, 0.049, 0.05, 0.051, 0.2]) * rng.choice([-1, 1])
            sample = [math.nan] * WIDTH
            sample[0] = t if rng.random() < 0.97 else math.nan
            sample[W] = w * jitter if rng.random() < 0.95 else math.nan
            sample[WKB] = w * 4 * jitter if rng.random() < 0.9 else rng.choice([math.nan, 0.0])
            rows.append(sample)
            if rng.random() < 0.05:
                again = list(sample)
                again[W] = rng.choice([w, 50.0])
                rows.append(again)   # the same time twice: the last counts
        name = f"sd{chr(97 + index)}"
        one = Series(name, "s", cap=1024)
        if rows:
            one.add_block(numpy.array(rows), numpy.arange(len(rows)), 0)
        one.finish()
        series[name] = one
        devices[name] = SimpleNamespace(groups=[], cls=rng.choice(["ssd", "ssd", "hdd", "md"]))
    return SimpleNamespace(series=series, devices=devices)


@pytest.mark.parametrize("grid_cells", [read._GRID_CELLS, 7])
@pytest.mark.parametrize("seed", range(40))
def test_same_writes_counts_what_comparing_sample_by_sample_counts(seed, grid_cells, monkeypatch):
    monkeypatch.setattr(read, "_GRID_CELLS", grid_cells)
    data = fleet_of_disks(seed)
    assert _same_writes(data) == same_writes_sample_by_sample(data)


def test_mirror_halves_are_found_and_a_different_load_is_not():
    rng = random.Random(1)
    load = [10 + rng.random() * 90 for _ in range(200)]
    other = [10 + rng.random() * 90 for _ in range(200)]
    data = SimpleNamespace(series={}, devices={})
    for name, writes in (("sda", load), ("sdb", [w * 1.03 for w in load]), ("sdc", other)):
        rows = numpy.full((200, WIDTH), math.nan)
        rows[:, 0], rows[:, W], rows[:, WKB] = numpy.arange(200), writes, numpy.array(writes) * 8
        series = Series(name, "s")
        series.add_block(rows, numpy.arange(200), 0)
        data.series[name], data.devices[name] = series, SimpleNamespace(groups=[], cls="ssd")
    assert _same_writes(data) == [["sda", "sdb"]]
