"""What SAS/RAID adapter drivers print about themselves and the drives behind them: SAS addresses,
MPI IOC states, MegaRAID firmware events. Each driver spells these its own way; the path model
needs one spelling to tie a drive's lines from several drivers and tools together.
"""

from __future__ import annotations

import re

from . import DecodeError

# mpi2.h / mpi.h MPI*_IOC_STATE_*: the top nibble is the state; in FAULT (and COREDUMP, MPI 2.6)
# the low 16 bits are the firmware's fault code
_IOC_STATE_MASK = 0xF0000000
_IOC_STATES = {0x00000000: "RESET", 0x10000000: "READY", 0x20000000: "OPERATIONAL",
               0x40000000: "FAULT", 0x50000000: "COREDUMP"}
_STATES_WITH_FAULT_CODE = ("FAULT", "COREDUMP")


def sas_address(text: str) -> str:
    """A SAS address as 0x and 16 lower-case hex digits ("5000C500A1B2C3D4" -> "0x5000c500a1b2c3d4").

    >>> sas_address("0x500605B0000272BF")
    '0x500605b0000272bf'
    """
    digits = text.strip().lower().removeprefix("0x")
    if not digits or len(digits) > 16 or any(c not in "0123456789abcdef" for c in digits):
        raise DecodeError(f"not a SAS address: {text!r}")
    return "0x" + digits.rjust(16, "0")


def mpi_ioc_state(value: int) -> str:
    """Name of the state in an MPI IOC state word (the doorbell's top nibble)."""
    return _IOC_STATES.get(value & _IOC_STATE_MASK, f"0x{(value & _IOC_STATE_MASK) >> 28:x}")


def mpi_ioc_state_fields(value: int) -> dict:
    """Event fields an IOC state word gives: the fault code when the IOC is in FAULT.

    >>> mpi_ioc_state_fields(0x40002623)
    {'fault_code': 9763}
    >>> mpi_ioc_state_fields(0x20000000)
    {}
    """
    if mpi_ioc_state(value) in _STATES_WITH_FAULT_CODE:
        return {"fault_code": value & 0xFFFF}
    return {}



# MegaRAID firmware event text: "PD 04(e0x20/s4)" is device id 4 in enclosure 0x20, slot 4;
# "Path 5000c50034a3e2a1" the SAS address the drive was reached by; "Sense: 3/11/00" its sense.
_MEGARAID_PD = re.compile(r"\(e(0x[0-9a-fA-F]+)/s(\d+)\)")
_MEGARAID_PATH = re.compile(r"\bPath ([0-9a-fA-F]{16})\b")
_MEGARAID_SENSE = re.compile(r"\bSense: ([0-9a-fA-F]{1,2})/([0-9a-fA-F]{2})/([0-9a-fA-F]{2})\b")


def megaraid_event_fields(text: str) -> dict:
    """Event fields in a MegaRAID firmware event's description: the first drive it names
    (enclosure and slot), the SAS address it was reached by, and its sense key, ASC and ASCQ.

    >>> megaraid_event_fields("Unexpected sense: PD 0c(e0x20/s12) Path 5000c50034a3e2a1, "
    ...                       "CDB: 28 00 00 00 00 00 00 00 08 00, Sense: 3/11/00")
    {'enclosure_id': '0x20', 'slot': 12, 'sas_address': '0x5000c50034a3e2a1', 'sense_key': 3, 'asc': 17, 'ascq': 0}
    """
    fields: dict = {}
    drive = _MEGARAID_PD.search(text)
    if drive:
        fields["enclosure_id"] = drive.group(1).lower()
        fields["slot"] = int(drive.group(2))
    path = _MEGARAID_PATH.search(text)
    if path:
        fields["sas_address"] = sas_address(path.group(1))
    sense = _MEGARAID_SENSE.search(text)
    if sense:
        fields.update(zip(("sense_key", "asc", "ascq"), (int(g, 16) for g in sense.groups())))
    return fields


# How hpsa_show_dev_msg and smartpqi's pqi_dev_info describe a device: scsi_device_type() (padded
# to 17), the INQUIRY vendor (8) and model (16) as stored, one space between each.
SCSI_DEVICE_TYPES = ("Direct-Access", "Sequential-Access", "Printer", "Processor", "WORM", "CD-ROM",
                     "Scanner", "Optical Device", "Medium Changer", "Communications", "ASC IT8", "RAID",
                     "Enclosure", "Direct-Access-RBC", "Optical card", "Bridge controller",
                     "Object storage", "Automation/Drive", "Security Manager", "Direct-Access-ZBC",
                     "Well-known LUN", "No Device",
                     # smartpqi's name for an expander's SMP target
                     "Enclosure SMP")
_DEVICE_DESCRIPTION = re.compile(r"(?P<devtype>.{17}) (?P<vendor>.{8}) (?P<model>.{16})(?: |$)")


def device_description_fields(text: str) -> dict:
    """devtype, vendor and model from "Direct-Access     HP       LOGICAL VOLUME   RAID-1(+0) ...";
    only the type when the columns were squeezed (a pasted line) and cannot be told apart.

    >>> device_description_fields("Direct-Access     HP       LOGICAL VOLUME   RAID-1(+0) SSDSmartPathCap- En- Exp=1")
    {'devtype': 'Direct-Access', 'vendor': 'HP', 'model': 'LOGICAL VOLUME'}
    >>> device_description_fields("Direct-Access HP LOGICAL VOLUME RAID-1(+0) SSDSmartPathCap- En- Exp=1")
    {'devtype': 'Direct-Access'}
    """
    columns = _DEVICE_DESCRIPTION.match(text)
    if columns and columns.group("devtype").strip() in SCSI_DEVICE_TYPES:
        return {key: value.strip() for key, value in columns.groupdict().items() if value.strip()}
    devtype = max((t for t in SCSI_DEVICE_TYPES if text.startswith(t)), key=len, default=None)
    return {"devtype": devtype} if devtype else {}


def smartpqi_device_fields(text: str) -> dict:
    """Fields of what pqi_dev_info prints after H:B:T:L: the id, then the device description. A
    drive ("AIO+"/"AIO-" follows its model) prints its SAS address (its 32-digit WWID since 6.x,
    which is not the address); a logical volume its LUN address.

    >>> smartpqi_device_fields("5000c500a1b2c3d5 Direct-Access     HPE      MB4000GVYZK      AIO+ qd=32    ")
    {'devtype': 'Direct-Access', 'vendor': 'HPE', 'model': 'MB4000GVYZK', 'sas_address': '0x5000c500a1b2c3d5'}
    """
    identifier, _, description = text.partition(" ")
    fields = device_description_fields(description)
    if len(identifier) == 16 and re.search(r"\bAIO[+-]", description):
        fields["sas_address"] = sas_address(identifier)
    return fields


_THREEWARE_SPECIFIC = re.compile(r"\b(port|phy|unit)=(\d+)")


def threeware_event_fields(text: str) -> dict:
    """Fields of a 3ware 9000/9750 event or error text "<description>:<specifics>.": the
    description, the port (SATA) or phy (SAS) of the drive, and the unit (the SCSI target).

    >>> threeware_event_fields("Degraded unit:unit=0, port=2.")
    {'text': 'Degraded unit', 'target': 0, 'port': '2'}
    """
    description = text.split(":", 1)[0].strip().rstrip(".")
    fields: dict = {"text": description} if description else {}
    for name, number in _THREEWARE_SPECIFIC.findall(text.partition(":")[2]):
        if name == "unit":
            fields.setdefault("target", int(number))
        elif name == "phy":
            fields.setdefault("phy", int(number))
        else:
            fields.setdefault("port", number)
    return fields


def aic_path_fields(text: str) -> dict:
    """The SCSI address in an aic7xxx path ("scsi0:A:1:0", channel letter A = channel 0) or an
    aic7xxx_old one ("scsi0:0:4:0", with -1 for what the driver did not know).

    >>> aic_path_fields("scsi0:B:1:0")
    {'host': 0, 'channel': 1, 'target': 1, 'lun': 0, 'hctl': '0:1:1:0'}
    >>> aic_path_fields("scsi0:-1:-1:-1")
    {'host': 0}
    """
    host, channel, target, lun = text.removeprefix("scsi").split(":")
    fields: dict = {"host": int(host)}
    numbers = (aic_channel(channel), int(target), int(lun))
    for name, number in zip(("channel", "target", "lun"), numbers):
        if number >= 0:
            fields[name] = number
    if min(numbers) >= 0:
        fields["hctl"] = f"{host}:{numbers[0]}:{numbers[1]}:{numbers[2]}"
    return fields


def aic_channel(text: str) -> int:
    """A SCSI channel as aic7xxx names it: a letter (A is channel 0) or a number."""
    return ord(text) - ord("A") if text.isalpha() else int(text)
