"""The storage path model: what links the text shows, and each unit's path built from them."""

import os

import pytest

from diagdisk.diagnosis.analysis import analyze
from diagdisk.topology.paths import PathModel, parse_by_path, parse_sysfs_path, transport_of_driver

SYS_BLOCK = """/sys/block:
total 0
lrwxrwxrwx 1 0 0 0 Mar 19 02:00 sda -> ../devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda
lrwxrwxrwx 1 0 0 0 Mar 19 02:00 sdb -> ../devices/pci0000:00/0000:00:01.0/0000:01:00.0/host2/port-2:0/expander-2:0/port-2:0:1/end_device-2:0:1/target2:0:1/2:0:1:0/block/sdb
lrwxrwxrwx 1 0 0 0 Mar 19 02:00 sdc -> ../devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdc
lrwxrwxrwx 1 0 0 0 Mar 19 02:00 nvme0n1 -> ../devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1
lrwxrwxrwx 1 0 0 0 Mar 19 02:00 vda -> ../devices/pci0000:00/0000:00:05.0/virtio2/block/vda
"""


@pytest.mark.parametrize("path, parts", [
    ("../devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda",
     {"pcis": ["0000:00:17.0"], "ata_port": "ata1", "host": 0, "hctl": "0:0:0:0", "transport": "sata"}),
    ("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/host2/port-2:0/expander-2:0/port-2:0:1/end_device-2:0:1/"
     "target2:0:1/2:0:1:0/block/sdb",
     {"pcis": ["0000:00:01.0", "0000:01:00.0"], "expander": "expander-2:0", "host": 2, "transport": "sas"}),
    ("/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdc",
     {"usb_port": "2-1", "host": 6, "transport": "usb"}),
    ("../devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1",
     {"pcis": ["0000:00:1d.0", "0000:3d:00.0"], "nvme_ctrl": "nvme0", "transport": "nvme"}),
    ("../devices/pci0000:00/0000:00:05.0/virtio2/block/vda", {"virtual": "virtio2", "transport": "virtio"}),
    ("../devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/f8b3781a-1e82-4818-a1c3-63d806ec15bb/host0/"
     "target0:0:0/0:0:0:0/block/sda", {"virtual": "VMBUS:00", "transport": "hyperv", "host": 0}),
    ("../devices/pci0000:00/0000:00:03.0/0000:05:00.0/host10/rport-10:0-0/target10:0:0/10:0:0:1/block/sde",
     {"rport": "rport-10:0-0", "transport": "fc"}),
    ("../devices/platform/host3/session1/target3:0:0/3:0:0:0/block/sdf", {"session": "session1", "transport": "iscsi"}),
])
def test_a_sysfs_device_path_shows_every_part(path, parts):
    chain = parse_sysfs_path(path)
    for key, value in parts.items():
        assert getattr(chain, key) == value, key


def test_a_path_that_is_no_device_path_shows_nothing():
    assert parse_sysfs_path("../../sda") is None


@pytest.mark.parametrize("name, transport, extra", [
    ("pci-0000:00:1f.2-ata-3", "sata", {"ata_port": "ata3", "pcis": ["0000:00:1f.2"]}),
    ("pci-0000:03:00.0-sas-exp0x500605b0000272bf-phy3-lun-0", "sas", {"expander": "exp0x500605b0000272bf"}),
    ("pci-0000:00:14.0-usb-0:2:1.0-scsi-0:0:0:0", "usb", {}),
    ("ip-192.168.1.10:3260-iscsi-iqn.2003-01.org.linux-iscsi.t:tgt-lun-1", "iscsi", {}),
    ("pci-0000:05:00.0-fc-0x50060e80166cfa01-lun-0", "fc", {}),
    ("pci-0000:01:00.0-nvme-1", "nvme", {}),
    ("virtio-pci-0000:00:05.0", "virtio", {}),
    ("xen-vbd-51712", "xen", {}),
])
def test_a_by_path_name_shows_its_transport(name, transport, extra):
    chain = parse_by_path(name)
    assert chain.transport == transport
    for key, value in extra.items():
        assert getattr(chain, key) == value


@pytest.mark.parametrize("driver, transport", [
    ("ahci", "sata"), ("ata_piix", "sata"), ("mpt3sas", "sas"), ("megaraid_sas", "sas"), ("hpsa", "sas"),
    ("uas", "usb"), ("usb-storage", "usb"), ("xhci_hcd", "usb"), ("qla2xxx", "fc"), ("lpfc", "fc"),
    ("iscsi_tcp", "iscsi"), ("storvsc", "hyperv"), ("virtio_scsi", "virtio"), ("vmw_pvscsi", "pvscsi"),
    ("sym53c8xx", "spi"), ("aic7xxx", "spi"), ("nvme", "nvme"), ("e1000e", None),
])
def test_the_transport_follows_the_driver(driver, transport):
    assert transport_of_driver(driver) == transport


def _event(**fields):
    return {"source": "messages", "line": 1, **fields}


def test_the_ports_of_the_only_ahci_controller_belong_to_it():
    model = PathModel()
    model.learn_event(_event(kind="unclassified", driver="ahci", pci="0000:03:00.0", text="AHCI 0001.0301 32 slots"))
    model.learn_event(_event(kind="attach", detail="host", host=2, driver="ahci"))
    path = model.path(_event(kind="timeout", unit="ata3", ata_port="ata3"))
    assert (path.transport, path.port, path.adapter, path.pci) == ("sata", "ata3", "pci 0000:03:00.0", "0000:03:00.0")


def test_two_controllers_of_one_kind_leave_a_port_unassigned():
    model = PathModel()
    for pci in ("0000:00:17.0", "0000:03:00.0"):
        model.learn_event(_event(kind="unclassified", driver="ahci", pci=pci, text="AHCI"))
    path = model.path(_event(kind="timeout", unit="ata3", ata_port="ata3"))
    assert path.pci is None and "not named" in path.adapter


def test_two_sources_that_disagree_drop_the_link():
    model = PathModel()
    model.learn_event(_event(kind="attach", detail="host", host=2, driver="ahci"))
    model.learn_event(_event(kind="attach", detail="host", host=2, driver="mpt3sas"))
    assert model.host_driver[2] is None
    assert "conflicting" in model.evidence["host2 driver"]


def test_aer_ties_a_function_to_its_root_port_and_usb_ports_to_their_bus():
    model = PathModel()
    model.learn_event(_event(kind="aer", pci="0000:00:1c.0", aer_agent="0000:01:00.0"))
    model.learn_event(_event(kind="attach", detail="pci", nvme_ctrl="nvme0", pci="0000:01:00.0"))
    model.learn_event(_event(kind="unclassified", driver="xhci_hcd", pci="0000:00:14.0",
                             text="new USB bus registered, assigned bus number 2"))
    nvme = model.path(_event(kind="nvme_reset", unit="nvme0", nvme_ctrl="nvme0"))
    assert (nvme.transport, nvme.adapter, nvme.pci, nvme.bus) == ("nvme", "nvme0", "0000:01:00.0", "0000:00:1c.0")
    usb = model.path(_event(kind="transport", unit="usb 2-1.4", usb_port="2-1.4"))
    assert (usb.transport, usb.port, usb.enclosure, usb.adapter) == ("usb", "usb 2-1.4", "usb 2-1.4", "pci 0000:00:14.0")


def test_a_sosreport_listing_of_sys_block_gives_every_device_its_path(tmp_path):
    (tmp_path / "sos_commands/block").mkdir(parents=True)
    (tmp_path / "sos_commands/block/ls_-lanR_.sys.block").write_text(SYS_BLOCK)
    (tmp_path / "sos_commands/kernel").mkdir(parents=True)
    (tmp_path / "sos_commands/kernel/dmesg").write_text(
        "[ 10.0] sd 2:0:1:0: [sdb] tag#1 FAILED Result: hostbyte=DID_NO_CONNECT driverbyte=DRIVER_OK\n")
    topology = analyze([str(tmp_path)]).topology
    assert topology.hctl_to_name["2:0:1:0"] == "sdb"      # the sysfs link shows both
    sdb = topology.paths.path(_event(unit="2:0:1:0", hctl="2:0:1:0", device="sdb", host=2), topology.find("sdb"))
    assert (sdb.transport, sdb.enclosure, sdb.pci, sdb.bus) == ("sas", "expander-2:0", "0000:01:00.0", "0000:00:01.0")
    vda = topology.paths.path(_event(unit="vda", device="vda"))
    assert vda.virtual and vda.transport == "virtio"


def test_the_collector_lists_sys_block_as_the_path_model_reads_it(tmp_path):
    from diagdisk.collect.items import _listing, Context
    block = tmp_path / "sys/block"
    block.mkdir(parents=True)
    os.symlink("../devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda", block / "sda")
    from datetime import datetime
    ctx = Context(root=tmp_path, since=datetime(2024, 1, 1), timeout=5, deadline=float("inf"), search_path=None,
                  run_commands=False, privileged=False)
    text = _listing("/sys/block")(ctx)
    from diagdisk.topology.tables import read_sysfs_links
    links = read_sysfs_links(text).records
    assert parse_sysfs_path(links["sda"]).ata_port == "ata1"


def test_the_one_nvme_function_is_the_one_nvme_controller_and_two_are_not_guessed():
    model = PathModel()
    model.learn_event(_event(kind="nvme_reset", detail="down", nvme_ctrl="nvme0", family="nvme"))
    model.learn_event(_event(kind="info", detail="pci_enable", pci="0000:01:00.0", family="nvme"))
    assert model.path(_event(kind="nvme_reset", unit="nvme0", nvme_ctrl="nvme0")).pci == "0000:01:00.0"
    model.learn_event(_event(kind="info", detail="pci_enable", pci="0000:02:00.0", family="nvme"))
    assert model.path(_event(kind="nvme_reset", unit="nvme0", nvme_ctrl="nvme0")).pci is None


def test_both_root_hubs_of_the_one_usb_host_controller_are_its():
    model = PathModel()
    model.learn_event(_event(kind="controller_error", driver="xhci_hcd", pci="0000:01:00.0", text="HC died"))
    ports = [model.path(_event(kind="transport", unit=f"usb {port}", usb_port=port)) for port in ("1-1.3", "2-1")]
    assert [p.adapter for p in ports] == ["pci 0000:01:00.0", "pci 0000:01:00.0"]
    model.learn_event(_event(kind="info", driver="ehci-pci", pci="0000:00:1d.0", text="EHCI"))
    assert model.path(_event(kind="transport", unit="usb 2-1", usb_port="2-1")).pci is None


def test_a_driver_line_naming_no_controller_is_about_its_only_controller():
    model = PathModel()
    model.learn_event(_event(kind="info", driver="megaraid_sas", pci="0000:03:00.0", text="FW now in Ready state"))
    fault = model.path(_event(kind="controller_error", detail="firmware_fault", driver="megasas"))
    assert (fault.adapter, fault.pci) == ("pci 0000:03:00.0", "0000:03:00.0")
