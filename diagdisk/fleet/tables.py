"""The fleet tables: fleet.parquet and fleet.csv (one row per input), suspects.parquet (one row per
suspect). The columns and their meaning are documented in docs/fleet.md; tests hold the two to
each other. Written whole, through a temporary file renamed into place, so a reader never sees
half a table and an interrupted run leaves the last complete one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# (column, pyarrow type name, meaning): the fixed columns, in order. One `events_<kind>` column
# per event kind seen in the fleet follows them, sorted (int64, 0 when the input had none).
FLEET_COLUMNS: list[tuple[str, str, str]] = [
    ("host", "string", "host name: the report's (hostname, uname, syslog), else the archive/folder's"),
    ("input", "string", "the input: a sosreport/bundle path, or the loose log files of one host"),
    ("content_hash", "string", "SHA-256 of what the input holds (file bytes; a folder's names and bytes)"),
    ("outcome", "string", "analysed | failed (see failure_reason) | excluded (report date before --since)"),
    ("failure_reason", "string", "one line: why the input could not be analysed"),
    ("report_date", "timestamp", "when the sosreport or bundle was taken (its `date`, manifest, or newest log)"),
    ("kernel", "string", "kernel release (uname -r)"),
    ("verdict", "string", "failure | degraded | suspect | healthy (the report's verdict.status)"),
    ("severity", "string", "highest finding severity: info | low | medium | high | critical"),
    ("summary", "string", "the verdict's one-line summary"),
    ("complete", "bool", "false when part of the input could not be read (the report's warnings say which)"),
    ("top_fru", "string", "the most likely part to replace: disk, controller, cable, bus, enclosure, path, power"),
    ("top_hctl", "string", "its SCSI H:C:T:L"),
    ("top_device", "string", "its device name (sdc, nvme1, host0)"),
    ("top_model", "string", "its model (vendor and model as the kernel or smartctl shows them)"),
    ("top_serial", "string", "its serial number"),
    ("top_firmware", "string", "its firmware revision"),
    ("top_driver", "string", "the driver of the controller behind it, as its kernel messages name it"),
    ("confidence", "float64", "the top suspect's confidence, 0..1"),
    ("rule_ids", "string", "rules behind the suspects, ';'-separated (rules/*.yml ids)"),
    ("md_degraded", "int64", "md arrays degraded or failed"),
    ("md_degraded_arrays", "string", "their names, ';'-separated"),
    ("devices", "int64", "devices in the report's device table"),
    ("performance_findings", "string", "reserved for the performance diagnosis (sar/iostat); empty until then"),
    ("fleet_pattern", "string", "what the patterns across hosts its errors belong to add to its verdict, '; '-separated: "
                                "'or update the drive firmware: the same fault on N other hosts with drive firmware X "
                                "(signatures)' (cohorts.parquet)"),
    ("report_file", "string", "the JSON report, relative to the fleet folder"),
    ("diagdisk_version", "string", "diagdisk version that analysed the input"),
]

SUSPECT_COLUMNS: list[tuple[str, str, str]] = [
    ("host", "string", "as in fleet.parquet"),
    ("input", "string", "as in fleet.parquet (join on it)"),
    ("content_hash", "string", "as in fleet.parquet"),
    ("report_date", "timestamp", "as in fleet.parquet"),
    ("rank", "int64", "1 = most likely"),
    ("fru", "string", "disk, controller, cable, bus, enclosure, path, power"),
    ("hctl", "string", "SCSI H:C:T:L"),
    ("device", "string", "device name"),
    ("model", "string", "model"),
    ("serial", "string", "serial number"),
    ("firmware", "string", "firmware revision"),
    ("driver", "string", "controller driver"),
    ("confidence", "float64", "0..1"),
    ("score", "float64", "ranking score (docs/rules.md)"),
    ("rule_ids", "string", "';'-separated rule ids"),
    ("md_arrays", "string", "md arrays it belongs to, ';'-separated"),
]

# cohorts.parquet: one row per cohort (diagdisk.fleet.cohorts)
COHORT_COLUMNS: list[tuple[str, str, str]] = [
    ("kind", "string", "drive (model and firmware), controller (model and firmware), driver (driver and kernel "
                       "release), enclosure (model), or an --inventory column (rack, site...)"),
    ("value", "string", "what the cohort's hosts share: 'Samsung SSD 970 EVO 500GB 2B2QEXE7', 'mpt3sas 5.14.0-362.el9'"),
    ("part_class", "string", "the part whose failure counts: disk, controller (its bus and paths too), behind the "
                             "driver (any part), enclosure (its power too), any part (inventory columns)"),
    ("hosts", "int64", "hosts in the cohort (a host with several inputs counts once)"),
    ("failing_hosts", "int64", "hosts of the cohort with a suspect of that part class (for a drive cohort: a drive of "
                               "that model and firmware)"),
    ("rate", "float64", "failing_hosts / hosts"),
    ("rate_low", "float64", "lower end of its 95% Wilson score interval"),
    ("rate_high", "float64", "upper end of its 95% Wilson score interval"),
    ("base_rate", "float64", "the fleet's rate for the same kind: failing hosts / hosts, over every cohort of the kind"),
    ("p_value", "float64", "one-sided exact binomial test: the chance of this many failing hosts or more were each "
                               "host failing at base_rate"),
    ("q_value", "float64", "its Benjamini-Hochberg adjusted value, across every cohort tested"),
    ("flagged", "bool", "q_value <= 0.05, rate above the base rate and at least 3 failing hosts"),
    ("signatures", "string", "the patterns across hosts found in this cohort, '; '-separated: signature on k of n hosts"),
    ("weekly", "string", "per week (its Monday) with reports: hosts failing for the first time / hosts reporting, "
                         "'; '-separated"),
    ("rising", "bool", "new failing hosts gather in the last 4 weeks beyond what the cohort's reports in those weeks "
                       "and its kind's weekly rate of new failures give (q-value <= 0.05, at least 3 of them); "
                       "false when the reports span under 8 weeks"),
    ("trend_p_value", "float64", "the trend test's one-sided p-value (empty when not tested)"),
]

EVENT_PREFIX = "events_"


def fleet_frame(rows: list[dict]):
    """One row per input (rows as made by diagdisk.fleet.run), sorted by input."""
    import pandas as pd
    kinds = sorted({kind for row in rows for kind in (row.get("event_counts") or {})})
    records = []
    for row in sorted(rows, key=lambda r: r["input"]):
        record = {name: row.get(name) for name, _, _ in FLEET_COLUMNS}
        counts = row.get("event_counts") or {}
        record.update({f"{EVENT_PREFIX}{kind}": int(counts.get(kind, 0)) for kind in kinds})
        records.append(record)
    columns = [name for name, _, _ in FLEET_COLUMNS] + [f"{EVENT_PREFIX}{kind}" for kind in kinds]
    frame = pd.DataFrame.from_records(records, columns=columns)
    return _typed(frame, FLEET_COLUMNS, extra_int=[c for c in columns if c.startswith(EVENT_PREFIX)])


def suspects_frame(rows: list[dict]):
    import pandas as pd
    records = sorted(rows, key=lambda r: (r["input"], r["rank"]))
    frame = pd.DataFrame.from_records([{name: r.get(name) for name, _, _ in SUSPECT_COLUMNS} for r in records],
                                      columns=[name for name, _, _ in SUSPECT_COLUMNS])
    return _typed(frame, SUSPECT_COLUMNS)


def _typed(frame, columns, extra_int=()):
    import pandas as pd
    for name, kind, _ in columns:
        if kind == "string":
            frame[name] = frame[name].astype("string")
        elif kind == "timestamp":
            frame[name] = pd.to_datetime(frame[name], errors="coerce", utc=False, format="ISO8601")
        elif kind == "float64":
            frame[name] = pd.to_numeric(frame[name], errors="coerce").astype("float64")
        elif kind == "int64":
            frame[name] = pd.to_numeric(frame[name], errors="coerce").fillna(0).astype("int64")
        elif kind == "bool":
            frame[name] = frame[name].astype("boolean")
    for name in extra_int:
        frame[name] = frame[name].fillna(0).astype("int64")
    return frame


def write_cohorts(folder: Path, cohorts) -> None:
    """cohorts.parquet under ``folder``, replaced whole."""
    frame = cohorts[[name for name, _, _ in COHORT_COLUMNS]]
    _replace(folder / "cohorts.parquet", lambda path: frame.to_parquet(path, index=False, engine="pyarrow"))


def write_tables(folder: Path, rows: list[dict], suspects: list[dict]) -> None:
    """fleet.parquet, fleet.csv and suspects.parquet under ``folder``, each replaced whole."""
    fleet = fleet_frame(rows)
    suspect_table = suspects_frame(suspects)
    _replace(folder / "fleet.parquet", lambda path: fleet.to_parquet(path, index=False, engine="pyarrow"))
    _replace(folder / "fleet.csv", lambda path: fleet.to_csv(path, index=False))
    _replace(folder / "suspects.parquet", lambda path: suspect_table.to_parquet(path, index=False, engine="pyarrow"))


def _replace(path: Path, write) -> None:
    descriptor, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(descriptor)
    try:
        write(temp)
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
