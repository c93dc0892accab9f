"""Merge the lines of one report into one event.

The kernel prints one failed command over several lines (result, sense key, ASC/ASCQ, CDB; libata's
exception, failed command, taskfile, status, error). A detail line merges into the report opened
just before it in the same source when their identities agree; a line that names no device takes
the identity of the report it joins, and gives its own to a report that had none. A report whose
lines all keep its kind (a PCIe AER report) is continued by the lines events.CONTINUATION_DETAILS
names, and by the lines of the unit it names as its error's source, printed under their own prefix.
"""

from __future__ import annotations

from .events import (CONTINUATION_DETAILS, DETAIL_KINDS, GROUP_KINDS, IDENTITY_FIELDS, MERGE_WINDOW_LINES,
                     OPENING_DETAILS, SOURCE_FIELDS)

# kinds an open report may turn into when a line of this kind joins it
_PROMOTING = {
    "scsi_result": {"scsi_context", "scsi_error_report"},
    "sense": {"scsi_context", "scsi_error_report", "scsi_result"},
}
_IDENTITY_KEYS = (*IDENTITY_FIELDS, "host", "target", "lun", "tag")
# kinds that are only a frame for others and are dropped when nothing joined them
_FRAME_ONLY = {"scsi_context", "sense_detail", "cdb", "ata_detail", "result_detail", "scsi_error_report"}


def _names_the_sense_of(group: dict, event: dict) -> bool:
    """sd says 'Unit Not Ready' (2.6.9: 'sdb: Unit Not Ready, sense:') and then prints the sense it
    got: the sense lines belong to the report the announcement opened."""
    return (event["kind"] == "sense" and group["kind"] == "sense" and group.get("detail") == "not_ready"
            and group.get("asc") is None and event.get("sense_key") in (None, group.get("sense_key")))


def _adapter_wide(group: dict) -> bool:
    return group["kind"] == "reset" and group.get("detail") in ("host", "controller")


_IDENTITY_KEY_SET = frozenset(_IDENTITY_KEYS)


def _compatible(group: dict, event: dict) -> bool:
    for key in _IDENTITY_KEY_SET.intersection(event):
        a = group.get(key)
        if a is not None and a != event[key] and event[key] is not None:
            return False
    return True


def _from_source(group: dict, event: dict) -> bool:
    """Whether `event`, which names no source of its own, was printed by the unit `group` names as
    the source of its error (SOURCE_FIELDS); 2.6.32/3.10 AER names it without its PCI domain."""
    if group["kind"] != event["kind"]:
        return False
    for source_field, identity_field in SOURCE_FIELDS.items():
        source, unit = group.get(source_field), event.get(identity_field)
        if source and unit and event.get(source_field) is None and (unit == source or unit.endswith(":" + source)):
            return True
    return False


def _continues(group: dict, event: dict) -> bool:
    """Whether `event` is a later line of `group`, a report of its own kind (see CONTINUATION_DETAILS)."""
    kind = event["kind"]
    return group["kind"] == kind and ((kind, event.get("detail")) in CONTINUATION_DETAILS
                                      or (kind, group.get("detail")) in OPENING_DETAILS
                                      or _from_source(group, event))


# fields of a line that joins a report that the report keeps its own of (and the "_" ones)
_NOT_MERGED = frozenset({"kind", "detail", "line", "raw", "source", "family", "grammar"})
# fields that name one of several bits: a report lists the bits each of its lines names
_GATHERED = frozenset({"aer_status"})
# lines of a report kept with its first one as its text (its evidence shows them all)
_MAX_REPORT_LINES = 8


def _merge_into(group: dict, event: dict) -> None:
    group.pop("_signature", None)  # the report's fields are no longer those of its first line
    lines = group.setdefault("_more_lines", {})
    if len(lines) < _MAX_REPORT_LINES - 1 and event.get("raw") and event["line"] != group["line"]:
        lines.setdefault(event["line"], event["raw"])  # a line that held two messages is shown once
    for key, value in event.items():
        # most fields of a joining line the report has already: looked up first, the cheaper test
        current = group.get(key)
        if current is None:
            if key not in _NOT_MERGED and key[0] != "_":
                group[key] = value
        elif key in _GATHERED and value is not None and value not in current.split(", "):
            group[key] = f"{current}, {value}"


_SCSI_ERRORS = {"scsi_result", "sense", "timeout", "abort", "offline", "ata_exception", "ata_detail", "nvme_error"}
# a block-layer or filesystem error this many lines after a SCSI/ATA error is that error's consequence
_CONSEQUENCE_LINES = 3


# kinds whose report stays open for detail lines that follow it
MAY_OPEN = GROUP_KINDS | DETAIL_KINDS | {"abort", "timeout", "reset"}


class Stitcher:
    """Events of one source, fed in line order -> merged events, each handed out once final.

    A report stays open while detail lines may still join it; it is final when the next report
    starts, when MERGE_WINDOW_LINES pass without a line joining it, or at `close()`.
    """

    def __init__(self) -> None:
        self._open: dict | None = None
        self._last_error_line: int | None = None

    def feed(self, event: dict, owned: bool = False) -> list[dict]:
        """The reports that became final with this event (usually none or one). An `owned` event
        (the caller keeps no use for it) becomes the report it opens; others are copied."""
        done: list[dict] = []
        kind = event["kind"]
        open_group = self._open
        if open_group is None and kind not in MAY_OPEN:
            # nothing open to join, and this kind opens nothing: a report of its own (most of a storm)
            group = event if owned else dict(event)
            group["_last_line"] = event["line"]
            self._finish(group, done)
            return done
        if open_group is not None and event["line"] - open_group["_last_line"] > MERGE_WINDOW_LINES:
            self._close(done)
            open_group = None
        if open_group is not None and (_compatible(open_group, event) or _from_source(open_group, event)):
            # the CDB printed after a host reset is the command that triggered it, not the reset's unit
            joins = (kind in DETAIL_KINDS and kind != "scsi_context" and not _adapter_wide(open_group)
                     or _continues(open_group, event))
            promotes = open_group["kind"] in _PROMOTING.get(kind, ()) and (
                kind != "sense" or open_group.get("sense_key") is None)
            fills_identity = (kind == "scsi_context" and not any(
                open_group.get(k) is not None for k in IDENTITY_FIELDS))
            if joins or promotes or fills_identity or _names_the_sense_of(open_group, event):
                if promotes:
                    open_group.pop("_signature", None)
                    open_group["kind"] = kind
                    if event.get("detail"):
                        open_group["detail"] = event["detail"]
                elif (kind, open_group.get("detail")) in OPENING_DETAILS and event.get("detail") \
                        and (kind, event["detail"]) not in CONTINUATION_DETAILS:
                    open_group["detail"] = event["detail"]  # the first line that says what happened
                _merge_into(open_group, event)
                open_group["_last_line"] = event["line"]
                return done
        self._close(done)
        group = event if owned else dict(event)
        group["_last_line"] = event["line"]
        if kind in MAY_OPEN:
            self._open = group
        else:
            self._finish(group, done)
        return done

    @property
    def has_open(self) -> bool:
        """Whether a report is open (pass_alone would end it)."""
        return self._open is not None

    def pass_alone(self, kind: str, line: int) -> list[dict]:
        """An event of a kind that opens no report passes (see feed): the open report ends."""
        done: list[dict] = []
        self._close(done)
        return done

    def is_consequence(self, kind: str, line: int) -> bool:
        """After pass_alone, what _finish decides for such an event: whether it is the consequence of
        the error just before it (and, if it is an error itself, that it is now the last one)."""
        if kind in _SCSI_ERRORS:
            self._last_error_line = line
            return False
        return (kind in ("io_error", "fs_error") and self._last_error_line is not None
                and line - self._last_error_line <= _CONSEQUENCE_LINES)

    def close(self) -> list[dict]:
        done: list[dict] = []
        self._close(done)
        return done

    def _close(self, done: list[dict]) -> None:
        if self._open is not None:
            group, self._open = self._open, None
            self._finish(group, done)

    def _finish(self, group: dict, done: list[dict]) -> None:
        kind = group["kind"]
        if kind in _FRAME_ONLY and (group.get("asc") is not None or group.get("sense_key") is not None
                                    or group.get("sense_hex")):
            kind = group["kind"] = "sense"  # sense detail with no key line of its own: still a sense report
            group.pop("_signature", None)
        elif kind == "ata_detail" and (group.get("ata_error") or group.get("serror")):
            kind = group["kind"] = "ata_exception"  # its header came later (a journal printed newest first)
            group.pop("_signature", None)
        last_line = group.pop("_last_line")
        more = group.pop("_more_lines", None)
        if more:
            # a report's text is all its lines: the sense key or libata's error bits are what tell
            group["raw"] = "\n".join([group["raw"], *more.values()])
        if kind in _SCSI_ERRORS:
            self._last_error_line = last_line
        elif kind in ("io_error", "fs_error") and self._last_error_line is not None \
                and group["line"] - self._last_error_line <= _CONSEQUENCE_LINES:
            group["consequence"] = True
            group.pop("_signature", None)
        if kind not in _FRAME_ONLY:
            done.append(group)


def stitch(events: list[dict]) -> list[dict]:
    """Events of one source, in line order -> merged events."""
    stitcher = Stitcher()
    merged = [group for event in events for group in stitcher.feed(event)]
    return merged + stitcher.close()
