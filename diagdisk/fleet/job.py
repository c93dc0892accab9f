"""One fleet input analysed exactly as `diagdisk analyze` analyses it alone, plus its table rows.

A fleet input is one snapshot (a sosreport or bundle, folder or archive) or the loose logs of one
host (diagdisk.fleet.plan). What it gives: the JSON report, the row of fleet.parquet, its suspects
and what it holds (device models, firmware, controller drivers: the denominators of failure rates).
This runs inside the isolated analysis process (diagdisk.fleet.isolate); every failure becomes a
result with a one-line reason, never an exception.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
from collections import Counter
from pathlib import Path

from ..errors import DiagdiskError
from ..inputs.discovery import Found, HostIdentity, open_found, syslog_host, tree_identity
from ..inputs.limits import Limits
from ..inputs.safeio import describe_os_error, safe_walk

_HASH_CHUNK = 1 << 20
_rules_cache: dict[tuple, list] = {}


def found_from(spec: dict) -> Found:
    identity = spec.get("identity")
    return Found(path=spec["path"], kind=spec["kind"], files=spec.get("files"),
                 identity=HostIdentity(**identity) if identity else None)


def spec_of(found: Found) -> dict:
    return {"path": found.path, "kind": found.kind, "files": found.files,
            "identity": {"name": found.identity.name, "evidence": found.identity.evidence} if found.identity else None}


def content_hash(founds: list[Found]) -> str:
    """SHA-256 of what the input holds: an archive's or file's bytes, a folder's files (their
    names below it and their bytes). Where the input lies does not count; the order of a loose
    host's files does not either."""
    digests = []
    for found in founds:
        digest = hashlib.sha256()
        path = Path(found.path)
        try:
            if found.kind in ("sosreport", "folder"):
                wanted = set(found.files) if found.files is not None else None
                for file in safe_walk(path, []):
                    name = file.relative_to(path).as_posix()
                    if wanted is None or name in wanted:
                        digest.update(name.encode("utf-8", "surrogateescape") + b"\0")
                        _hash_file(file, digest)
            else:
                _hash_file(path, digest)
        except OSError as exc:
            raise DiagdiskError(describe_os_error(exc), found.path) from None
        digests.append(digest.hexdigest())
    if len(digests) == 1:
        return digests[0]
    return hashlib.sha256("\n".join(sorted(digests)).encode()).hexdigest()


def _hash_file(path: Path, digest) -> None:
    with open(path, "rb") as handle:
        while block := handle.read(_HASH_CHUNK):
            digest.update(block)
        digest.update(b"\0")


def warm_up() -> None:
    """Import what an analysis needs and build the grammars, before the first input."""
    from ..diagnosis import analysis, engine  # noqa: F401
    from ..logs.grammar import default_parser
    from ..logs.reader import default_prefilter
    from ..report import build  # noqa: F401
    default_parser().load_all()
    default_prefilter()


def analyse(request: dict) -> dict:
    """{"inputs": [found specs], "limits": {...}, "since": ISO date or None} -> a result dict:
    status "ok" (report, row, suspects, holds), "excluded" (report date before since) or "failed"
    (reason)."""
    started = time.monotonic()
    try:
        result = _analyse(request)
    except DiagdiskError as exc:
        result = {"status": "failed", "reason": exc.one_line()}
    except MemoryError:
        result = {"status": "failed", "reason": "ran out of memory (the per-input memory limit, --max-memory)"}
    except RecursionError:
        result = {"status": "failed", "reason": "nested too deeply to analyse"}
    except Exception as exc:  # noqa: BLE001 - one input's bug is that input's failure, not the run's
        result = {"status": "failed", "reason": f"internal error: {type(exc).__name__}: {exc}"}
    result["seconds"] = round(time.monotonic() - started, 3)
    return result


def _analyse(request: dict) -> dict:
    from ..diagnosis.analysis import analyze_opened
    from ..diagnosis.engine import evaluate_rules, load_rules
    from ..report.build import build_report
    founds = [found_from(spec) for spec in request["inputs"]]
    limits = Limits(**request.get("limits", {}))
    with contextlib.ExitStack() as stack:
        opened = []
        for found in founds:
            handle = stack.enter_context(open_found(found, limits))
            if found.kind == "archive" and found.identity is None:
                found.identity = tree_identity(handle.root, Path(found.path).name, handle.root.name)
            opened.append((found.path, handle))
        analysis = analyze_opened(opened, limits=limits, jobs=1, single_input=len(opened) == 1)
    since = request.get("since")
    if since and analysis.report_date is not None and analysis.report_date.isoformat() < since:
        return {"status": "excluded", "reason": f"report date {analysis.report_date.date()} is before --since",
                "host": _host_label(analysis, founds)}
    rules_key = tuple(request.get("rules_dirs") or ())
    if rules_key not in _rules_cache:
        _rules_cache[rules_key] = load_rules(extra_dirs=list(rules_key))
    findings, verdict = evaluate_rules(_rules_cache[rules_key], analysis)
    report = build_report(analysis, findings, verdict)
    host = _host_label(analysis, founds)
    row, suspects = rows_of(report, analysis, host)
    return {"status": "ok", "host": host, "report": report, "row": row, "suspects": suspects,
            "holds": holdings(report, analysis)}


def _host_label(analysis, founds: list[Found]) -> str:
    if analysis.hostname and analysis.hostname.lower() not in ("localhost", "localhost.localdomain", "(none)"):
        return analysis.hostname
    for found in founds:
        if found.identity:
            return found.identity.name
    return Path(founds[0].path).name


SEVERITY_ORDER = ("info", "low", "medium", "high", "critical")
_SCSI_HOST = re.compile(r"^(?:host|scsi)(\d+)$")


def rows_of(report: dict, analysis, host: str) -> tuple[dict, list[dict]]:
    """The fleet row (less input path and hash, which the caller knows) and the suspects rows."""
    verdict = report["verdict"]
    suspects = verdict.get("suspects") or []
    devices = report.get("devices") or []
    findings = report.get("findings") or []
    top = suspects[0] if suspects else {}
    kinds = Counter()
    for entry in report.get("event_summary") or []:
        kinds[entry["kind"]] += entry["count"]
    degraded = [a["name"] or "?" for a in report.get("md_arrays") or []
                if a.get("failed_members") or a.get("state") in ("degraded", "failed")]
    row = {
        "host": host,
        "report_date": report["host"].get("report_date"),
        "kernel": report["host"].get("kernel"),
        "verdict": verdict["status"],
        "severity": max((f["severity"] for f in findings), key=SEVERITY_ORDER.index, default=None),
        "summary": verdict.get("summary"),
        "complete": bool(report.get("complete", True)),
        "top_fru": top.get("fru"),
        "top_hctl": top.get("hctl"),
        "top_device": top.get("device"),
        "top_model": top.get("model") or _device_field(devices, top, "model"),
        "top_serial": top.get("serial") or _device_field(devices, top, "serial"),
        "top_firmware": _device_field(devices, top, "revision"),
        "top_driver": controller_driver(analysis, top) if top else None,
        "confidence": top.get("confidence"),
        "rule_ids": ";".join(sorted({rule for s in suspects for rule in s.get("rules") or []})),
        "event_counts": dict(sorted(kinds.items())),
        "md_degraded": len(degraded),
        "md_degraded_arrays": ";".join(degraded),
        "devices": len(devices),
        "performance_findings": None,
    }
    suspect_rows = []
    for rank, suspect in enumerate(suspects, start=1):
        suspect_rows.append({
            "host": host, "rank": rank, "fru": suspect.get("fru"), "hctl": suspect.get("hctl"),
            "device": suspect.get("device"),
            "model": suspect.get("model") or _device_field(devices, suspect, "model"),
            "serial": suspect.get("serial") or _device_field(devices, suspect, "serial"),
            "firmware": _device_field(devices, suspect, "revision"),
            "driver": controller_driver(analysis, suspect),
            "confidence": suspect.get("confidence"), "score": suspect.get("score"),
            "rule_ids": ";".join(suspect.get("rules") or []),
            "md_arrays": ";".join(suspect.get("md_arrays") or []),
        })
    return row, suspect_rows


def _device_field(devices: list[dict], suspect: dict, key: str):
    for device in devices:
        if (suspect.get("hctl") and device.get("hctl") == suspect["hctl"]) or (
                suspect.get("device") and device.get("name") == suspect["device"]):
            value = device.get(key)
            if key == "model" and value and device.get("vendor") and not str(value).startswith(device["vendor"]):
                return f"{device['vendor']} {value}"
            return value
    return None


def controller_driver(analysis, suspect: dict) -> str | None:
    """The driver of the controller behind a suspect, as the kernel's own messages name it: the
    most frequent `driver` of events on the suspect's SCSI host; NVMe drives are driven by nvme."""
    device = suspect.get("device") or ""
    if device.startswith("nvme"):
        return "nvme"
    host = None
    if suspect.get("hctl"):
        with contextlib.suppress(ValueError):
            host = int(suspect["hctl"].split(":")[0])
    elif _SCSI_HOST.match(device):
        host = int(_SCSI_HOST.match(device).group(1))
    if host is None:
        return None
    drivers = Counter(event["driver"] for event in analysis.events
                      if event.get("driver") and event.get("host") == host)
    modules = [name for name, _ in drivers.most_common() if _MODULE_NAME.fullmatch(name)]
    if modules:
        return modules[0]
    if drivers:
        # the host's lines name it by its SCSI host template ("scsi host2: Fusion MPT SAS Host"):
        # the driver module is the one whose adapter lines (mpt3sas_cm0: ...) the kernel printed
        adapters = _adapter_drivers(analysis)
        return adapters[0] if len(adapters) == 1 else drivers.most_common(1)[0][0]
    return None


# A kernel module's name (mpt3sas, megaraid_sas, usb-storage); a host template's name is not one
# (the first word of "Fusion MPT SAS Host", "Virtio SCSI HBA").
_MODULE_NAME = re.compile(r"[a-z][a-z0-9_-]*")


def _adapter_drivers(analysis) -> list[str]:
    return sorted({event["driver"] for event in analysis.events
                   if event.get("adapter") and event.get("driver") and _MODULE_NAME.fullmatch(event["driver"])})


def _driver_names(analysis) -> set[str]:
    """The controller drivers an input's kernel named, as module names: a host template's name
    stands for the one adapter driver the same kernel printed, when there is one."""
    named = {event["driver"] for event in analysis.events if event.get("driver")}
    modules = {name for name in named if _MODULE_NAME.fullmatch(name)}
    adapters = _adapter_drivers(analysis)
    if named - modules and len(adapters) == 1:
        return modules
    return named


def holdings(report: dict, analysis) -> dict:
    """What the input holds, counted for failure rates: devices per model and per model+firmware,
    and the controller drivers its kernel named; and what the fleet's cohorts are made of
    (diagdisk.fleet.cohorts): its drives and those a disk suspect blames (model, firmware), its
    controllers (model, firmware, driver), its enclosures' models and its error signatures."""
    models, firmware = Counter(), Counter()
    drives = set()
    for device in report.get("devices") or []:
        model = _device_field([device], {"hctl": device.get("hctl"), "device": device.get("name")}, "model")
        if model:
            models[model] += 1
            firmware[f"{model} {device.get('revision') or '?'}"] += 1
            if device.get("type") in DRIVE_TYPES:
                drives.add((model, device.get("revision") or "?"))
    failing_drives = set()
    for suspect in (report.get("verdict") or {}).get("suspects") or []:
        if suspect.get("fru") != "disk":
            continue
        for device in report.get("devices") or []:
            if device.get("type") in DRIVE_TYPES and _device_field([device], suspect, "model"):
                failing_drives.add((_device_field([device], suspect, "model"), device.get("revision") or "?"))
    drivers = sorted(_driver_names(analysis))
    if any((d.get("type") == "nvme" or str(d.get("name") or "").startswith("nvme")) for d in report.get("devices") or []):
        drivers = sorted(set(drivers) | {"nvme"})
    enclosures = sorted({_device_field([d], {"hctl": d.get("hctl"), "device": d.get("name")}, "model")
                         for d in report.get("devices") or [] if d.get("type") == "enclosure" and d.get("model")})
    return {"models": dict(models), "firmware": dict(firmware), "drivers": drivers,
            "drives": sorted(list(d) for d in drives), "failing_drives": sorted(list(d) for d in failing_drives),
            "controllers": controllers_of(analysis), "enclosures": enclosures,
            "signatures": signatures_of(analysis)}


# device types that are drives (not enclosures, tapes, optical drives or RAID volumes' own entries)
DRIVE_TYPES = frozenset({"disk", "nvme"})
SIGNATURE_MAX = 160
# kinds that are no fault's signature: lines no grammar knows, and the machine around the storage
# (a hypervisor underneath, a suspend or resume) where the event table has that kind
NOT_SIGNATURES = frozenset({"unclassified", "machine"})


def controllers_of(analysis) -> list[list[str]]:
    """[model, firmware, driver] of each controller its driver identified at attach (mpt2sas's
    and mpt3sas's FWVersion line, qla2xxx's ISP line)."""
    found = set()
    for event in analysis.events:
        if event.get("kind") == "attach" and event.get("detail") == "adapter" and event.get("model"):
            found.add((_clean(event["model"]), _clean(event.get("revision") or "?"), _clean(event.get("driver") or "")))
    return sorted(list(c) for c in found)


def signatures_of(analysis) -> list[list]:
    """[signature, first time] of each error signature of the input: the event kind (and detail),
    its code (sense key/ASC/ASCQ, ATA error bits, NVMe status, SCSI host byte) and the driver of
    the controller it came through. Setup lines and informational events have none."""
    from ..logs.events import DETAIL_KINDS, NON_EVENT_KINDS, is_informational
    host_drivers: dict[int, Counter] = {}
    for event in analysis.events:
        if event.get("driver") and event.get("host") is not None:
            host_drivers.setdefault(event["host"], Counter())[event["driver"]] += 1
    first: dict[str, str | None] = {}
    for event in analysis.events:
        kind = event.get("kind")
        if not kind or kind in NON_EVENT_KINDS or kind in DETAIL_KINDS or kind in NOT_SIGNATURES \
                or is_informational(event):
            continue
        driver = event.get("driver")
        if not driver and (kind.startswith("nvme") or str(event.get("device") or "").startswith("nvme")
                           or event.get("nvme_ctrl")):
            driver = "nvme"
        if not driver and event.get("host") in host_drivers:
            driver = host_drivers[event["host"]].most_common(1)[0][0]
        parts = [kind.replace("_", " ")] if kind != "sense" else []
        if event.get("detail"):
            parts.append(str(event["detail"]).replace("_", " "))
        parts += _signature_code(event)
        signature = _clean(" ".join(parts) + (f" ({driver})" if driver else ""))[:SIGNATURE_MAX]
        when = event.get("time") or None
        if signature not in first or (when and (first[signature] is None or when < first[signature])):
            first[signature] = when
    return sorted([signature, when] for signature, when in first.items())


def _signature_code(event: dict) -> list[str]:
    if event.get("sense_key") is not None:
        code = f"sense key 0x{event['sense_key']:x}"  # the kind says no more than this
        if event.get("asc") is not None:
            code += f" asc/ascq 0x{event['asc']:02x}/0x{(event.get('ascq') or 0):02x}"
        return [code]
    if event.get("nvme_status"):
        return [f"status {event['nvme_status']}"]
    if event.get("sct") is not None and event.get("sc") is not None:
        return [f"sct 0x{event['sct']:x} sc 0x{event['sc']:02x}"]
    if event.get("ata_error"):
        return [f"error {{ {event['ata_error']} }}"]
    if event.get("ata_status"):
        return [f"status {{ {event['ata_status']} }}"]
    if event.get("host_byte") and event.get("host_byte") != "DID_OK":
        return [event["host_byte"]]
    return []


def _clean(text) -> str:
    from ..safetext import escape_control
    return escape_control(" ".join(str(text).split()))


def loose_identity(founds: list[Found]) -> HostIdentity | None:
    return syslog_host([Path(f.path) for f in founds if f.kind == "file"])


def input_size(founds: list[Found]) -> int:
    total = 0
    for found in founds:
        with contextlib.suppress(OSError):
            total += os.stat(found.path).st_size
    return total
