"""Storage drivers: which transport a driver's devices sit on, and the name its module goes by.

The driver names are one table, grammars/drivers.lark: one terminal per transport, which the device
grammar reads as "a storage driver" (a line of any of them is a storage line) and this module reads
as driver -> transport for the path model.

>>> transport_of_driver("mpi3mr"), transport_of_driver("ata_piix"), transport_of_driver("e1000e")
('sas', 'sata', None)
>>> transport_of_driver("iSCSI Initiator over TCP/IP"), module_name("megasas")
('iscsi', 'megaraid_sas')
"""

from __future__ import annotations

import re
from functools import cache

from ..resources import grammars_dir

_TERMINAL = re.compile(r"^DRIVER_([A-Z0-9]+): /(.*)/\s*$", re.MULTILINE)
# A host's description, when its driver gave no name ("scsi host4: iSCSI Initiator over TCP/IP",
# "Virtio SCSI HBA", sym53c8xx's "sym-2.2.3"): a transport without a driver name.
_TRANSPORT_OF_DESCRIPTION = ((r"iSCSI.*", "iscsi"), (r"Virtio.*", "virtio"), (r"sym-[\d.]+", "spi"))
# What a driver prints for itself when that is not its module's name (2.6 megaraid_sas printed
# "megasas:", hv_storvsc's dev_printk names the VMBus driver, aacraid's adapters are aacN,
# sym53c8xx's symN, xen-blkfront's devices vbd-N).
_MODULE_OF_NAME = {"megasas": "megaraid_sas", "hv_storvsc": "storvsc", "aac": "aacraid", "sym": "sym53c8xx",
                   "vbd": "xen-blkfront"}


@cache
def _transport_patterns() -> tuple[tuple[re.Pattern, str | None], ...]:
    text = (grammars_dir() / "drivers.lark").read_text(encoding="utf-8")
    table = [(re.compile(pattern), None if name == "SHARED" else name.lower())
             for name, pattern in _TERMINAL.findall(text)]
    table += [(re.compile(pattern), transport) for pattern, transport in _TRANSPORT_OF_DESCRIPTION]
    return tuple(table)


def transport_of_driver(driver: str | None) -> str | None:
    """The transport of a driver's devices (sata, sas, fc, ...), None when not a storage driver's
    or when the driver serves several (mptbase)."""
    if not driver:
        return None
    for pattern, transport in _transport_patterns():
        if pattern.fullmatch(driver):
            return transport
    return None


def is_storage_driver(driver: str | None) -> bool:
    return bool(driver) and any(pattern.fullmatch(driver) for pattern, _ in _transport_patterns())


def module_name(driver: str) -> str:
    """The driver as its module is named (megasas -> megaraid_sas)."""
    return _MODULE_OF_NAME.get(driver, driver)
