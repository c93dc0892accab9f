"""Score diagdisk's reading of real storage log lines (grammars/catalogue/real/), tune and check apart.

Every entry of the catalogue of real lines is one line copied from a public post, labelled with the
event an engineer reads in it. Each line is read alone, through diagdisk's own reader (prefilter,
framing, grammars, enrichment), the way tests/logs/test_catalogue.py reads the format catalogue:

- a fault or consequence line scores when one of its events is the labelled kind and carries the
  labelled identity (device, H:C:T:L, ata port, NVMe controller, md array, PCI function, iSCSI
  session/connection ...);
- a benign or info line scores when none of its events counts as an error: no event, or only
  events that describe the setup (attach, info, ...) or report no fault (a link up, a path back).

The score is printed per part (tune, check), family and era. The check part is only ever counted:
this script never prints a check line or what went wrong with it.

    python benchmarks/real_lines.py               # both parts
    python benchmarks/real_lines.py --part tune --misses 40   # and 40 tune lines that miss
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import re
import sys
import tempfile
from functools import cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from diagdisk.logs.events import EVENT_KINDS, NON_EVENT_KINDS, is_informational  # noqa: E402
from diagdisk.logs.reader import LogReader, as_event  # noqa: E402

REAL = ROOT / "grammars" / "catalogue" / "real"
PARTS = ("tune", "check")
FAMILIES = ("scsi", "ata_usb", "hba", "fc_iscsi_virt", "nvme_pci_md_dm_fs", "daemons")
CLASSES = ("fault", "consequence", "benign", "info")
ERROR_CLASSES = ("fault", "consequence")
IDENTITY_KEYS = ("hctl", "host", "channel", "target", "lun", "device", "partition", "ata_port", "ata_link",
                 "nvme_ctrl", "md", "dm", "usb_port", "pci", "adapter", "iscsi_session", "iscsi_conn")
ENTRY_KEYS = {"line", "source", "family", "era", "class", "kind", "identity"}
CHECK_SHARE = 0.33


def part_of(family: str, line: str) -> str:
    """The split: a hash of family and line, so an entry's part never depends on the others."""
    digest = hashlib.sha1((family + "\n" + line).encode()).hexdigest()
    return "check" if int(digest[:8], 16) / 2**32 < CHECK_SHARE else "tune"


def load(part: str) -> list[dict]:
    entries = []
    for path in sorted((REAL / part).glob("*.yml")):
        entries.extend(yaml.safe_load(path.read_text(encoding="utf-8")) or [])
    return entries


def era_group(era: str) -> str:
    """2.4, 2.6, 3.x, 4.x, 5.x, 6.x from an entry's era ('2.6.18', '5.x', '6.8')."""
    match = re.match(r"(\d+)\.(\d+)", str(era))
    if not match:
        return f"{str(era).split('.')[0]}.x"
    major, minor = match.groups()
    return f"{major}.{minor}" if major == "2" else f"{major}.x"


@cache
def _reader() -> LogReader:
    return LogReader()


def read_line(line: str, tmp_dir: Path) -> list[dict]:
    path = tmp_dir / "line.log"
    path.write_text(line + "\n", encoding="utf-8")
    result = _reader().read(path, "real")
    return [as_event(e) for e in result.events if as_event(e)["kind"] != "scsi_context"]


def is_error(event: dict) -> bool:
    return event["kind"] not in NON_EVENT_KINDS and not is_informational(event)


def judge(entry: dict, tmp_dir: Path) -> str | None:
    """None when diagdisk reads the line as the entry says, else what went wrong."""
    events = read_line(entry["line"], tmp_dir)
    if entry["class"] not in ERROR_CLASSES:
        errors = [e for e in events if is_error(e)]
        return None if not errors else "read as an error: " + ", ".join(_kind(e) for e in errors)
    if not events:
        return "not read"
    matching = [e for e in events if e["kind"] == entry["kind"]]
    if not matching:
        return f"kind {', '.join(_kind(e) for e in events)} != {entry['kind']}"
    wanted = {k: v for k, v in (entry.get("identity") or {}).items() if k in IDENTITY_KEYS}
    best = None
    for event in matching:
        wrong = [f"{key}={event.get(key)!r} (want {value!r})" for key, value in wanted.items()
                 if str(event.get(key)) != str(value)]
        if not wrong:
            return None
        best = best or "; ".join(wrong)
    return best


def _kind(event: dict) -> str:
    return event["kind"] + ("/" + event["detail"] if event.get("detail") else "")


def score(entries: list[dict], tmp_dir: Path) -> tuple[dict, list[tuple[dict, str]]]:
    """table[(axis, name, side)] = [ok, total], side 'error' (fault+consequence) or 'benign' (benign+info)."""
    table: dict = collections.defaultdict(lambda: [0, 0])
    misses = []
    for entry in entries:
        problem = judge(entry, tmp_dir)
        side = "error" if entry["class"] in ERROR_CLASSES else "benign"
        for key in (("all", "all", side), ("family", entry["family"], side),
                    ("era", era_group(entry["era"]), side)):
            table[key][0] += problem is None
            table[key][1] += 1
        if problem is not None:
            misses.append((entry, problem))
    return table, misses


def percent(ok: int, total: int) -> str:
    return f"{100.0 * ok / total:5.1f}%" if total else "   - "


def report(part: str, table: dict) -> list[str]:
    lines = [f"{part}: fault+consequence read as the right event and identity | benign+info not errors"]
    def row(axis: str, name: str) -> str:
        e_ok, e_n = table.get((axis, name, "error"), (0, 0))
        b_ok, b_n = table.get((axis, name, "benign"), (0, 0))
        return f"  {name:20} {e_ok:5}/{e_n:<5} {percent(e_ok, e_n)}   {b_ok:5}/{b_n:<5} {percent(b_ok, b_n)}"
    lines.append(row("all", "all"))
    for axis in ("family", "era"):
        names = sorted({name for a, name, _ in table if a == axis})
        lines.append(f" by {axis}:")
        lines.extend(row(axis, name) for name in names)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=PARTS, action="append", help="default: both")
    parser.add_argument("--misses", type=int, default=0, metavar="N",
                        help="also print N tune lines that miss, with what went wrong (never check lines)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for part in args.part or PARTS:
            table, misses = score(load(part), Path(tmp))
            print("\n".join(report(part, table)))
            if part == "tune" and args.misses:
                for entry, problem in misses[:args.misses]:
                    print(f"  miss [{entry['family']}/{entry['class']}/{entry['kind']}] {entry['line']!r}: {problem}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
