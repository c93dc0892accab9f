"""Cohorts across hosts (diagdisk.fleet.cohorts): the statistics against their definitions, and the
cohort step on fleets built here row by row (what each input's state file holds)."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import pytest

pd = pytest.importorskip("pandas")

from diagdisk.errors import InputError  # noqa: E402
from diagdisk.fleet.cohorts import (  # noqa: E402
    COHORT_FIELDS, MIN_FAILING_HOSTS, benjamini_hochberg, binomial_upper_tail, compute_cohorts, read_inventory,
    wilson_interval)

START = datetime(2026, 9, 7, 3, 0)


# ---- statistics -----------------------------------------------------------------------------

@pytest.mark.parametrize("successes, trials, probability", [
    (0, 10, 0.3), (1, 10, 0.3), (3, 10, 0.3), (7, 10, 0.3), (10, 10, 0.3), (11, 10, 0.3),
    (5, 200, 0.01), (12, 300, 0.02), (40, 300, 0.02), (150, 300, 0.5), (1, 1, 0.05), (2, 2, 0.05),
])
def test_the_binomial_tail_is_the_sum_of_its_terms(successes, trials, probability):
    expected = sum(math.comb(trials, i) * probability ** i * (1 - probability) ** (trials - i)
                   for i in range(max(successes, 0), trials + 1))
    assert binomial_upper_tail(successes, trials, probability) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_the_binomial_tail_at_its_edges():
    assert binomial_upper_tail(0, 50, 0.1) == 1.0
    assert binomial_upper_tail(3, 50, 0.0) == 0.0
    assert binomial_upper_tail(3, 50, 1.0) == 1.0
    # far in the tail it stays a tiny positive number, not zero or negative
    assert 0 < binomial_upper_tail(60, 100, 0.05) < 1e-40


def test_wilson_interval_matches_published_values():
    # Newcombe (1998), table I: 0/10 -> 0 to 0.2775, 5/10 -> 0.2366 to 0.7634 (95 %)
    low, high = wilson_interval(0, 10)
    assert (low, round(high, 4)) == (0.0, 0.2775)
    low, high = wilson_interval(5, 10)
    assert (round(low, 4), round(high, 4)) == (0.2366, 0.7634)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_benjamini_hochberg_adjusts_in_the_given_order():
    # sorted 0.005, 0.01, 0.03, 0.04 -> 0.02, 0.02, 0.04, 0.04 (each p x m / rank, then the running minimum)
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert benjamini_hochberg([0.9, 0.8]) == pytest.approx([0.9, 0.9])
    assert benjamini_hochberg([]) == []


# ---- fleets built row by row ----------------------------------------------------------------

def _input(host, drive=("ATA ST4000NM0033-9ZM", "SN06"), driver="mpt3sas", kernel="5.14.0-362.el9", failing=False,
           signatures=(), when=START, number=0, controller=None, fru="disk", enclosure=None):
    row = {"host": host, "input": f"/in/{host}-{number}.tar.gz", "outcome": "analysed", "kernel": kernel,
           "report_date": when.isoformat()}
    suspects = [{"host": host, "input": row["input"], "fru": fru, "driver": driver}] if failing else []
    holds = {"drives": [list(drive)], "failing_drives": [list(drive)] if failing and fru == "disk" else [],
             "drivers": [driver], "controllers": [list(controller)] if controller else [],
             "enclosures": [enclosure] if enclosure else [],
             "signatures": [[signature, when.isoformat()] for signature in signatures]}
    return row, suspects, holds


def _fleet(planted_failing=12, planted_hosts=40, other_hosts=400, other_failing=8):
    """``planted_hosts`` hosts with firmware BAD1, ``planted_failing`` of them failing with one
    signature within a week; ``other_hosts`` with firmware GOOD2 (same model), ``other_failing``
    of them failing with medium errors spread over months."""
    records = []
    for index in range(planted_hosts):
        failing = index < planted_failing
        records.append(_input(f"bad{index:03d}", drive=("Samsung SSD 970 EVO 500GB", "BAD1"), driver="nvme",
                              failing=failing, when=START + timedelta(days=index % 7),
                              signatures=["nvme reset controller down (nvme)", "io error (nvme)"] if failing else ()))
    for index in range(other_hosts):
        failing = index < other_failing
        records.append(_input(f"good{index:03d}", drive=("Samsung SSD 970 EVO 500GB", "GOOD2"), driver="nvme",
                              failing=failing, when=START + timedelta(days=index * 11 % 120),
                              signatures=["nvme error status Unrecovered Read Error (nvme)"] if failing else ()))
    return records


def _cohort(result, kind, value):
    frame = result.cohorts
    rows = frame[(frame.kind == kind) & (frame.value == value)]
    assert len(rows) == 1, (kind, value, list(frame.value))
    return rows.iloc[0]


def test_a_firmware_failing_above_the_fleet_is_flagged_and_its_sibling_is_not():
    result = compute_cohorts(_fleet())
    assert list(result.cohorts.columns) == COHORT_FIELDS
    bad = _cohort(result, "drive", "Samsung SSD 970 EVO 500GB BAD1")
    good = _cohort(result, "drive", "Samsung SSD 970 EVO 500GB GOOD2")
    assert (bad.hosts, bad.failing_hosts, bad.part_class) == (40, 12, "disk")
    assert bad.base_rate == pytest.approx(20 / 440)
    assert bad.rate == pytest.approx(0.3) and bad.rate_low < 0.3 < bad.rate_high
    assert bad.p_value == pytest.approx(binomial_upper_tail(12, 40, 20 / 440))
    assert bad.flagged and not good.flagged
    # flagged cohorts come first
    assert result.cohorts.iloc[0].value == "Samsung SSD 970 EVO 500GB BAD1"


def test_the_shared_signature_is_a_pattern_and_each_affected_row_says_so():
    result = compute_cohorts(_fleet())
    assert len(result.patterns) == 1
    pattern = result.patterns[0]
    assert (pattern["kind"], pattern["value"]) == ("drive", "Samsung SSD 970 EVO 500GB BAD1")
    assert pattern["signature"] == "io error (nvme), nvme reset controller down (nvme)"
    assert pattern["text"] == ("io error (nvme), nvme reset controller down (nvme) on 12 of 40 nvme hosts with drive "
                               "firmware Samsung SSD 970 EVO 500GB BAD1; none of 400 with another drive firmware of "
                               "Samsung SSD 970 EVO 500GB; none of 400 other nvme hosts")
    assert sorted(result.row_patterns) == [f"/in/bad{i:03d}-0.tar.gz" for i in range(12)]
    assert result.row_patterns["/in/bad000-0.tar.gz"] == (
        "or update the drive firmware: the same fault on 11 other hosts with drive firmware Samsung SSD 970 EVO "
        "500GB BAD1 (io error (nvme), nvme reset controller down (nvme))")
    assert "on 12 of 40 hosts" in _cohort(result, "drive", "Samsung SSD 970 EVO 500GB BAD1").signatures
    # the healthy sibling's scattered medium errors are no pattern
    assert _cohort(result, "drive", "Samsung SSD 970 EVO 500GB GOOD2").signatures == ""


def test_no_cohort_is_flagged_when_failures_spread_evenly():
    records = []
    for index in range(600):
        firmware = ("A1", "B2", "C3")[index % 3]
        records.append(_input(f"h{index:03d}", drive=("HGST HUS726T4TALA6L4", firmware),
                              failing=index % 20 == 0, when=START + timedelta(days=index % 60),
                              signatures=["sense key 0x3 asc/ascq 0x11/0x00 (mpt3sas)"] if index % 20 == 0 else ()))
    result = compute_cohorts(records)
    assert not result.cohorts.flagged.any()
    assert result.patterns == [] and result.row_patterns == {}
    assert (result.cohorts.failing_hosts[result.cohorts.kind == "drive"] == 10).all()


def test_a_small_cohort_is_not_flagged_on_one_or_two_failures():
    records = [_input(f"h{i:03d}", failing=i < 5, when=START) for i in range(500)]
    # two hosts of a rare firmware, both failing: far above the base rate, but two hosts
    records += [_input(f"rare{i}", drive=("ATA ST4000NM0033-9ZM", "SN99"), failing=True) for i in range(2)]
    result = compute_cohorts(records)
    rare = _cohort(result, "drive", "ATA ST4000NM0033-9ZM SN99")
    assert rare.failing_hosts == 2 < MIN_FAILING_HOSTS
    assert rare.p_value < 1e-3 and not rare.flagged


def test_a_host_with_several_reports_counts_once():
    records = _fleet()
    # bad000 reports every night for a week: still one host, one failing host
    records += [_input("bad000", drive=("Samsung SSD 970 EVO 500GB", "BAD1"), driver="nvme", failing=True,
                       number=night, when=START + timedelta(days=night),
                       signatures=["nvme reset controller down (nvme)"]) for night in range(1, 8)]
    result = compute_cohorts(records)
    bad = _cohort(result, "drive", "Samsung SSD 970 EVO 500GB BAD1")
    assert (bad.hosts, bad.failing_hosts) == (40, 12)
    assert result.patterns[0]["affected"] == 12
    assert "/in/bad000-5.tar.gz" in result.row_patterns


def test_a_signature_spread_over_months_is_no_pattern():
    records = _fleet()
    spread = []
    for row, suspects, holds in records:
        if holds["signatures"] and row["host"].startswith("bad"):
            index = int(row["host"][3:])
            when = (START + timedelta(days=40 * index)).isoformat()
            holds = dict(holds, signatures=[[s, when] for s, _ in holds["signatures"]])
        spread.append((row, suspects, holds))
    result = compute_cohorts(spread)
    # the cohort still fails above the fleet; no four weeks hold three of its signatures
    assert _cohort(result, "drive", "Samsung SSD 970 EVO 500GB BAD1").flagged
    assert result.patterns == []


def test_driver_kernel_controller_enclosure_and_inventory_cohorts():
    records = []
    for index in range(300):
        rack = f"r{index % 10}"
        failing = index % 10 == 3 and index < 200 or index % 50 == 0
        records.append(_input(f"h{index:03d}", driver="megaraid_sas", kernel=("5.14.0-1", "6.8.0-2")[index % 2],
                              controller=("MegaRAID SAS-3 3108", "4.680.00-8290", "megaraid_sas"),
                              enclosure="PowerVault MD1400" if index < 30 else None, failing=failing,
                              fru="controller" if failing else "disk"))
        records[-1][0]["rack"] = rack
    # the inventory names some hosts by their FQDN, in capitals
    inventory = {(row["host"] if index % 3 else f"{row['host'].upper()}.dc1.example.com"): {"rack": row["rack"]}
                 for index, (row, _, _) in enumerate(records)}
    result = compute_cohorts(records, inventory)
    rack = _cohort(result, "rack", "r3")
    assert (rack.hosts, rack.failing_hosts, rack.part_class) == (30, 20, "any part") and rack.flagged
    assert not _cohort(result, "rack", "r4").flagged
    controller = _cohort(result, "controller", "MegaRAID SAS-3 3108 4.680.00-8290")
    assert (controller.hosts, controller.failing_hosts, controller.part_class) == (300, 26, "controller")
    assert not controller.flagged  # the whole fleet: nothing to stand out from
    kernel = _cohort(result, "driver", "megaraid_sas 6.8.0-2")
    assert kernel.part_class == "behind the driver" and kernel.hosts == 150
    enclosure = _cohort(result, "enclosure", "PowerVault MD1400")
    assert (enclosure.hosts, enclosure.failing_hosts) == (30, 0)  # a controller suspect is not the enclosure's


def test_a_cohort_whose_new_failures_rise_is_rising_and_the_rest_are_not():
    records = []
    for week in range(10):
        for index in range(60):
            host = f"w{week}h{index:02d}"
            firmware = "NEW" if index < 20 else "OLD"
            # one report per host; NEW fails only in the last three weeks, OLD evenly
            failing = (firmware == "NEW" and week >= 7 and index < 6) or (firmware == "OLD" and index == 30)
            records.append(_input(host, drive=("ATA Micron_5200_MTFD", firmware), failing=failing,
                                  when=START + timedelta(weeks=week, days=index % 5)))
    result = compute_cohorts(records)
    new = _cohort(result, "drive", "ATA Micron_5200_MTFD NEW")
    old = _cohort(result, "drive", "ATA Micron_5200_MTFD OLD")
    assert new.rising and not old.rising
    assert new.trend_p_value < 0.05 and old.trend_p_value > 0.5
    weeks = new.weekly.split("; ")
    assert len(weeks) == 10 and weeks[0] == "2026-09-07 0/20" and weeks[-1] == "2026-11-09 6/20"


def test_trends_need_twice_the_recent_weeks():
    result = compute_cohorts(_fleet(other_hosts=100))
    # 120 days of reports: tested; a fleet of one week is not
    assert result.cohorts.trend_p_value.notna().any()
    one_week = compute_cohorts([(dict(r, report_date=START.isoformat()), s, h) for r, s, h in _fleet()])
    assert one_week.cohorts.trend_p_value.isna().all() and not one_week.cohorts.rising.any()


def test_failed_inputs_and_an_empty_fleet_give_an_empty_table():
    result = compute_cohorts([({"host": "x", "input": "/in/x", "outcome": "failed"}, [], {})])
    assert list(result.cohorts.columns) == COHORT_FIELDS and result.cohorts.empty
    assert result.flagged() == [] and result.patterns == []


def test_read_inventory(tmp_path):
    good = tmp_path / "hosts.csv"
    good.write_text("\ufeffhost,rack,site,driver\nweb1,r1,fra,x\nweb2,,ams,\n,r9,fra,\n", encoding="utf-8")
    assert read_inventory(str(good)) == {"web1": {"rack": "r1", "site": "fra", "inventory:driver": "x"},
                                         "web2": {"site": "ams"}}
    no_host = tmp_path / "nohost.csv"
    no_host.write_text("name,rack\nweb1,r1\n")
    with pytest.raises(InputError, match="needs a `host` column"):
        read_inventory(str(no_host))
    with pytest.raises(InputError, match="cannot read the inventory"):
        read_inventory(str(tmp_path / "missing.csv"))
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"host,rack\n\xff\xfe\x00\x01\n")
    with pytest.raises(InputError, match="not a UTF-8 CSV"):
        read_inventory(str(binary))


def test_an_inputs_signatures_and_controllers_from_its_events():
    from types import SimpleNamespace

    from diagdisk.fleet.job import controllers_of, signatures_of
    events = [
        {"kind": "attach", "detail": "adapter", "driver": "mpt3sas", "adapter": "mpt3sas_cm0", "model": "LSISAS3008",
         "revision": "16.00.01.00"},
        {"kind": "attach", "detail": "host", "host": 0, "driver": "mpt3sas"},
        {"kind": "sense", "host": 0, "sense_key": 3, "asc": 0x11, "ascq": 0, "time": "2026-09-02T10:00:00"},
        {"kind": "sense", "host": 0, "sense_key": 3, "asc": 0x11, "ascq": 0, "time": "2026-09-01T10:00:00"},
        {"kind": "nvme_error", "device": "nvme1", "nvme_status": "Unrecovered Read Error"},
        {"kind": "ata_exception", "ata_port": "ata3", "ata_error": "ICRC ABRT"},
        {"kind": "ata_link", "detail": "up", "ata_port": "ata3"},          # informational: no fault
        {"kind": "unclassified", "raw": "sd 0:0:0:0: something new"},
        {"kind": "machine", "detail": "hypervisor"},                      # the machine around, no fault
        {"kind": "reset", "detail": "host", "driver": "evil\x1b]0;x\x07"},  # log text is hostile
    ]
    analysis = SimpleNamespace(events=events)
    assert controllers_of(analysis) == [["LSISAS3008", "16.00.01.00", "mpt3sas"]]
    assert signatures_of(analysis) == [
        ["ata exception error { ICRC ABRT }", None],
        ["nvme error status Unrecovered Read Error (nvme)", None],
        ["reset host (evil\\x1b]0;x\\x07)", None],
        ["sense key 0x3 asc/ascq 0x11/0x00 (mpt3sas)", "2026-09-01T10:00:00"],
    ]
