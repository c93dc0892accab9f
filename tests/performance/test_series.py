"""Normalised samples and bounded series: merging neighbours keeps exact averages."""

import math

import pytest

from diagdisk.performance.series import FIELDS, Series, merge, normalise

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
