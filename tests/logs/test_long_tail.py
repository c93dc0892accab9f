"""Lines outside the family grammars, read the way a log is read (prefilter, framing, grammars):
any storage driver's line on its adapter, the userspace storage daemons' lines on the part they
name, and the kernel's benign notices as no error."""

from __future__ import annotations

import pytest

from diagdisk.decode.drivers import is_storage_driver, module_name, transport_of_driver
from diagdisk.logs.reader import LogReader, as_event

HEADER = "Nov 20 10:00:{:02d} host {}: "


def read(tmp_path, lines: list[tuple[str, str]]) -> list[dict]:
    path = tmp_path / "messages"
    path.write_text("".join(HEADER.format(i, tag) + text + "\n" for i, (tag, text) in enumerate(lines)))
    return [as_event(e) for e in LogReader().read(path, "var/log/messages").events]


def test_a_controller_of_a_driver_no_grammar_knows_is_read_on_its_adapter(tmp_path):
    events = read(tmp_path, [("kernel", "mpi3mr0: fault code(0x5f07): Subcode(0x0) Info(0x0)"),
                             ("kernel", "mpi3mr0: soft reset failed, initiating diag reset"),
                             ("kernel", "mpi3mr0: controller reset failed")])
    assert [(e["kind"], e.get("detail")) for e in events] == [("unclassified", None), ("reset", "failed"),
                                                               ("reset", "failed")]
    assert {(e["adapter"], e["driver"]) for e in events} == {("mpi3mr0", "mpi3mr")}


def test_other_drivers_trouble_is_no_storage_event(tmp_path):
    events = read(tmp_path, [("kernel", "e1000e 0000:00:19.0: eth0: Reset adapter unexpectedly"),
                             ("kernel", "iwlwifi 0000:03:00.0: Microcode SW error detected"),
                             ("kernel", "virtio_net virtio0: output.0:id 0 is not a head! error")])
    assert events == []


def test_a_line_one_family_reads_whole_is_not_cut_at_a_drivers_name(tmp_path):
    events = read(tmp_path, [("kernel", "sd 0:2:0:0: [sda] tag#12 megasas: RESET cmd=28 retries=0")])
    assert [e["kind"] for e in events if e["kind"] != "scsi_context"] == ["reset"]


@pytest.mark.parametrize("tag,text,kind,detail,identity", [
    ("iscsid", "Kernel reported iSCSI connection 1:0 error (1020 - ISCSI_ERR_TCP_CONN_CLOSE: TCP connection "
               "closed) state (3)", "transport", "iscsi_conn_error", {"iscsi_conn": "1:0", "iscsi_session": 1}),
    ("multipathd[2919]", "36001405130d0940e1914873a58afb4ad: sdb - tur checker reports path is down",
     "path_failure", "checker", {"device": "sdb"}),
    ("smartd[1586]", "Device: /dev/sdb [SAT], 16 Currently unreadable (pending) sectors", "smart_alert",
     "pending_sectors", {"device": "sdb"}),
    ("mdadm[1298]", "Fail event detected on md device /dev/md0, component device /dev/sdc2", "md_failure",
     "mdadm", {"md": "md0", "device": "sdc", "partition": "sdc2"}),
    ("zed", "eid=5 class=statechange pool_guid=0x7C4F5B2E1A3D9F01 vdev_path=/dev/sdb1 vdev_state=FAULTED",
     "md_failure", "zfs_vdev", {"device": "sdb"}),
    ("dmeventd[812]", "WARNING: Snapshot vg0-snap1 is now 80.00% full.", "dm_error", "snapshot_full",
     {"dm": "vg0-snap1"}),
])
def test_storage_daemons_lines_are_events_on_what_they_name(tmp_path, tag, text, kind, detail, identity):
    [event] = read(tmp_path, [(tag, text)])
    assert (event["kind"], event.get("detail")) == (kind, detail)
    assert {k: event.get(k) for k in identity} == identity


def test_benign_notices_are_read_as_such(tmp_path):
    events = read(tmp_path, [("kernel", "sd 2:0:0:0: [sdb] Asking for cache data failed"),
                             ("kernel", "sd 2:0:0:0: [sdb] Assuming drive cache: write through"),
                             ("kernel", "blk_update_request: 23 callbacks suppressed"),
                             ("smartd[9]", "Device: /dev/sda [SAT], SMART Usage Attribute: 194 Temperature_Celsius "
                                           "changed from 35 to 36")])
    assert [(e["kind"], e.get("detail")) for e in events] == [
        ("info", "cache_mode"), ("info", "cache_mode"), ("info", "rate_limited"), ("info", "smart_attribute")]
    assert events[2]["suppressed"] == 23


def test_numbered_vendor_messages_keep_their_number(tmp_path):
    events = read(tmp_path, [("kernel", "lpfc 0000:04:00.0: 1:(0):0299 Invalid SLI4 something failed"),
                             ("kernel", "qla2xxx [0000:05:00.0]-801c:3: Abort command issued nexus=3:0:1 --  1 2002.")])
    assert [e.get("msg_id") for e in events] == ["0299", "801c"]


def test_the_driver_table_gives_transports_and_module_names():
    assert [transport_of_driver(d) for d in ("mpi3mr", "ahci", "arcmsr", "qla2xxx", "mptspi", "mptbase", "e1000e")] \
        == ["sas", "sata", "sas", "fc", "spi", None, None]
    assert is_storage_driver("mptbase") and not is_storage_driver("iwlwifi")
    assert module_name("megasas") == "megaraid_sas" and module_name("ahci") == "ahci"
