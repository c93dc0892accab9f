"""Event kinds as an engineer names them, for the text and HTML reports (the JSON keeps the kinds).

The kinds and what each means are declared with the grammars (diagdisk.logs.events.EVENT_KINDS);
here each gets a short label. A kind without one is shown as its name with spaces, so a new kind
is never hidden; tests/report/test_labels.py asks for a label for every declared kind.
"""

from __future__ import annotations

KIND_LABELS = {
    "sense": "SCSI sense data",
    "sense_detail": "sense detail",
    "scsi_result": "SCSI command failed",
    "result_detail": "result detail",
    "scsi_context": "device named",
    "scsi_error_report": "SCSI error report",
    "cdb": "failed command (CDB)",
    "io_error": "I/O error",
    "timeout": "command timeout",
    "abort": "command aborted",
    "reset": "reset",
    "offline": "device offline",
    "ata_exception": "ATA error",
    "ata_detail": "ATA error detail",
    "ata_link": "SATA link event",
    "ata_eh_complete": "ATA error handling done",
    "ata_disabled": "ATA device disabled",
    "nvme_error": "NVMe command error",
    "nvme_reset": "NVMe controller reset",
    "md_failure": "md member failed",
    "md_degraded": "md array degraded",
    "md_recovery": "md resync/recovery",
    "md_member": "md member",
    "md_redirect": "md read redirected",
    "md_read_error": "md read error",
    "md_sb_error": "md superblock write failed",
    "path_failure": "multipath path failed",
    "path_reinstated": "multipath path back",
    "fs_error": "filesystem error",
    "transport": "transport event",
    "controller_error": "controller error",
    "attach": "device attached",
    "info": "storage notice",
    "machine": "machine context",
    "smart_alert": "smartd alert",
    "aer": "PCIe error report",
    "pci_link": "PCIe slot link lost",
    "power": "power fault",
    "enclosure": "enclosure event",
    "dm_error": "device-mapper error",
    "hung_task": "task hung on I/O",
    "unclassified": "device line not understood",
}


def kind_label(kind: str | None, detail: str | None = None) -> str:
    """'SCSI sense data', 'reset (host)': a kind, and its detail when it has one."""
    if not kind:
        return "event"
    label = KIND_LABELS.get(kind) or kind.replace("_", " ")
    return f"{label} ({detail.replace('_', ' ')})" if detail else label
