"""Read smartctl output (``--json`` and text ``-a``/``-x``; ATA, SCSI/SAS, NVMe) into a SmartReport.

Sample input::

    >>> report = parse_smartctl_text('''
    ... Device Model:     ST3500630SV
    ... Serial Number:    6QG3AV96
    ... SMART overall-health self-assessment test result: PASSED
    ...   5 Reallocated_Sector_Ct   0x0033   100   100   036    Pre-fail  Always       -       0
    ... 199 UDMA_CRC_Error_Count    0x003e   200   200   000    Old_age   Always       -       21
    ... ''', "sos_commands/ata/smartctl_-a_.dev.sda")
    >>> report.device, report.protocol, report.health, report.flags
    ('sda', 'ata', 'passed', ['udma_crc_errors:21'])

Health policy (what ``SmartReport.health`` means):

- ``failed``: the drive says so (ATA overall-health FAILED, SCSI health status other than OK,
  smartctl exit status bit 3 "disk failing"); a pre-fail attribute is FAILING_NOW (normalized value
  at or below its threshold); an NVMe critical warning bit for available spare below threshold
  (0x01), reliability degraded (0x04) or read-only (0x08); or NVMe media errors > 0 (on an SSD there
  is no cable to blame: the controller has returned unrecoverable data).
- ``warning``: a predictive counter is non-zero: ATA attributes 5 (reallocated), 187 (reported
  uncorrectable), 188 (command timeout), 197 (pending), 198 (offline uncorrectable); SCSI grown
  defect list or uncorrected errors in the error counter log; ATA error log entries; failed
  self-tests; an old-age (usage) attribute FAILING_NOW (a hot drive is not a dying drive, so this
  does not make it ``failed``); other NVMe critical warning bits; NVMe percentage used >= 100.
- ``passed``: the drive reports its health (overall-health PASSED, SCSI OK, JSON smart_status) and
  none of the above holds.
- ``unknown``: no health information at all (e.g. smartctl could not open the device).

Flags that inform but never change health by themselves: ``udma_crc_errors:N`` (attribute 199
counts corrupted frames on the SATA link: a cable, connector or backplane matter, not the disk) and,
for NVMe, ``error_log_entries:N`` (the NVMe error information log also counts host-side command
errors such as unsupported log pages, so the count alone does not indict the drive).

One disk, several reports: sos stores `smartctl -a DEV` and `smartctl -a DEV -j` (and `-l scterc`,
which is no health report and not read). The report that speaks for the disk (``best_report``) is
one that knows the drive's health over one that does not, then the run that prints more (-x over -a
over -H, -i last), then JSON over text; a report that knows less never replaces one that knows more.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import PurePosixPath
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import LarkError

from diagdisk.errors import InputError, NumberOutOfRange, bounded
from diagdisk.larkbuild import build_lark
from diagdisk.resources import grammars_dir

HEALTH_VALUES = ("passed", "warning", "failed", "unknown")

# ATA attribute id -> SmartReport field. Identified by id, not name: old smartctl versions print
# "Unknown_Attribute" for 187/188 on drives missing from their database.
PREDICTIVE_ATTRIBUTES = {
    5: "reallocated_sectors",
    187: "reported_uncorrect",
    188: "command_timeout",
    197: "pending_sectors",
    198: "offline_uncorrectable",
}
CABLE_ATTRIBUTE = (199, "udma_crc_errors")

# NVMe critical warning bits (NVMe base spec, SMART / Health Information log, byte 0).
NVME_SPARE_BELOW_THRESHOLD = 0x01
NVME_TEMPERATURE = 0x02
NVME_RELIABILITY_DEGRADED = 0x04
NVME_READ_ONLY = 0x08
NVME_VOLATILE_BACKUP_FAILED = 0x10
NVME_FAILING_BITS = NVME_SPARE_BELOW_THRESHOLD | NVME_RELIABILITY_DEGRADED | NVME_READ_ONLY

_LBA_IN_ERROR = re.compile(r"\bat LBA = 0x[0-9a-fA-F]+ = (\d+)")
_LEADING_INT = re.compile(r"\d+")
_SOURCE_DEVICE = re.compile(r"\.dev\.(.+?)(?:_-j|_--json.*|_-d_.*)?$")


@dataclass
class SmartReport:
    source: str
    device: str | None = None
    protocol: str | None = None  # ata | scsi | nvme
    model: str | None = None
    serial: str | None = None
    wwn: str | None = None  # "0x5000c500a1b2c3d4", as lsblk and /dev/disk/by-id spell it
    firmware: str | None = None
    health: str = "unknown"
    flags: list[str] = field(default_factory=list)
    drive_health_passed: bool | None = None  # the drive's own verdict, before our policy
    reallocated_sectors: int | None = None
    reported_uncorrect: int | None = None
    command_timeout: int | None = None
    pending_sectors: int | None = None
    offline_uncorrectable: int | None = None
    udma_crc_errors: int | None = None
    failing_attributes: list[str] = field(default_factory=list)  # pre-fail, FAILING_NOW
    usage_attributes_failing: list[str] = field(default_factory=list)
    grown_defects: int | None = None
    scsi_uncorrected_errors: int | None = None
    nvme_critical_warning: int | None = None
    nvme_media_errors: int | None = None
    available_spare: int | None = None
    available_spare_threshold: int | None = None
    percentage_used: int | None = None
    error_log_entries: int | None = None
    self_tests_failed: int | None = None
    failing_lbas: list[int] = field(default_factory=list)
    media_error_entries: int | None = None      # logged errors of the medium (UNC, IDNF, AMNF)
    interface_error_entries: int | None = None  # logged errors of the link (ICRC, ABRT)
    smartctl_exit_status: int | None = None
    messages: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)  # of the smartctl run: from the JSON argv or the file name
    from_json: bool = False
    # the line of the text output each flag (by its name before ':') was read from: (number, text)
    flag_lines: dict[str, tuple[int, str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The ``devices[].smart`` object of the diagdisk.report/1 contract."""
        return {
            "health": self.health,
            "serial": self.serial,
            "wwn": self.wwn,
            "firmware": self.firmware,
            "flags": list(self.flags),
            "source": self.source,
            "evidence": self.evidence(),
        }

    def evidence(self) -> list[dict[str, Any]]:
        """The lines of the smartctl output its flags were read from, in line order, each with the
        names of the flags it gave."""
        cited: dict[tuple[int, str], list[str]] = {}
        for name in (flag.partition(":")[0] for flag in self.flags):
            if name in self.flag_lines:
                cited.setdefault(self.flag_lines[name], []).append(name)
        return [{"line": number, "text": text, "flags": names} for (number, text), names in sorted(cited.items())]

    def as_record(self) -> dict[str, Any]:
        """Every field, for debugging and for readers that want the raw counters."""
        return asdict(self)


# --------------------------------------------------------------------------------------------
# Text lines (grammars/smartctl.lark)


@cache
def line_parser() -> Lark:
    """The smartctl line grammar, built once per process."""
    text = (grammars_dir() / "smartctl.lark").read_text(encoding="utf-8")
    return build_lark(text)


# SMART counters are at most 48-bit raw values, LBAs 64-bit: a number past 2^64 is no reading
_SMART_LIMIT = 1 << 64


def _convert(token: Token) -> Any:
    if token.type in ("NUMBER", "ATTR_ID"):
        return bounded(token.replace(",", ""), _SMART_LIMIT, "smartctl number")
    if token.type == "PERCENT":
        return bounded(token[:-1], _SMART_LIMIT, "smartctl percentage")
    if token.type == "ATTR_NUMBER":
        return None if token == "---" else bounded(token, _SMART_LIMIT, "smartctl attribute value")
    if token.type == "DECIMAL":
        return float(token)
    return str(token)


def parse_line(line: str) -> tuple[str, dict[str, Any]] | None:
    """(kind, fields) for a line the grammar accepts, else None (the line is not of interest).

    >>> parse_line("Elements in grown defect list: 56")
    ('grown_defects', {'count': 56})
    """
    stripped = line.strip()
    if not stripped:
        return None
    try:
        tree = line_parser().parse(stripped)
    except LarkError:
        return None
    try:
        return _fields(tree)
    except NumberOutOfRange:
        return None   # a number no drive reports: the line tells nothing


def _fields(tree: Tree) -> tuple[str, dict[str, Any]]:
    fields: dict[str, Any] = {}
    for child in tree.children:
        # Bare tokens are separators (a table index, the hex LBA beside the decimal one).
        if isinstance(child, Tree):
            tokens = [_convert(t) for t in child.children if isinstance(t, Token)]
            if not tokens:
                fields[str(child.data)] = None
            elif len(tokens) == 1:
                fields[str(child.data)] = tokens[0]
            else:
                fields[str(child.data)] = " ".join(str(t) for t in tokens)
    return str(tree.data), fields


def device_from_source(source_name: str) -> str | None:
    """Device name from a sosreport/bundle file name: smartctl_-a_.dev.sda -> sda, smartctl/nvme0.json -> nvme0."""
    name = PurePosixPath(source_name).name
    match = _SOURCE_DEVICE.search(name)
    if match:
        return match.group(1).replace(".", "/")
    stem = name.split(".", 1)[0]
    if stem.startswith("smartctl") or not stem:
        return None
    return stem


def options_from_source(source_name: str) -> list[str]:
    """The smartctl options a sos file name records (sos mangles `smartctl -a /dev/sda -j` into
    smartctl_-a_.dev.sda_-j); [] for a name that records none (smartctl/sda.json).

    >>> options_from_source("sos_commands/nvme/smartctl_--all_.dev.nvme0n1_-j")
    ['--all', '-j']
    """
    name = PurePosixPath(source_name).name
    start = name.find("smartctl_")
    if start < 0:
        return []
    return [token for token in name[start + len("smartctl_"):].split("_") if token and not token.startswith(".dev.")]


def _options_from_argv(argv: Any) -> list[str]:
    if not isinstance(argv, list) or not argv:
        return []
    return [arg for arg in argv[1:] if isinstance(arg, str) and not arg.startswith("/dev/")]


# How much of the drive's state a smartctl run prints, by its options: -x everything, -a the
# health, attributes and logs, -H/-A/-l one part; -i (identity) and -l scterc (error recovery
# timeouts) no health at all. A run whose options are not known counts as one part: its content tells.
_OPTION_SCOPE = {"-x": 3, "--xall": 3, "-a": 2, "--all": 2, "-H": 1, "--health": 1, "-A": 1,
                 "--attributes": 1, "-l": 1, "--log": 1, "-i": 0, "--info": 0}
_NO_HEALTH_LOGS = ("scterc", "devstat")
_HEALTH_ORDER = {"unknown": 0, "passed": 1, "warning": 2, "failed": 3}


def run_scope(options: list[str]) -> int:
    """3 for -x, 2 for -a, 1 for a run that prints one part of the health (or is not known), 0 for
    one that prints none.

    >>> run_scope(["-a", "-j"]), run_scope(["-l", "scterc"]), run_scope([])
    (2, 0, 1)
    """
    scopes = []
    for index, option in enumerate(options):
        name, _, value = option.partition("=")
        if name not in _OPTION_SCOPE:
            continue
        if name in ("-l", "--log"):
            value = value or (options[index + 1] if index + 1 < len(options) else "")
            scopes.append(0 if value.startswith(_NO_HEALTH_LOGS) else 1)
        else:
            scopes.append(_OPTION_SCOPE[name])
    return max(scopes) if scopes else 1


def report_rank(report: SmartReport) -> tuple[bool, int, bool, int]:
    """Orders the reports of one device, best last: one that knows the drive's health over one that
    does not, then the run that prints more (-x over -a over -H), JSON over text, the worse health."""
    return (report.health != "unknown", run_scope(report.options), report.from_json,
            _HEALTH_ORDER.get(report.health, 0))


def best_report(reports: list[SmartReport]) -> SmartReport:
    """The report that speaks for a device among several (sos stores `smartctl -a`, `-a -j`, ...);
    the first of equals, so the choice follows the order of the sources."""
    return max(reports, key=report_rank)


def _wwn_from_parts(naa: int, oui: int, unit_id: int) -> str:
    return f"0x{naa:x}{oui:06x}{unit_id:09x}"


def _leading_int(text: str | None) -> int | None:
    if text is None:
        return None
    match = _LEADING_INT.match(text.strip())
    return int(match.group()) if match else None


def parse_smartctl_text(text: str, source_name: str) -> SmartReport:
    """SmartReport from smartctl -a/-x text (any smartctl version from 5.3x on)."""
    report = SmartReport(source=source_name, device=device_from_source(source_name),
                         options=options_from_source(source_name))
    vendor = product = None
    labels: dict[str, str] = {}
    scsi_uncorrected = None
    error_count = None
    saw_no_errors = False
    error_entries: set[int] = set()
    self_tests_failed = 0
    saw_self_test = False
    attributes: dict[int, dict[str, Any]] = {}

    attribute_lines: dict[int, tuple[int, str]] = {}
    cite = report.flag_lines.setdefault
    for number, line in enumerate(text.splitlines(), start=1):
        parsed = parse_line(line)
        if parsed is None:
            continue
        kind, fields = parsed
        here = (number, line.strip())
        if kind in ("health", "scsi_health"):
            cite("health_failed", here)
        elif kind == "attribute":
            attribute_lines.setdefault(fields["id"], here)
        elif kind in ("grown_defects", "error_count", "error_lba"):
            cite({"error_count": "error_log_entries", "error_lba": "error_log_entries"}.get(kind, kind), here)
        elif kind == "nvme_health" and fields["nvme_label"] in _NVME_LABEL_FLAGS:
            for flag in _NVME_LABEL_FLAGS[fields["nvme_label"]]:
                cite(flag, here)
        elif kind == "self_test" and "failure" in fields["test_text"].lower():
            cite("self_tests_failed", here)
        elif kind == "scsi_error_counter" and fields["uncorrected"]:
            cite("scsi_uncorrected_errors", here)
        if kind == "info":
            labels.setdefault(fields["label"].lower(), fields["value"])
        elif kind == "wwn":
            if "lu_id" in fields:
                report.wwn = fields["lu_id"].lower()
            else:
                report.wwn = _wwn_from_parts(
                    int(fields["naa"], 16), int(fields["oui"], 16), int(fields["unit_id"], 16)
                )
        elif kind == "health":
            result = fields["result"].rstrip("!").upper()
            if result in ("PASSED", "FAILED"):
                report.drive_health_passed = result == "PASSED"
        elif kind == "scsi_health":
            report.protocol = report.protocol or "scsi"
            report.drive_health_passed = fields["result"].upper() == "OK"
        elif kind == "attribute":
            attributes.setdefault(fields["id"], fields)
        elif kind == "grown_defects":
            report.protocol = "scsi"
            report.grown_defects = fields["count"]
        elif kind == "nvme_health":
            report.protocol = "nvme"
            _apply_nvme_text(report, fields["nvme_label"], fields["reading"])
        elif kind == "error_count":
            error_count = max(error_count or 0, fields["count"])
        elif kind == "no_errors":
            saw_no_errors = True
        elif kind == "error_entry":
            error_entries.add(fields["error_number"])
        elif kind == "error_lba":
            _note_logged_error(report, fields.get("error_types") or "", fields.get("lba"))
        elif kind == "self_test":
            saw_self_test = True
            if "failure" in fields["test_text"].lower():
                self_tests_failed += 1
        elif kind == "scsi_error_counter":
            scsi_uncorrected = (scsi_uncorrected or 0) + fields["uncorrected"]

    vendor, product = labels.get("vendor"), labels.get("product")
    report.model = labels.get("device model") or labels.get("model number")
    if report.model is None and (vendor or product):
        report.model = " ".join(part for part in (vendor, product) if part)
    report.serial = labels.get("serial number")
    report.firmware = labels.get("firmware version") or labels.get("revision")
    if report.protocol is None:
        if "model number" in labels:
            report.protocol = "nvme"
        elif vendor or product:
            report.protocol = "scsi"
        elif "device model" in labels or attributes:
            report.protocol = "ata"

    for attribute_id, here in attribute_lines.items():
        fields = attributes[attribute_id]
        name = PREDICTIVE_ATTRIBUTES.get(attribute_id) or dict([CABLE_ATTRIBUTE]).get(attribute_id)
        if name:
            cite(name, here)
        if fields["when_failed"] in ("FAILING_NOW", "NOW"):
            cite("prefail_below_threshold" if _is_prefail_text(fields) else "usage_attribute_failing", here)
    for fields in attributes.values():
        _apply_attribute(
            report,
            attribute_id=fields["id"],
            name=fields["name"],
            prefail=_is_prefail_text(fields),
            failing_now=fields["when_failed"] in ("FAILING_NOW", "NOW"),
            raw=_leading_int(fields["raw"]),
        )
    report.scsi_uncorrected_errors = scsi_uncorrected
    if report.protocol != "nvme":
        if error_count is not None:
            report.error_log_entries = error_count
        elif error_entries:
            report.error_log_entries = max(error_entries)
        elif saw_no_errors:
            report.error_log_entries = 0
    if saw_self_test:
        report.self_tests_failed = self_tests_failed
    if report.device is None or report.device.startswith("<"):
        # a paste or stdin: the file's name names no disk; the text may (the command that printed
        # it, an error about the device), else its serial number does
        report.device = _device_in_text(text) or report.serial or report.device
    _apply_policy(report)
    return report


# "# smartctl -a /dev/sdb", "smartctl -x -d megaraid,2 /dev/sda", "/dev/sdb: Unable to detect device
# type", "Smartctl open device: /dev/sdb failed"
_DEVICE_IN_TEXT = re.compile(r"(?:smartctl\b[^\n]*?\s|^|open device: )/dev/([\w][\w/.-]*)", re.M | re.I)


def _device_in_text(text: str) -> str | None:
    match = _DEVICE_IN_TEXT.search(text, 0, 1 << 16)
    return match.group(1) if match else None


def _is_prefail_text(fields: dict[str, Any]) -> bool:
    if "type" in fields:
        return fields["type"] == "Pre-fail"
    return "P" in fields.get("brief_flags", "")


# NVMe health lines of the text output -> the flags they lead to
_NVME_LABEL_FLAGS = {
    "Critical Warning": ("nvme_critical_warning", "spare_below_threshold"),
    "Available Spare": ("spare_below_threshold",),
    "Percentage Used": ("percentage_used",),
    "Media and Data Integrity Errors": ("nvme_media_errors",),
    "Error Information Log Entries": ("error_log_entries",),
}


def _apply_nvme_text(report: SmartReport, label: str, reading: Any) -> None:
    if label == "Critical Warning":
        report.nvme_critical_warning = int(reading, 16) if isinstance(reading, str) else reading
    elif label == "Available Spare":
        report.available_spare = reading
    elif label == "Available Spare Threshold":
        report.available_spare_threshold = reading
    elif label == "Percentage Used":
        report.percentage_used = reading
    elif label == "Media and Data Integrity Errors":
        report.nvme_media_errors = reading
    elif label == "Error Information Log Entries":
        report.error_log_entries = reading


# --------------------------------------------------------------------------------------------
# JSON (smartctl --json, any json_format_version 1 output, including Scrutiny-trimmed ones)


def _obj(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _arr(value: Any) -> list:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    """An integer field; anything else (a string, a float, true, null) counts as absent."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def parse_smartctl_json(text: str, source_name: str) -> SmartReport:
    """SmartReport from ``smartctl --json`` output; InputError when the text is not such JSON.

    The JSON is read field by field with the type smartctl writes; a field of another type (a
    damaged or hand-edited file) counts as absent rather than breaking the analysis.
    """
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        where = f": {error.msg} at line {error.lineno} column {error.colno}" if isinstance(
            error, json.JSONDecodeError) else ": nested too deeply"
        raise InputError(f"not smartctl JSON{where}", path=source_name) from None
    if not isinstance(data, dict):
        raise InputError("not smartctl JSON: the top level is not an object", path=source_name)

    device = _obj(data.get("device"))
    device_name = _str(device.get("name"))
    report = SmartReport(
        source=source_name,
        device=device_name.removeprefix("/dev/") if device_name else device_from_source(source_name),
    )
    protocol = (_str(device.get("protocol")) or "").lower()
    report.protocol = protocol if protocol in ("ata", "scsi", "nvme") else None
    smartctl = _obj(data.get("smartctl"))
    report.smartctl_exit_status = _int(smartctl.get("exit_status"))
    report.options = _options_from_argv(smartctl.get("argv")) or options_from_source(source_name)
    report.from_json = True
    report.messages = [_str(m.get("string")) or "" for m in _arr(smartctl.get("messages")) if isinstance(m, dict)]

    report.model = _str(data.get("model_name")) or _str(data.get("scsi_model_name"))
    if report.model is None:
        parts = [_str(data.get(k)) for k in ("scsi_vendor", "vendor", "scsi_product", "product")]
        report.model = " ".join(dict.fromkeys(p for p in parts if p)) or None
    report.serial = _str(data.get("serial_number"))
    report.firmware = (_str(data.get("firmware_version")) or _str(data.get("scsi_revision"))
                       or _str(data.get("revision")))
    wwn = _obj(data.get("wwn"))
    wwn_parts = [_int(wwn.get(k)) for k in ("naa", "oui", "id")]
    if all(part is not None and part >= 0 for part in wwn_parts):
        report.wwn = _wwn_from_parts(*wwn_parts)
    elif isinstance(data.get("logical_unit_id"), str):
        report.wwn = data["logical_unit_id"].lower()

    status = _obj(data.get("smart_status"))
    if isinstance(status.get("passed"), bool):
        report.drive_health_passed = status["passed"]

    attributes = [a for a in _arr(_obj(data.get("ata_smart_attributes")).get("table")) if isinstance(a, dict)]
    for attribute in attributes:
        raw = _obj(attribute.get("raw"))
        raw_value = _leading_int(_str(raw.get("string"))) if "string" in raw else _int(raw.get("value"))
        flags = _obj(attribute.get("flags"))
        attribute_id = _int(attribute.get("id"))
        _apply_attribute(
            report,
            attribute_id=attribute_id,
            name=_str(attribute.get("name")) or f"Attribute_{attribute_id}",
            prefail=bool(flags.get("prefailure")),
            failing_now=attribute.get("when_failed") == "now",
            raw=raw_value,
        )
    if attributes and report.protocol is None:
        report.protocol = "ata"

    error_log = _obj(data.get("ata_smart_error_log"))
    for variant in ("extended", "summary"):
        log = _obj(error_log.get(variant))
        if "count" in log:
            report.error_log_entries = _int(log["count"])
            for entry in _arr(log.get("table")):
                description = _str(_obj(entry).get("error_description")) or ""
                match = _LBA_IN_ERROR.search(description)
                _note_logged_error(report, description.split(" at LBA")[0], int(match.group(1)) if match else None)
            break

    self_test_log = _obj(data.get("ata_smart_self_test_log"))
    for variant in ("extended", "standard"):
        if isinstance(self_test_log.get(variant), dict):
            table = _arr(self_test_log[variant].get("table"))
            report.self_tests_failed = sum(
                1 for t in table if "failure" in (_str(_obj(_obj(t).get("status")).get("string")) or "").lower()
            )
            break
    nvme_self_tests = _obj(data.get("nvme_self_test_log")).get("table")
    if isinstance(nvme_self_tests, list):
        report.self_tests_failed = sum(
            1
            for t in nvme_self_tests
            if "fail" in (_str(_obj(_obj(t).get("self_test_result")).get("string")) or "").lower()
        )

    if "scsi_grown_defect_list" in data:
        report.grown_defects = _int(data["scsi_grown_defect_list"])
        report.protocol = report.protocol or "scsi"
    counters = data.get("scsi_error_counter_log")
    if isinstance(counters, dict):
        report.scsi_uncorrected_errors = sum(
            _int(_obj(counters.get(op)).get("total_uncorrected_errors")) or 0 for op in ("read", "write", "verify")
        )

    nvme = data.get("nvme_smart_health_information_log")
    if isinstance(nvme, dict):
        report.protocol = "nvme"
        report.nvme_critical_warning = _int(nvme.get("critical_warning"))
        report.nvme_media_errors = _int(nvme.get("media_errors"))
        report.available_spare = _int(nvme.get("available_spare"))
        report.available_spare_threshold = _int(nvme.get("available_spare_threshold"))
        report.percentage_used = _int(nvme.get("percentage_used"))
        report.error_log_entries = _int(nvme.get("num_err_log_entries"))

    _apply_policy(report)
    return report


# --------------------------------------------------------------------------------------------
# Shared: attributes and the health policy


def _apply_attribute(
    report: SmartReport, *, attribute_id: int | None, name: str, prefail: bool, failing_now: bool, raw: int | None
) -> None:
    if failing_now:
        (report.failing_attributes if prefail else report.usage_attributes_failing).append(name)
    if attribute_id in PREDICTIVE_ATTRIBUTES:
        setattr(report, PREDICTIVE_ATTRIBUTES[attribute_id], raw)
    elif attribute_id == CABLE_ATTRIBUTE[0]:
        report.udma_crc_errors = raw


_MEDIA_ERRORS = re.compile(r"\b(?:UNC|IDNF|AMNF)\b")


def _note_logged_error(report: SmartReport, error_types: str, lba: int | None) -> None:
    """One entry of the ATA error log: a media error (UNC, IDNF, AMNF) names a failing sector;
    an interface CRC error or an aborted command (ICRC, ABRT) is the link's, not the disk's."""
    if _MEDIA_ERRORS.search(error_types):
        report.media_error_entries = (report.media_error_entries or 0) + 1
        if lba is not None and lba not in report.failing_lbas:
            report.failing_lbas.append(lba)
    else:
        report.interface_error_entries = (report.interface_error_entries or 0) + 1


def _apply_policy(report: SmartReport) -> None:
    flags: list[str] = []
    failed = warning = False
    drive_failing_bit = bool((report.smartctl_exit_status or 0) & 0b1000)
    if report.drive_health_passed is False or drive_failing_bit:
        flags.append("health_failed")
        failed = True
    for name in report.failing_attributes:
        flags.append(f"prefail_below_threshold:{name}")
        failed = True
    for name in report.usage_attributes_failing:
        flags.append(f"usage_attribute_failing:{name}")
        warning = True
    for field_name in PREDICTIVE_ATTRIBUTES.values():
        value = getattr(report, field_name)
        if value:
            flags.append(f"{field_name}:{value}")
            warning = True
    if report.udma_crc_errors:
        flags.append(f"udma_crc_errors:{report.udma_crc_errors}")
    if report.grown_defects:
        flags.append(f"grown_defects:{report.grown_defects}")
        warning = True
    if report.scsi_uncorrected_errors:
        flags.append(f"scsi_uncorrected_errors:{report.scsi_uncorrected_errors}")
        warning = True
    if report.nvme_critical_warning:
        flags.append(f"nvme_critical_warning:0x{report.nvme_critical_warning:02x}")
        if report.nvme_critical_warning & NVME_FAILING_BITS:
            failed = True
        else:
            warning = True
    if report.nvme_media_errors:
        flags.append(f"nvme_media_errors:{report.nvme_media_errors}")
        failed = True
    spare_low = (report.nvme_critical_warning or 0) & NVME_SPARE_BELOW_THRESHOLD or (
        report.available_spare is not None
        and report.available_spare_threshold is not None
        and report.available_spare < report.available_spare_threshold
    )
    if spare_low:
        flags.append("spare_below_threshold")
        failed = True
    if report.percentage_used is not None and report.percentage_used >= 100:
        flags.append(f"percentage_used:{report.percentage_used}")
        warning = True
    if report.error_log_entries:
        flags.append(f"error_log_entries:{report.error_log_entries}")
        # an ATA error log whose entries the report shows are all link errors (ICRC) says nothing
        # against the disk: SMART attribute 199 and the kernel's CRC errors point at the cable
        link_errors_only = bool(report.interface_error_entries) and not report.media_error_entries
        if link_errors_only:
            flags.append("logged_errors_are_link_errors")
        warning = warning or (report.protocol != "nvme" and not link_errors_only)
    if report.self_tests_failed:
        flags.append(f"self_tests_failed:{report.self_tests_failed}")
        warning = True

    report.flags = flags
    if failed:
        report.health = "failed"
    elif warning:
        report.health = "warning"
    elif report.drive_health_passed:
        report.health = "passed"
    else:
        report.health = "unknown"
