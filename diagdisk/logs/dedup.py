"""Count once what several logs of one host both hold.

A sosreport holds the kernel's messages more than once: syslog writes them to var/log/messages (and
on Debian to syslog and kern.log), the journal keeps them, and dmesg shows the ring buffer of the
current boot. Reading every copy would count each disk error two or three times. Logs are taken in
order of trust, rotations of one log together (messages, syslog, kern.log, journal, dmesg -T,
dmesg); an event of a later log is dropped when an earlier one holds the same event: the same
fields, at the same time (within WINDOW seconds; a dmesg without wall-clock stamps is placed in
time by the events it shares with the earlier logs). Each event of an earlier log stands for at
most one copy in each later log, so two real errors in one second stay two.

Works on records (diagdisk.logs.records): a record of a later log loses the copies found, and is dropped
when none is left; each such log is told how many of its events were already counted.
"""

from __future__ import annotations

import bisect
import re
import statistics
from collections import defaultdict

from .events import NON_EVENT_KINDS

WINDOW = 2.0
# wall-clock stamps placed through an estimated boot time carry that estimate's error too
_UPTIME_WINDOW = 3.0
# a log's family: its name less the rotation suffix; earlier families are trusted more
_FAMILIES = (("syslog", r"(?:^|/)messages"), ("syslog", r"(?:^|/)syslog"), ("kern", r"(?:^|/)kern\.log"),
             ("journal", r"journal"), ("dmesg_wall", r"dmesg_-T"), ("dmesg", r"(?:^|/)dmesg"))
_ROTATION = re.compile(r"(?:[.-]\d+)*(?:\.gz|\.xz|\.bz2)?$")


def log_family(name: str) -> tuple[int, str]:
    """(trust rank, family) of a log by its name: rotations of one log are one family. Each journal
    print is a family of its own: sos keeps the whole journal and this boot's and the last boot's
    (journalctl --no-pager, --boot, --boot -1), which overlap; the whole one comes first."""
    for rank, (family, pattern) in enumerate(_FAMILIES):
        if re.search(pattern, name):
            return rank, (name if family == "journal" else family)
    return len(_FAMILIES), _ROTATION.sub("", name)


def _signature(record: dict) -> frozenset:
    return frozenset((k, v) for k, v in record.items()
                     if not k.startswith("_") and k not in ("source", "line", "raw", "time", "t", "clock",
                                                            "time_quality", "repeat"))


def deduplicate(records: list[dict]) -> tuple[list[dict], dict[tuple[str, str], int]]:
    """The records with the copies of events an earlier log holds taken out, and per (input,
    source) the number of its events found to be copies (attach and other topology lines are taken
    out alike, but are no events to count). Logs of two inputs hold no copies of each other."""
    by_input: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        by_input[record.get("_input", "")].append(record)
    kept, copies = [], {}
    for origin in sorted(by_input):
        mine, found = _deduplicate_one_input(by_input[origin])
        kept += mine
        for source, count in found.items():
            copies[(origin, source)] = count
    order = {id(record): index for index, record in enumerate(records)}
    kept.sort(key=lambda record: order[id(record)])
    return kept, dict(copies)


def _deduplicate_one_input(records: list[dict]) -> tuple[list[dict], dict[str, int]]:
    families: dict[tuple, list[dict]] = defaultdict(list)
    for record in records:
        families[log_family(record["source"])].append(record)
    if len(families) < 2:
        return records, {}
    ordered = sorted(families)
    by_signature: dict[frozenset, list[list[dict]]] = defaultdict(lambda: [[] for _ in ordered])
    for index, family in enumerate(ordered):
        for record in families[family]:
            by_signature[_signature(record)][index].append(record)
    copies: dict[str, int] = defaultdict(int)
    offsets = {index: _boot_offset(by_signature, index) for index in range(1, len(ordered))}
    for groups in by_signature.values():
        for index in range(1, len(ordered)):
            earlier = [r for group in groups[:index] for r in group]
            if not earlier or not groups[index]:
                continue
            pool = _times(earlier, 0.0)
            for record in groups[index]:
                offset = offsets[index] if _uptime(record) else 0.0
                if offset is None:
                    continue
                found = _take_copies(record, pool, offset, _UPTIME_WINDOW if _uptime(record) else WINDOW)
                if found and record["kind"] not in NON_EVENT_KINDS:
                    copies[record["source"]] += found
    kept = [r for r in records if r["repeat"] > 0]
    return kept, dict(copies)


def _uptime(record: dict) -> bool:
    return str(record.get("clock", "")).startswith("uptime:")


def _times(records: list[dict], offset: float) -> list[list[float]]:
    """[second, copies it can still stand for] of wall-clock events, in time order."""
    pool = [[t + offset, count] for record in records if record.get("clock") == "wall"
            for t, count in record.get("_runs") or ()]
    pool.sort()
    return pool


def _take_copies(record: dict, pool: list[list[float]], offset: float, window: float) -> int:
    """Take out of `record` its events that an event of `pool` stands for; how many."""
    if record.get("clock") not in ("wall",) and not _uptime(record):
        return 0
    found = 0
    runs = []
    starts = [p[0] for p in pool]
    for t, count in record.get("_runs") or ():
        when = t + offset
        left = count
        index = bisect.bisect_left(starts, when - window)
        while left and index < len(pool) and pool[index][0] <= when + window:
            take = min(left, pool[index][1])
            pool[index][1] -= take
            left -= take
            found += take
            index += 1
        if left:
            runs.append((t, left))
    if found:
        record["repeat"] -= found
        record["_runs"] = runs
    return found


def _boot_offset(by_signature, index: int) -> float | None:
    """Epoch seconds of the boot that a log's uptime stamps count from, estimated by the events it
    shares with the earlier logs: the last copy of each is the same event in both."""
    guesses = []
    for groups in by_signature.values():
        later = [r for r in groups[index] if _uptime(r) and r.get("_runs")]
        earlier = [r for group in groups[:index] for r in group if r.get("clock") == "wall" and r.get("_runs")]
        if later and earlier:
            guesses.append(max(t for r in earlier for t, _ in r["_runs"])
                           - max(t for r in later for t, _ in r["_runs"]))
    if not guesses:
        return None
    middle = statistics.median(guesses)
    # the guesses must agree: logs that share no stretch of time give scattered ones
    agreeing = [g for g in guesses if abs(g - middle) <= _UPTIME_WINDOW]
    return middle if len(agreeing) * 2 > len(guesses) else None
