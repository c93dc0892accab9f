"""Small logs of the situations that fooled the verdict's fixed order (each a var/log/messages):
the part an engineer names is the weighing's first, whatever the rules' order would have said."""

from pathlib import Path

import pytest

from diagdisk.diagnosis.analysis import analyze
from diagdisk.diagnosis.engine import evaluate_rules, load_rules

PROBES = Path(__file__).resolve().parent / "probes"
# probe -> (part class, names any of which the first suspect must carry)
EXPECTED = {
    # an old medium error on sdb, then three logical drives time out within 3 s: the controller now
    "shared-controller-stall-after-old-medium-error": ("controller", {"host0"}),
    # a PERC logical drive's medium error: a member disk behind the controller, not "sda"
    "raid-logical-drive-medium-error": ("disk", {"0:2:0:0", "sda"}),
    # an iSCSI LUN of an LIO target answers a medium error: the array behind the path
    "iscsi-lun-medium-error": ("path", {"4:0:0:0", "sdb"}),
    # four disks of one HBA report hardware errors within 3 s: the part they share
    "four-disks-hardware-error-one-hba": ("controller", {"host2"}),
    # a VMware guest's virtual disks time out: the hypervisor's storage
    "vmware-guest-timeouts": ("path", {"host2", "2:0:0:0", "sda", "2:0:1:0", "sdb"}),
    # an EC2 instance's NVMe (EBS) times out: the volume or its path
    "ec2-nvme-timeouts": ("path", {"nvme0"}),
    # a driver in no grammar's list: its fault state and failed resets, read in every driver's words
    "mpi3mr-controller-fault": ("controller", {"mpi3mr0"}),
}


@pytest.mark.parametrize("probe", sorted(EXPECTED))
def test_probe_names_the_part_an_engineer_names(probe):
    _, verdict = evaluate_rules(load_rules(), analyze([str(PROBES / probe)], jobs=1))
    assert verdict["status"] not in ("healthy", "unexplained")
    first = verdict["suspects"][0]
    fru, names = EXPECTED[probe]
    assert first["fru"] == fru
    assert names & {first.get("hctl"), first.get("device"), *first.get("aliases", [])}


def test_the_logical_drive_verdict_sends_the_engineer_to_the_controller_s_log():
    _, verdict = evaluate_rules(load_rules(), analyze([str(PROBES / "raid-logical-drive-medium-error")], jobs=1))
    assert "member disk" in verdict["headline"] and "event log" in verdict["headline"]


def test_every_probe_has_an_expectation():
    assert {p.name for p in PROBES.iterdir() if p.is_dir()} == set(EXPECTED)
