"""Decode the raw numbers events carry (result words, sense bytes, CDBs, taskfiles) into fields.

The grammars capture what a line says; the decoders in diagdisk.decode say what it means. This step
runs once per merged event, after stitching, so a CDB printed on its own line still fills the LBA of
the sense report it belongs to.
"""

from __future__ import annotations

from ..decode import DecodeError
from ..decode.cdb import decode_cdb_named, decode_cdb_text
from ..decode.result import decode_result
from ..decode.sense import decode_sense

# What a kernel message means in sense terms when it names the condition instead of printing it.
_ALIAS_SENSE = {
    ("sense", "power_on_reset"): (0x6, 0x29, 0x00),
    ("sense", "mode_parameters_changed"): (0x6, 0x2A, 0x01),
}
_DRIVER_SENSE = "DRIVER_SENSE"


_MEDIA_ERROR_BITS = frozenset({"UNC", "IDNF", "AMNF"})
# what an event must hold for there to be anything to decode
_RAW_FIELDS = frozenset({"result", "sense_hex", "cdb_hex", "taskfile"})


def has_raw_fields(event: dict) -> bool:
    """Whether enrich_event has anything to decode or add in this event."""
    return bool(_RAW_FIELDS.intersection(event)) or (event.get("kind"), event.get("detail")) in _ALIAS_SENSE


def enrich_event(event: dict) -> dict:
    if not has_raw_fields(event):
        return event
    event.pop("_signature", None)  # decoding adds fields its plan did not give
    constants = _ALIAS_SENSE.get((event.get("kind"), event.get("detail")))
    if constants:
        for key, value in zip(("sense_key", "asc", "ascq"), constants):
            event.setdefault(key, value)
    if event.get("result") is not None and event.get("host_byte") is None:
        try:
            decoded = decode_result(event["result"])
            event["host_byte"] = decoded.host_byte_name
            event["driver_byte"] = decoded.driver_byte_name
            if decoded.status_name:
                event.setdefault("status", decoded.status_name)
        except DecodeError:
            pass
    if event.get("sense_hex"):
        try:
            sense = decode_sense(bytes.fromhex(event["sense_hex"].replace(" ", "")))
            for key in ("sense_key", "asc", "ascq", "fru_code"):
                if event.get(key) is None and getattr(sense, key) is not None:
                    event[key] = getattr(sense, key)
            if event.get("sector") is None and sense.information is not None:
                event["sector"] = sense.information
            event.setdefault("deferred", not sense.current)
        except (DecodeError, ValueError):
            pass
    if event.get("cdb_hex") and event.get("opcode") is None:
        cdb = _decode_printed_cdb(event.get("cdb_name"), event["cdb_hex"])
        if cdb is not None:
            event["opcode"] = cdb.opcode
            event.setdefault("op", cdb.name.split("(")[0].strip().upper() if cdb.name else None)
            if event.get("sector") is None and cdb.lba is not None:
                event["cdb_lba"] = cdb.lba
    if event.get("taskfile"):
        _enrich_taskfile(event)
    return event


def _decode_printed_cdb(name: str | None, printed: str):
    """The CDB a kernel line printed (the grammar checked it is hex bytes), with its name when given."""
    try:
        data = bytes.fromhex(printed)
    except ValueError:
        data = None
    if data:
        try:
            return decode_cdb_named(data, name)
        except DecodeError:
            pass
    for text in (f"{name or ''} {printed}".strip(), printed):
        try:
            return decode_cdb_text(text)
        except DecodeError:
            continue
    return None


# Taskfiles decoded, by their text: libata retries a failing command, and its registers (the LBA
# among them) come back the same. Emptied when this large.
_TASKFILES: dict[str, object] = {}
_MAX_TASKFILES = 4096


def _decoded_taskfile(part: str):
    """decode_ata_taskfile(part, kind="res"), remembered (the caller must not change it); None
    when it is no taskfile."""
    found = _TASKFILES.get(part, False)
    if found is False:
        from ..decode.ata import decode_ata_taskfile
        try:
            found = decode_ata_taskfile(part, kind="res")
        except DecodeError:
            found = None
        if len(_TASKFILES) >= _MAX_TASKFILES:
            _TASKFILES.clear()
        _TASKFILES[part] = found
    return found


def _enrich_taskfile(event: dict) -> None:
    """The field holds the registers printed after "res" (grammars/ata.lark TASKFILE), without the
    word itself; a text that still carries "cmd" or "res" is read as it says."""
    for part in str(event["taskfile"]).split("|"):
        taskfile = _decoded_taskfile(part)
        if taskfile is None:
            continue
        if taskfile.kind == "res":
            if not event.get("ata_status"):
                event["ata_status"] = " ".join(taskfile.status_bits)
            if not event.get("ata_error"):
                event["ata_error"] = " ".join(taskfile.error_bits)
            if taskfile.emask is not None and event.get("emask") is None:
                event["emask"] = taskfile.emask
            # the LBA a media error names (UNC, IDNF, AMNF) is a failing sector; an interface CRC
            # error or an aborted command names the transfer the link broke, not a bad sector
            if event.get("sector") is None and taskfile.lba is not None \
                    and _MEDIA_ERROR_BITS.intersection(taskfile.error_bits):
                event["sector"] = taskfile.lba
        elif taskfile.kind == "cmd" and not event.get("ata_command") and taskfile.command_name:
            event["ata_command"] = taskfile.command_name
