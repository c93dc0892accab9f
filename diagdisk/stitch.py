"""Merge the lines of one report into one event.

The kernel prints one failed command over several lines (result, sense key, ASC/ASCQ, CDB; libata's
exception, failed command, taskfile, status, error). A detail line merges into the report opened
just before it in the same source when their identities agree; a line that names no device takes
the identity of the report it joins, and gives its own to a report that had none.
"""

from __future__ import annotations

from .events import DETAIL_KINDS, GROUP_KINDS, IDENTITY_FIELDS, MERGE_WINDOW_LINES

# kinds an open report may turn into when a line of this kind joins it
_PROMOTING = {
    "scsi_result": {"scsi_context", "scsi_error_report"},
    "sense": {"scsi_context", "scsi_error_report", "scsi_result"},
}
_IDENTITY_KEYS = (*IDENTITY_FIELDS, "host", "target", "lun", "tag")
# kinds that are only a frame for others and are dropped when nothing joined them
_FRAME_ONLY = {"scsi_context", "sense_detail", "cdb", "ata_detail", "result_detail", "scsi_error_report"}


def _adapter_wide(group: dict) -> bool:
    return group["kind"] == "reset" and group.get("detail") in ("host", "controller")


def _compatible(group: dict, event: dict) -> bool:
    for key in _IDENTITY_KEYS:
        a, b = group.get(key), event.get(key)
        if a is not None and b is not None and a != b:
            return False
    return True


def _merge_into(group: dict, event: dict) -> None:
    for key, value in event.items():
        if key in ("kind", "detail", "line", "raw", "source", "family", "grammar") or key.startswith("_"):
            continue
        if group.get(key) is None:
            group[key] = value
    group.setdefault("_lines", []).append((event["line"], event["raw"]))


def stitch(events: list[dict]) -> list[dict]:
    """Events of one source, in line order -> merged events."""
    merged: list[dict] = []
    open_group: dict | None = None
    for event in events:
        kind = event["kind"]
        if open_group is not None and event["line"] - open_group["_last_line"] > MERGE_WINDOW_LINES:
            open_group = None
        if open_group is not None and _compatible(open_group, event):
            # the CDB printed after a host reset is the command that triggered it, not the reset's unit
            joins = kind in DETAIL_KINDS and kind != "scsi_context" and not _adapter_wide(open_group)
            promotes = open_group["kind"] in _PROMOTING.get(kind, ()) and (
                kind != "sense" or open_group.get("sense_key") is None)
            fills_identity = (kind == "scsi_context" and not any(
                open_group.get(k) is not None for k in IDENTITY_FIELDS))
            if joins or promotes or fills_identity:
                if promotes:
                    open_group["kind"] = kind
                    if event.get("detail"):
                        open_group["detail"] = event["detail"]
                _merge_into(open_group, event)
                open_group["_last_line"] = event["line"]
                continue
        group = dict(event)
        group["_last_line"] = event["line"]
        merged.append(group)
        open_group = group if (kind in GROUP_KINDS or kind in DETAIL_KINDS
                               or kind in ("abort", "timeout", "reset")) else None
    for group in merged:
        if group["kind"] in _FRAME_ONLY and (group.get("asc") is not None or group.get("sense_key") is not None
                                             or group.get("sense_hex")):
            group["kind"] = "sense"  # sense detail with no key line of its own: still a sense report
        elif group["kind"] == "ata_detail" and (group.get("ata_error") or group.get("serror")):
            group["kind"] = "ata_exception"  # its header came later (a journal printed newest first)
    _mark_consequences(merged)
    return [g for g in merged if g["kind"] not in _FRAME_ONLY]


_SCSI_ERRORS = {"scsi_result", "sense", "timeout", "abort", "offline", "ata_exception", "ata_detail", "nvme_error"}


def _mark_consequences(merged: list[dict]) -> None:
    """A block-layer I/O error printed right after a SCSI/ATA error is that error's consequence."""
    last_error: dict | None = None
    for event in merged:
        if event["kind"] in _SCSI_ERRORS:
            last_error = event
        elif event["kind"] in ("io_error", "fs_error") and last_error is not None \
                and event["line"] - last_error["_last_line"] <= 3:
            event["consequence"] = True
    for event in merged:
        event.pop("_last_line", None)
