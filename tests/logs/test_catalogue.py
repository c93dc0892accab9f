"""The catalogue of the kernel's storage messages (grammars/catalogue/*.yml) against the grammars.

Each row is one printk format of the kernel's storage stack, read from the kernel source of the eras
a sosreport comes from, with one line instantiated exactly as the kernel prints it. Every row's line
is read the way a log is read (prefilter, framing, grammars, enrichment) and must become the event
kind the row names, tied to the identity the line shows. Fault and consequence rows must all pass;
an info row may be parsed or knowingly ignored. The coverage per group and era is printed.
"""

from __future__ import annotations

import collections
from functools import cache
from pathlib import Path

import pytest
import yaml

from diagdisk.logs.reader import LogReader, as_event
from diagdisk.resources import grammars_dir

CATALOGUE = grammars_dir() / "catalogue"
ERAS = ("2.4.18", "2.6.9", "2.6.18", "2.6.32", "3.10", "4.18", "5.14", "6.12")
IDENTITY = ("hctl", "host", "channel", "target", "lun", "device", "partition", "ata_port", "ata_link",
            "nvme_ctrl", "md", "dm", "usb_port", "pci", "adapter")
ROW_KEYS = {"id", "source", "function", "eras", "format", "helper", "line", "class", "kind", "detail",
            "origin", "fields"}
CLASSES = {"fault", "consequence", "info"}
ORIGINS = {"device", "link", "adapter", "bus", "enclosure", "power", "path", "backend", "ambiguous", "none"}


def _rows() -> list[tuple[str, dict]]:
    rows = []
    for path in sorted(CATALOGUE.glob("*.yml")):
        rows.extend((path.stem, row) for row in yaml.safe_load(path.read_text(encoding="utf-8")))
    return rows


ROWS = _rows()


@cache
def _reader() -> LogReader:
    return LogReader()


def read_line(line: str, tmp_dir: Path) -> list[dict]:
    path = tmp_dir / "line.log"
    path.write_text(line + "\n", encoding="utf-8")
    result = _reader().read(path, "catalogue")
    return [as_event(e) for e in result.events]


def judge(row: dict, tmp_dir: Path) -> str | None:
    """None when the row's line reads as the row says, else what went wrong."""
    events = [e for e in read_line(row["line"], tmp_dir) if e["kind"] != "scsi_context"]
    if not events:
        return "not read"
    event = events[0]
    if event["kind"] != row["kind"]:
        return f"kind {event['kind']}{'/' + event['detail'] if event.get('detail') else ''} != {row['kind']}"
    wrong = [f"{key}={event.get(key)!r} (want {value!r})" for key, value in (row.get("fields") or {}).items()
             if key in IDENTITY and str(event.get(key)) != str(value)]
    return "; ".join(wrong) or None


def test_rows_are_well_formed():
    ids = collections.Counter(row["id"] for _, row in ROWS)
    assert [i for i, n in ids.items() if n > 1] == []
    assert len(ROWS) >= 300
    for group, row in ROWS:
        assert ROW_KEYS <= set(row), f"{group}/{row.get('id')}: missing {ROW_KEYS - set(row)}"
        assert row["class"] in CLASSES and row["origin"] in ORIGINS, row["id"]
        assert row["line"] == row["line"].rstrip("\n") and "\n" not in row["line"], row["id"]
        assert set(row["eras"]) <= set(ERAS) | {"6.1"}, f"{row['id']}: unknown era {row['eras']}"


@pytest.mark.parametrize("group,row", [pytest.param(g, r, id=r["id"]) for g, r in ROWS
                                       if r["class"] in ("fault", "consequence")])
def test_fault_and_consequence_rows_read_as_their_event(group, row, tmp_path):
    assert judge(row, tmp_path) is None


def test_coverage_by_group_and_era(tmp_path, capsys):
    table = collections.defaultdict(lambda: [0, 0])
    for group, row in ROWS:
        ok = judge(row, tmp_path) is None
        for key in [(group, row["class"])] + [("era " + era, row["class"]) for era in row["eras"]]:
            table[key][0] += ok
            table[key][1] += 1
    with capsys.disabled():
        print(f"\ncatalogue: {len(ROWS)} rows")
        for (name, klass), (ok, total) in sorted(table.items()):
            print(f"  {name:24} {klass:12} {ok:4}/{total:<4}")
    for (name, klass), (ok, total) in table.items():
        if klass != "info":
            assert ok == total, f"{name} {klass}: {total - ok} rows not read as their event"


def test_origins_agree_with_the_catalogue(tmp_path, capsys):
    """rules/model/origins.yml gives each event the component that originated it; the catalogue
    row, read from the kernel source, says the same for its message. Print every disagreement."""
    from diagdisk.diagnosis.engine import PATH_FIELDS
    from diagdisk.diagnosis.origins import attribute, refine
    from diagdisk.logs.events import EVENT_FIELDS
    from diagdisk.topology.paths import transport_of_driver, VIRTUAL_TRANSPORTS

    agree, disagree = 0, []
    for group, row in ROWS:
        # a continuation line (ASC text, Info fld, CDB, result) takes its origin from the report it is
        # stitched into: alone it cannot say who spoke
        if row["class"] == "info" or row["origin"] in ("none",) or row["kind"] in ("sense_detail", "result_detail"):
            continue
        events = [e for e in read_line(row["line"], tmp_path) if e["kind"] != "scsi_context"]
        if not events or events[0]["kind"] != row["kind"]:
            continue
        event = events[0]
        fields = {k: event.get(k) for k in set(EVENT_FIELDS) | set(PATH_FIELDS)}
        transport = transport_of_driver(event.get("driver"))
        origin = refine(attribute(fields)[0], transport, transport in VIRTUAL_TRANSPORTS)
        # an NVMe drive is its own controller: a fault of that controller is the drive's
        # (the RHEL 6 driver names the drive by its PCI function, not nvmeN)
        wanted = "device" if row["origin"] == "adapter" and (event.get("nvme_ctrl") or event.get("family") == "nvme") \
            else row["origin"]
        if origin == wanted or (origin == "none" and row["class"] == "consequence"):
            agree += 1
        else:
            disagree.append(f"{row['id']}: {origin} (catalogue: {row['origin']})")
    with capsys.disabled():
        print(f"\norigins agree with the catalogue on {agree}/{agree + len(disagree)} rows")
        for line in disagree:
            print("  " + line)
    assert agree >= 0.9 * (agree + len(disagree))
