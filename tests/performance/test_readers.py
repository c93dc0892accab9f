"""sar, iostat and sadf readers across sysstat eras, locales and layouts; diskstats; seed 004's
excerpts with the figures the seed computes by hand."""

from datetime import datetime, timezone
from pathlib import Path

import pytest

from diagdisk.performance.kernel import Names, read_diskstats, read_dmsetup_info, read_lvs, read_partitions
from diagdisk.performance.sadf import SadfError, read_sadf_csv, read_sadf_json, read_sadf_xml
from diagdisk.performance.series import normalise
from diagdisk.performance.sysstat import parse_date, read_sysstat_text

FIXTURES = Path(__file__).parent / "fixtures"


def text(name: str, shown_as: str | None = None):
    path = FIXTURES / name
    return read_sysstat_text(path.read_text().splitlines(), shown_as or name, c_locale=False)


def when(sample) -> str:
    return datetime.fromtimestamp(sample.t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def of(samples, device):
    return [s for s in samples if s.device == device]


# ---------------------------------------------------------------- sar text

def test_sar_7_0_2_twelve_hour_clock_sectors_restart_and_average():
    source, samples = text("sar-7.0.2-en_US-12h.txt")
    assert source.kind == "sar" and source.eras == ["< 11.5.7 (sectors)"]
    assert source.clock == "12h" and source.date_order == "MM/DD/YY" and source.day == "2024-03-19"
    assert source.average_label == "Average:" and len(source.restarts) == 1
    sdb = of(samples, "dev8-16")
    assert [when(s) for s in sdb] == ["2024-03-19 00:10:01", "2024-03-19 00:20:01", "2024-03-19 12:50:01"]
    assert sdb[0].values["rkb_s"] == 1680.0          # rd_sec/s 3360 sectors = 1680 kB
    assert sdb[0].values["areq_kb"] == 8.0           # avgrq-sz 16 sectors = 8 kB
    assert sdb[0].values["aqu"] == 9.8 and sdb[0].values["svctm"] == 4.7
    assert sdb[0].segment == 0 and sdb[2].segment == 1   # after LINUX RESTART
    assert len(samples) == 6                          # Average rows are not samples


def test_sar_11_7_3_c_locale_reads_only_the_disk_section():
    source, samples = text("sar-11.7.3-C.txt")
    assert source.eras == ["11.5.7+ (kB)"] and source.clock == "24h"
    assert {s.device for s in samples} == {"dev253-0", "dev8-0", "dev8-16"}
    assert len(samples) == 6                          # CPU and IFACE sections ignored
    dm = of(samples, "dev253-0")[0]
    assert dm.values["areq_kb"] == 16.0 and dm.values["aqu"] == 48.0 and dm.values["rkb_s"] == 0.0


def test_sar_12_5_4_has_no_svctm_and_restart_with_cpu_count():
    source, samples = text("sar-12.5.4-C.txt")
    assert source.eras == ["12.1.2+ (kB, discards, no svctm)"]
    assert len(source.restarts) == 1
    nvme = of(samples, "nvme0n1")
    assert len(nvme) == 4 and "svctm" not in nvme[0].values
    assert [s.segment for s in nvme] == [0, 0, 0, 1]
    normal, apparent = normalise(nvme[0].values, nvme[0].t, 600)
    assert apparent and normal[13] == pytest.approx(100 * 10 / 45000)   # apparent service time


def test_sar_german_locale_decimal_commas_and_translated_average():
    source, samples = text("sar-10.1.5-de_DE.txt")
    assert source.decimal_comma and source.average_label == "Durchschn.:"
    assert source.date_order == "DD.MM.YY" and source.day == "2024-03-19"
    assert len(samples) == 2 and samples[0].values["aqu"] == 8.7 and samples[1].values["await"] == 50.0


def test_sar_dd_mm_date_settled_by_the_file_name_and_midnight_rollover():
    source, samples = text("sar03-10.1.5-fr_FR-ddmm.txt", "var/log/sa/sar03")   # day 03 of the month
    assert source.date_order == "DD/MM/YY" and source.day == "2024-04-03"
    assert source.average_label == "Moyenne :"
    assert [when(s) for s in samples] == ["2024-04-03 23:50:01", "2024-04-04 00:00:01"]


def test_ambiguous_date_without_a_hint_is_said_to_be_ambiguous():
    day, order, warning = parse_date("03/04/24", None, c_locale=False)
    assert (day.isoformat(), order) == ("2024-03-04", "MM/DD/YY") and "MM/DD or DD/MM" in warning
    assert parse_date("03/04/24", None, c_locale=True)[2] is None
    assert parse_date("19/03/24", None, c_locale=False)[:2][1] == "DD/MM/YY"
    assert parse_date("2024-03-19", None, False)[1] == "ISO"


def test_sar_human_and_pretty_device_last_units_and_percent():
    source, samples = text("sar-12.x-human-pretty.txt")
    sda = of(samples, "sda")
    assert len(sda) == 2 and sda[0].values["rkb_s"] == 2048.0 and sda[0].values["wkb_s"] == 12.5
    assert sda[0].values["util"] == 35.5 and sda[0].values["areq_kb"] == pytest.approx(8.2)
    assert of(samples, "rootvg-root")[0].values["wkb_s"] == 40.0


# ---------------------------------------------------------------- iostat text

def test_iostat_9_with_timestamps_and_wrapped_device_names_skips_the_since_boot_report():
    source, samples = text("iostat-9.0.4-t-wrapped.txt")
    assert source.kind == "iostat" and source.clock == "12h"
    assert source.skipped_since_boot == 8             # the first report averages since boot
    lv = of(samples, "VolGroup00-LogVol00")
    assert len(lv) == 2 and lv[0].values["aqu"] == 10.0 and when(lv[0]) == "2024-03-19 10:00:05"
    assert of(samples, "sda")[1].values["w_await"] == 38.5


def test_iostat_11_7_without_timestamps_reports_by_header_and_no_combined_await():
    source, samples = text("iostat-11.7.3-d.txt")
    assert source.eras == ["11.5.7+ (kB)"] and source.skipped_since_boot == 4
    assert len(samples) == 2 and samples[0].t is None
    normal, _ = normalise(samples[0].values, None, None)
    assert normal[10] == pytest.approx((180 * 45 + 20 * 30) / 200)   # await from r_await and w_await
    assert normal[8] == pytest.approx((2880 + 160) / 200)            # request size from rareq/wareq


def test_iostat_12_pretty_groups_merge_into_one_sample_decimal_comma_dd_mm():
    source, samples = text("iostat-12.5.4-pretty-de.txt")
    assert source.decimal_comma and source.date_order == "DD/MM/YY"
    assert len(samples) == 1                          # the second report; the first is since boot
    values = samples[0].values
    assert (values["r_s"], values["w_s"], values["aqu"], values["util"]) == (300.0, 100.0, 1.0, 60.0)


def test_iostat_12_with_y_keeps_every_report_and_reads_flush_columns():
    source, samples = text("iostat-12.5.4-x-t-y.txt")
    assert source.eras == ["12.3.1+ (kB, discards, flushes, no svctm)"]
    assert source.clock == "12h" and source.skipped_since_boot == 5   # no -y shown: first report held
    path = FIXTURES / "iostat-12.5.4-x-t-y.txt"
    source, samples = read_sysstat_text(path.read_text().splitlines(), "iostat_-x_-t_-y_1_3",
                                        since_boot_skipped=True)
    assert source.skipped_since_boot is None and len(samples) == 2
    assert samples[0].values["f_s"] == 5.0 and when(samples[0]) == "2024-03-19 22:00:01"


def test_a_pasted_iostat_command_line_with_y_keeps_the_first_report():
    lines = ["$ iostat -xy 5 2"] + (FIXTURES / "iostat-11.7.3-d.txt").read_text().splitlines()
    source, samples = read_sysstat_text(lines, "<stdin>")
    assert source.skipped_since_boot is None and len(samples) == 3 and source.interval == 5.0


# ---------------------------------------------------------------- seed 004

def test_seed004_sar_1m_dd_is_1024_sectors_per_io_512_kb():
    _, samples = text("seed004-sar-dd-1m.txt")
    busy = [s for s in samples if s.values["tps"] >= 300]
    sizes = [normalise(s.values, s.t, 1)[0][8] for s in busy]
    assert all(abs(size - 512) < 8 for size in sizes)             # ~1024 sectors = 512 kB
    row = next(s for s in busy if s.values["tps"] == 303.0 and s.values["rkb_s"] == 155648.0)
    assert normalise(row.values, row.t, 1)[0][8] * 2 == pytest.approx(311296 / 303)   # 1027.3 sectors


def test_seed004_grep_excerpt_5467_tps_at_4_sectors_is_2_kb():
    source, samples = text("seed004-sar-dd-2k-grep.txt")
    assert source.headerless_rows == 0                 # the header above still names them
    row = next(s for s in samples if s.values["tps"] == 5467.0)
    assert row.values["rkb_s"] * 2 / row.values["tps"] == pytest.approx(4.0, abs=0.01)   # 21868 / 5467 sectors
    assert normalise(row.values, row.t, 1)[0][8] == pytest.approx(2.0, abs=0.01)          # 2 kB


def test_seed004_iostat_4m_await_14_5_vs_svctm_3_2():
    _, samples = text("seed004-iostat-x-4m.txt")
    awaits = [s.values["await"] for s in samples]
    svctms = [s.values["svctm"] for s in samples]
    assert sum(awaits) / len(awaits) == pytest.approx(14.5, abs=0.1)
    assert sum(svctms) / len(svctms) == pytest.approx(3.2, abs=0.05)
    assert all(abs(s.values["areq_kb"] - 512) < 8 for s in samples)   # avgrq-sz ~1030 sectors


def test_seed004_basic_iostat_since_boot_row_is_dropped():
    source, samples = text("seed004-iostat-basic.txt")
    assert source.skipped_since_boot == 8 and len(samples) == 10
    assert samples[4].values["rkb_s"] / samples[4].values["tps"] * 2 == pytest.approx(1020.6, abs=0.1)


# ---------------------------------------------------------------- sadf

def test_sadf_xml_old_and_new_attribute_names():
    with open(FIXTURES / "sa19-9.0.4.xml", "rb") as handle:
        source, samples = read_sadf_xml(handle, "sa19.xml")
    assert source.interval == 600 and source.host == "oldhost" and source.eras == ["< 11.5.7 (sectors)"]
    first = samples[0]
    assert (first.device, first.values["rkb_s"], first.values["areq_kb"], first.values["svctm"]) == \
        ("dev8-0", 1680.0, 8.0, 4.7)
    with open(FIXTURES / "sa19-12.5.4.xml", "rb") as handle:
        source, samples = read_sadf_xml(handle, "sa19.xml")
    assert samples[0].values["rkb_s"] == 640000.0 and samples[0].values["areq_kb"] == 16.0
    assert "svctm" not in samples[0].values and source.eras[0].startswith("12.1.2+")


def test_sadf_xml_with_entities_is_refused():
    import io
    with pytest.raises(SadfError):
        read_sadf_xml(io.BytesIO(b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><sysstat/>'), "x.xml")


def test_sadf_d_restart_rows_and_h_repeated_groups():
    source, samples = read_sadf_csv((FIXTURES / "sadf-d-9.0.4.csv").read_text().splitlines(), "sadf-d")
    assert [s.segment for s in samples] == [0, 0, 1] and samples[0].values["rkb_s"] == 1680.0
    source, samples = read_sadf_csv((FIXTURES / "sadf-dh-12.x.csv").read_text().splitlines(), "sadf-dh")
    assert [(s.device, s.values["tps"]) for s in samples] == [("sda", 100.0), ("sdb", 200.0), ("sda", 110.0),
                                                              ("sdb", 210.0)]


def test_sadf_j_restarts_cut_segments():
    source, samples = read_sadf_json((FIXTURES / "sadf-j-12.x.json").read_text(), "sadf-j")
    assert [s.segment for s in samples] == [0, 1] and samples[0].values["rkb_s"] == 1600.0
    assert source.interval == 600


# ---------------------------------------------------------------- kernel files

def test_diskstats_two_snapshots_give_rates():
    names = Names()
    samples, snapshots, _ = read_diskstats((FIXTURES / "diskstats-two-snapshots.txt").read_text(), "d", names)
    assert snapshots == 2
    sdb = next(s for s in samples if s.device == "sdb")
    assert sdb.interval == 5.0 and sdb.values["r_s"] == 300.0 and sdb.values["r_await"] == 50.0
    assert sdb.values["util"] == pytest.approx(99.0) and sdb.values["aqu"] == pytest.approx(15.0)
    assert names.resolve("dev8-16") == "sdb"


def test_diskstats_single_snapshot_gives_since_boot_averages():
    samples, snapshots, _ = read_diskstats((FIXTURES / "diskstats-since-boot.txt").read_text(), "d", Names())
    sdb = next(s for s in samples if s.device == "sdb")
    assert snapshots == 1 and sdb.t is None and sdb.values["await"] == pytest.approx(70.0)


def test_names_from_partitions_dmsetup_and_lvs():
    names = Names()
    read_partitions("major minor  #blocks  name\n\n   8       32  976762584 sdc\n 253        0   52428800 dm-0\n", names)
    read_dmsetup_info("Name             Maj Min Stat Open Targ Event  UUID\nrootvg-root      253   0 L--w    1    1      0 LVM-x\n",
                      names)
    read_lvs("  LV   VG     Attr       LSize  Devices\n  root rootvg -wi-ao---- 50.00g /dev/sda2(0),/dev/sdb2(0)\n",
             names)
    assert names.resolve("dev8-32") == "sdc" and names.resolve("dev253-0") == "dm-0"
    assert names.resolve("rootvg-root") == "dm-0" and names.resolve("/dev/mapper/rootvg-root") == "dm-0"
    assert names.lv_devices["rootvg-root"] == ["sda2", "sdb2"]
