"""What adapter drivers print about drives and themselves, decoded into event fields."""

import doctest

import pytest

from diagdisk.decode import DecodeError, adapters


def test_module_doctests():
    assert doctest.testmod(adapters).failed == 0


@pytest.mark.parametrize("printed,expected", [
    ("0x5000C500A1B2C3D4", "0x5000c500a1b2c3d4"),
    ("5000c500a1b2c3d4", "0x5000c500a1b2c3d4"),
    # a driver that drops leading zeros still names the same address
    ("0x4433221103000", "0x0004433221103000"),
])
def test_sas_addresses_get_one_spelling(printed, expected):
    assert adapters.sas_address(printed) == expected


@pytest.mark.parametrize("bad", ["", "0x", "0x5000c500a1b2c3d4ff", "5000c500a1b2c3dz"])
def test_what_is_not_a_sas_address_is_refused(bad):
    with pytest.raises(DecodeError):
        adapters.sas_address(bad)


@pytest.mark.parametrize("state,fields", [
    (0x40002623, {"fault_code": 0x2623}),
    (0x50001234, {"fault_code": 0x1234}),   # COREDUMP keeps the fault code too
    (0x20000000, {}),                       # OPERATIONAL
    (0x10000000, {}),                       # READY
])
def test_ioc_state_gives_a_fault_code_only_in_fault(state, fields):
    assert adapters.mpi_ioc_state_fields(state) == fields


def test_megaraid_event_names_the_first_drive_and_its_sense():
    fields = adapters.megaraid_event_fields("State change on PD 04(e0x20/s4) from ONLINE(18) to FAILED(11)")
    assert fields == {"enclosure_id": "0x20", "slot": 4}
    assert adapters.megaraid_event_fields("VD 00/0 is now DEGRADED") == {}


def test_device_description_reads_the_padded_columns():
    fields = adapters.device_description_fields(
        "RAID              HP       P440ar           controller SSDSmartPathCap- En- Exp=1")
    assert fields == {"devtype": "RAID", "vendor": "HP", "model": "P440ar"}
    # squeezed columns: only the type can be told
    assert adapters.device_description_fields("Enclosure HP D3700 enclosure") == {"devtype": "Enclosure"}
    assert adapters.device_description_fields("something else") == {}


def test_smartpqi_logical_volume_id_is_not_a_sas_address():
    fields = adapters.smartpqi_device_fields(
        "4000000000000000 Direct-Access     HPE      LOGICAL VOLUME   SSDSmartPathCap- En- RAID-1(1+0) ")
    assert "sas_address" not in fields and fields["model"] == "LOGICAL VOLUME"
    # since 6.x a drive prints its 32-digit WWID, which is not its SAS address
    wwid = adapters.smartpqi_device_fields(
        "5000c500a1b2c3d5000000000000000a Direct-Access     HPE      MB4000GVYZK      AIO+ qd=32")
    assert "sas_address" not in wwid


@pytest.mark.parametrize("text,fields", [
    ("Drive error:port=2.", {"text": "Drive error", "port": "2"}),
    ("Drive error:phy=3.", {"text": "Drive error", "phy": 3}),
    ("Rebuild started:unit=0.", {"text": "Rebuild started", "target": 0}),
    ("Controller error occurred:.", {"text": "Controller error occurred"}),
])
def test_threeware_event_specifics(text, fields):
    assert adapters.threeware_event_fields(text) == fields


@pytest.mark.parametrize("path,fields", [
    ("scsi0:A:1:0", {"host": 0, "channel": 0, "target": 1, "lun": 0, "hctl": "0:0:1:0"}),
    ("scsi2:B:5:1", {"host": 2, "channel": 1, "target": 5, "lun": 1, "hctl": "2:1:5:1"}),
    ("scsi0:0:4:0", {"host": 0, "channel": 0, "target": 4, "lun": 0, "hctl": "0:0:4:0"}),
    ("scsi0:0:-1:-1", {"host": 0, "channel": 0}),
])
def test_aic_paths(path, fields):
    assert adapters.aic_path_fields(path) == fields
