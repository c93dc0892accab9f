"""`diagdisk decode ...`: decode pasted bytes and log lines for people (text) or tools (JSON).

Every subcommand takes its input as arguments, or `-` to read one item per line from stdin and
print one result per line (JSON Lines with --format json), so thousands decode in one process.
Malformed input exits 2 with a one-line message; in `-` mode the bad line gets an error result
and the rest are still decoded, and the exit status is 2 if any line failed. `decode line` exits 1
when no grammar accepts the line (in `-` mode: when none of the lines matched), as grep does.
Text output is escaped (safetext): a pasted line may hold terminal escape sequences.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click

from diagdisk.cli.main import debug_option
from diagdisk.decode import DecodeError, parse_hex
from diagdisk.errors import DiagdiskError, ExitCode
from diagdisk.safetext import escape_lines

# `decode line`: the line named no event (grep's "no match").
NO_MATCH = 1
_EXIT_CODES = """\b
Exit codes:
  0    decoded
  2    malformed input (with '-': any line malformed)
  70   internal error"""
_LINE_EXIT_CODES = """\b
Exit codes:
  0    the line became at least one event (with '-': at least one line did)
  1    no grammar accepts the line (with '-': none of the lines), as grep's no match
  2    no line given
  70   internal error"""


class NoEvent(DiagdiskError):
    """`decode line`: no grammar accepts the line."""


class DecodeUsageError(click.ClickException):
    exit_code = ExitCode.BAD_INPUT

    def show(self, file: Any = None) -> None:
        click.echo(f"diagdisk: error: {self.format_message()}", err=True)


def _format_option(command: Callable) -> Callable:
    return click.option(
        "--format", "output_format", type=click.Choice(["text", "json"]), default="text",
        show_default=True, help="text for people, json (JSON Lines with '-') for tools.",
    )(command)


def _decode_sense_item(item: str) -> tuple[dict[str, Any], str]:
    from diagdisk.decode.sense import decode_sense

    sense = decode_sense(parse_hex(item))
    lines = [sense.summary()]
    if sense.sense_key_specific:
        lines.append(f"  sense key specific: {_compact(sense.sense_key_specific)}")
    if sense.command_specific:
        lines.append(f"  command-specific information: 0x{sense.command_specific:X}")
    flags = [name for name in ("filemark", "eom", "ili") if getattr(sense, name)]
    if flags:
        lines.append("  flags: " + " ".join(flags).upper())
    for descriptor in sense.descriptors:
        lines.append(f"  descriptor 0x{descriptor['type']:02X} {descriptor['name']}: "
                     f"{descriptor['bytes']}")
    if sense.ata_status_return:
        lines.append(f"  ATA status return: {_compact(sense.ata_status_return)}")
    return sense.to_dict(), "\n".join(lines)


def _decode_cdb_item(item: str) -> tuple[dict[str, Any], str]:
    from diagdisk.decode.cdb import decode_cdb_text

    cdb = decode_cdb_text(item)
    return cdb.to_dict(), cdb.summary()


def _decode_ata_item(item: str) -> tuple[dict[str, Any], str]:
    from diagdisk.decode.ata import decode_ata_taskfile

    taskfile = decode_ata_taskfile(item)
    return taskfile.to_dict(), taskfile.summary()


def _decode_result_item(item: str) -> tuple[dict[str, Any], str]:
    from diagdisk.decode.result import decode_result

    result = decode_result(item)
    return result.to_dict(), result.summary()


def _decode_nvme_item(item: str) -> tuple[dict[str, Any], str]:
    from diagdisk.decode.nvme import describe_nvme_status, parse_nvme_status

    decoded = parse_nvme_status(item)
    return decoded, describe_nvme_status(decoded)


def _decode_asc_item(item: str) -> tuple[dict[str, Any], str]:
    from diagdisk.decode.asc_ascq import OBSOLETE_MEANINGS, describe, format_asc_ascq, is_vendor_specific, parse_asc_ascq

    codes = parse_asc_ascq(item)
    if codes is None:
        raise DecodeError(f"not an ASC/ASCQ: {item!r} (give the two bytes in hex, '11 04' or '11/04', or the "
                          f"text a kernel printed)")
    asc, ascq = codes
    text = describe(asc, ascq)
    data = {"asc": asc, "ascq": ascq, "asc_ascq": format_asc_ascq(asc, ascq), "text": text,
            "obsolete": (asc, ascq) in OBSOLETE_MEANINGS,
            "vendor_specific": text == "Vendor specific" and is_vendor_specific(asc, ascq)}
    return data, f"{format_asc_ascq(asc, ascq)}: {text or 'not assigned by T10'}"


def _decode_line_item(item: str) -> tuple[Any, str]:
    # Imported lazily: the grammars cost a parser build that the byte decoders never need.
    # ImportError is also caught around the call because the grammar module loads its helpers
    # on first use.
    try:
        from diagdisk.logs.grammar import parse_line

        events = parse_line(item)
    except ImportError as error:
        raise DecodeError(f"the log line grammars are not available: {error}") from error
    if not events:
        raise NoEvent("no event: no grammar accepts this line")
    events = [_in_field_order(event) for event in events]
    return events, "\n".join(_event_text(event) for event in events)


# fields that hold a code: shown in hex, as the kernel and the standards write them
_HEX_FIELDS = {"opcode", "emask", "result", "loginfo", "fault_code", "host_byte_code", "driver_byte_code",
               "fru_code"}
# the pasted line itself, and how it was read: not repeated in the text
_NOT_SHOWN = {"raw", "family", "grammar"}


def _in_field_order(event: dict[str, Any]) -> dict[str, Any]:
    """The event's fields in the order events.py declares them (kind first), whatever the grammar
    that read the line set first; fields it does not declare come last, by name."""
    from diagdisk.logs.events import EVENT_FIELDS

    order = {name: index for index, name in enumerate(["kind", *(f for f in EVENT_FIELDS if f != "kind")])}
    return dict(sorted(event.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))


def _event_text(event: dict[str, Any]) -> str:
    """One event as `key=value` pairs, codes in hex and with their meaning: a sense key, ASC/ASCQ,
    an NVMe status (SCT/SC)."""
    from diagdisk.decode.asc_ascq import describe, format_asc_ascq
    from diagdisk.decode.nvme import STATUS_CODE_TYPES, nvme_status_name
    from diagdisk.decode.sense import SENSE_KEY_NAMES

    parts = []
    for key, value in event.items():
        if value in (None, "", []) or key in _NOT_SHOWN or key == "ascq" and "asc" in event:
            continue
        if key == "sense_key" and isinstance(value, int):
            shown = f"0x{value:X} ({SENSE_KEY_NAMES.get(value, 'unknown')})"
        elif key == "asc" and isinstance(value, int) and isinstance(event.get("ascq"), int):
            key, code = "asc_ascq", (value, event["ascq"])
            shown = f"{format_asc_ascq(*code)} ({describe(*code) or 'not assigned by T10'})"
        elif key == "sct" and isinstance(value, int):
            shown = f"0x{value:X} ({STATUS_CODE_TYPES.get(value, 'Reserved')})"
        elif key == "sc" and isinstance(value, int):
            sct = event.get("sct")
            name = nvme_status_name(sct, value) if isinstance(sct, int) else None
            shown = f"0x{value:02X}" + f" ({name or 'not assigned'})" * isinstance(sct, int)
        elif key in _HEX_FIELDS and isinstance(value, int) and not isinstance(value, bool):
            shown = f"0x{value:X}"
        else:
            shown = str(value)
            if " " in shown or not shown:
                shown = json.dumps(shown, ensure_ascii=False)
        parts.append(f"{key}={shown}")
    return " ".join(parts)


def _compact(mapping: dict[str, Any]) -> str:
    return ", ".join(f"{key}={value}" for key, value in mapping.items())


def _run(decoder: Callable[[str], tuple[Any, str]], items: tuple[str, ...], output_format: str,
         join_arguments: bool = True) -> None:
    if items == ("-",):
        _run_stream(decoder, output_format)
        return
    if not items:
        raise DecodeUsageError("nothing to decode: give the value as arguments or '-' for stdin")
    item = " ".join(items) if join_arguments else items[0]
    try:
        data, text = decoder(item)
    except NoEvent as nothing:
        if output_format == "json":
            click.echo("[]")
        else:
            click.echo(f"diagdisk: {nothing}", err=True)
        sys.exit(NO_MATCH)
    except DiagdiskError as error:
        raise DecodeUsageError(str(error)) from error
    click.echo(json.dumps(data, default=str) if output_format == "json" else escape_lines(text))


def _run_stream(decoder: Callable[[str], tuple[Any, str]], output_format: str) -> None:
    failures = matched = unmatched = 0
    for raw_line in sys.stdin:
        line = raw_line.strip()
        if not line:
            continue
        try:
            data, text = decoder(line)
        except NoEvent as nothing:
            unmatched += 1
            data, text = [], str(nothing)
        except DiagdiskError as error:
            failures += 1
            if output_format == "json":
                click.echo(json.dumps({"input": line, "error": str(error)}))
            else:
                click.echo(escape_lines(f"error: {error}"))
            continue
        else:
            matched += 1
        if output_format == "json":
            click.echo(json.dumps(data, default=str))
        else:
            click.echo(escape_lines(text.replace("\n", " | ")))
    if failures:
        sys.exit(ExitCode.BAD_INPUT)
    if unmatched and not matched:
        sys.exit(NO_MATCH)


@click.group(name="decode", epilog="""\b
Examples:
  diagdisk decode sense 70 00 03 00 00 00 00 0a 00 00 00 00 11 00
  diagdisk decode cdb 'CDB: Read(10) 28 00 0c 61 a7 e0 00 01 00 00'
  diagdisk decode ata 'res 41/40:00:b8:a8:61/00:00:0c:00:00/40 Emask 0x409 (media error)'
  diagdisk decode result 'hostbyte=DID_OK driverbyte=DRIVER_SENSE'
  diagdisk decode nvme 'sct 0x2 / sc 0x81'
  diagdisk decode asc 11 04
  diagdisk decode line 'sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]'
  grep 'Sense Key' /var/log/messages | diagdisk decode line - --format json

""" + _EXIT_CODES + "\n  1    decode line only: no grammar accepts the line")
@debug_option
def decode() -> None:
    """Decode raw sense data, CDBs, ATA taskfiles, SCSI results, NVMe statuses, ASC/ASCQ codes or one
    log line."""


def _subcommand(name: str, decoder: Callable[[str], tuple[Any, str]], help_text: str,
                metavar: str, example: str, exit_codes: str = _EXIT_CODES) -> None:
    @decode.command(name=name, help=help_text, epilog=f"\b\nExamples:\n  {example}\n  "
                    f"... | diagdisk decode {name} - --format json    one item a line\n\n{exit_codes}")
    @click.argument("items", nargs=-1, metavar=metavar)
    @_format_option
    @debug_option
    def command(items: tuple[str, ...], output_format: str) -> None:
        _run(decoder, items, output_format)



_subcommand(
    "sense", _decode_sense_item,
    "Decode SCSI sense data (fixed 0x70/0x71 or descriptor 0x72/0x73) given as hex bytes.",
    "HEX...|-", "diagdisk decode sense 70 00 03 00 00 00 00 0a 00 00 00 00 11 00",
)
_subcommand(
    "cdb", _decode_cdb_item,
    "Decode a SCSI CDB: operation, LBA and transfer length. Accepts hex bytes or a pasted "
    "'CDB: Read(10) 28 00 ...' / 'Original_CDB[]: ...' line.",
    "HEX...|-", "diagdisk decode cdb 'CDB: Read(10) 28 00 0c 61 a7 e0 00 01 00 00'",
)
_subcommand(
    "ata", _decode_ata_item,
    "Decode a libata taskfile: 'cmd 60/00:08:e0:a7:61/01:00:0c:00:00/40 tag 1 ncq dma 131072 in'"
    " or 'res 41/40:00:b8:a8:61/00:00:0c:00:00/40 Emask 0x409 (media error)'.",
    "TASKFILE...|-", "diagdisk decode ata 'res 41/40:00:b8:a8:61/00:00:0c:00:00/40 Emask 0x409 (media error)'",
)
_subcommand(
    "result", _decode_result_item,
    "Decode a SCSI result: hex as old kernels print it ('27010000') or "
    "'hostbyte=DID_OK driverbyte=DRIVER_SENSE'.",
    "CODE...|-", "diagdisk decode result 27010000",
)
_subcommand(
    "nvme", _decode_nvme_item,
    "Decode an NVMe completion status: the Status Field as the kernel prints it (0x4281) or its code type "
    "and code ('sct 0x2 / sc 0x81', '2/81'), named as the NVMe Base Specification and the kernel's "
    "drivers/nvme/host/constants.c name them, with the DNR and MORE bits.",
    "STATUS|'sct X / sc Y'|-", "diagdisk decode nvme 'sct 0x2 / sc 0x81'",
)
_subcommand(
    "asc", _decode_asc_item,
    "Decode a SCSI additional sense code and qualifier (ASC/ASCQ) given as two hex bytes ('11 04', "
    "'11/04') or as the text a kernel printed; a code T10 withdrew shows its historic meaning, marked "
    "obsolete.",
    "ASC ASCQ|'TEXT'|-", "diagdisk decode asc 11/04",
)
_subcommand(
    "line", _decode_line_item,
    "Run the log grammars on one pasted log line and print the event(s) it becomes.",
    "'LOG LINE'|-", "diagdisk decode line 'sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]'",
    exit_codes=_LINE_EXIT_CODES,
)
