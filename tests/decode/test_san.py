"""SAN and virtual-disk names as drivers print them, in the spelling the rest of diagdisk uses."""

import doctest

import pytest

from diagdisk.decode import DecodeError, san


def test_module_doctests():
    assert doctest.testmod(san).failed == 0


@pytest.mark.parametrize("printed", ["50:06:01:60:3e:a0:12:34", "500601603EA01234", "0x500601603ea01234"])
def test_a_port_name_has_one_spelling_whoever_prints_it(printed):
    assert san.wwpn(printed) == "0x500601603ea01234"


def test_a_port_name_of_zero_is_no_port_name():
    assert san.wwpn("0") is None


@pytest.mark.parametrize("printed", ["5006016031ea012341", "not-a-wwn", ""])
def test_what_is_no_port_name_is_refused(printed):
    with pytest.raises(DecodeError):
        san.wwpn(printed)


@pytest.mark.parametrize("printed,fields", [
    ("scsi(10:0:1)", {"host": 10, "target": 0, "lun": 1}),
    ("nexus=10:0:1", {"host": 10, "target": 0, "lun": 1}),
    ("nexus:10:3", {"host": 10, "target": 3}),
    ("scsi(10:0:2:1)", {"hctl": "10:0:2:1", "host": 10, "channel": 0, "target": 2, "lun": 1}),
    ("scsi6:0:1", {"host": 6, "target": 0, "lun": 1}),
])
def test_the_drivers_nexus_notations(printed, fields):
    assert san.nexus_fields(printed) == fields


def test_ql_log_prefix_ties_the_pci_function_to_the_scsi_host():
    assert san.ql_log_fields("qla2xxx [0000:05:00.0]-500b:10:") == {"driver": "qla2xxx", "pci": "0000:05:00.0", "host": 10,
                                                                  "msg_id": "500b"}
    assert san.ql_log_fields("qla2xxx [0000:05:00.0]-001d: :") == {"driver": "qla2xxx", "pci": "0000:05:00.0", "msg_id": "001d"}
    # ql_dbg_prefix prints a zero address when the message has no PCI device: it names none
    assert san.ql_log_fields("qla2xxx [0000:00:00.0]-0005: :") == {"driver": "qla2xxx", "msg_id": "0005"}


@pytest.mark.parametrize("printed,detail", [
    ("DEVICE RESET ISSUED", "device"), ("TARGET RESET FAILED", "target_failed"), ("LOOP RESET ISSUED", "bus"),
    ("ADAPTER RESET FAILED", "host_failed"), ("BUS RESET ISSUED", "bus"),
])
def test_the_reset_level_a_handler_names(printed, detail):
    assert san.reset_detail(printed) == {"detail": detail}


def test_hyper_v_srb_status_is_named_with_its_flags():
    assert san.srb_status_text(0x04) == "SRB_STATUS_ERROR"
    assert san.srb_status_text(0x84) == "SRB_STATUS_ERROR, autosense valid"
    assert san.srb_status_text(0x20) == "SRB_STATUS_INVALID_LUN"
    assert san.srb_status_text(0x3F) == "SRB status 0x3f"


def test_iscsi_connection_and_session():
    assert san.iscsi_connection_fields("connection12:0") == {"iscsi_conn": "12:0", "iscsi_session": 12}
    assert san.iscsi_session_fields("session3") == {"iscsi_session": 3}
    with pytest.raises(DecodeError):
        san.iscsi_connection_fields("session3")
