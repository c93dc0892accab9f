"""Reports whose every line keeps its own kind (PCIe AER): the later lines merge into the report
they continue, and a line that continues nothing still stands as an event of its kind."""

from diagdisk.logs.reader import LogReader
from diagdisk.logs.stitch import stitch


def _events(tmp_path, lines: list[str]) -> list[dict]:
    path = tmp_path / "messages"
    path.write_text("".join(f"Mar  2 18:07:{17 + i // 10:02d} host kernel: {line}\n" for i, line in enumerate(lines)))
    result = LogReader().read(path, "var/log/messages")
    assert result.unparsed_candidates == 0, result.unparsed_samples
    return stitch(result.events)


def test_an_aer_report_is_one_event_named_by_the_port_and_its_source(tmp_path):
    [report] = _events(tmp_path, [
        "pcieport 0000:00:1c.0: AER: Corrected error received: 0000:01:00.0",
        "nvme 0000:01:00.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
        "nvme 0000:01:00.0: AER:   device [144d:a808] error status/mask=00000041/0000e000",
        "nvme 0000:01:00.0: AER:    [ 0] RxErr                  (First)",
        "nvme 0000:01:00.0: AER:    [ 6] BadTLP                ",
    ])
    assert (report["kind"], report["detail"]) == ("aer", "corrected")
    assert (report["pci"], report["aer_agent"]) == ("0000:00:1c.0", "0000:01:00.0")
    assert (report["aer_type"], report["aer_status"]) == ("Physical Layer", "RxErr, BadTLP")
    assert len(report["raw"].splitlines()) == 5


def test_a_requester_id_without_its_domain_still_names_the_source(tmp_path):
    [report] = _events(tmp_path, [
        "pcieport 0000:00:1c.0: AER: Uncorrected (Non-Fatal) error received: id=0300",
        "mpt2sas 0000:03:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, id=0300(Requester ID)",
        "mpt2sas 0000:03:00.0:   device [1000:0072] error status/mask=00004000/00000000",
        "mpt2sas 0000:03:00.0:    [14] Completion Timeout     (First)",
    ])
    assert (report["detail"], report["aer_agent"], report["aer_status"]) == ("nonfatal", "03:00.0", "Completion Timeout")


def test_the_2_6_18_block_takes_its_severity_from_the_line_after_its_banner(tmp_path):
    [report] = _events(tmp_path, [
        "+------ PCI-Express Device Error ------+",
        "Error Severity^I^I: Uncorrected (Fatal)",
        "PCIE Bus Error type^I: Transaction Layer",
        "Completion Timeout    ^I: First",
        "Requester ID^I^I: 0300",
        "VendorID=1000h, DeviceID=0058h, Bus=03h, Device=00h, Function=00h",
    ])
    assert (report["kind"], report["detail"]) == ("aer", "fatal")
    assert (report["aer_type"], report["aer_agent"], report["aer_status"]) == ("Transaction Layer", "03:00.0", "Completion Timeout")


def test_each_error_message_the_port_receives_is_its_own_report(tmp_path):
    reports = _events(tmp_path, [
        "pcieport 0000:00:1c.0: AER: Corrected error received: 0000:01:00.0",
        "nvme 0000:01:00.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
        "nvme 0000:01:00.0: AER:    [ 0] RxErr                  (First)",
        "pcieport 0000:00:1c.0: AER: Corrected error received: 0000:01:00.0",
        "nvme 0000:01:00.0: AER: PCIe Bus Error: severity=Corrected, type=Data Link Layer, (Transmitter ID)",
        "nvme 0000:01:00.0: AER:    [12] Timeout               ",
    ])
    assert [(r["line"], r["aer_type"], r["aer_status"]) for r in reports] == [
        (1, "Physical Layer", "RxErr"), (4, "Data Link Layer", "Timeout")]


def test_a_line_of_another_function_starts_its_own_report(tmp_path):
    reports = _events(tmp_path, [
        "pcieport 0000:00:1c.0: AER: Multiple Corrected error received: 0000:01:00.0",
        "nvme 0000:01:00.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
        "nvme 0000:01:00.0: AER:    [ 0] RxErr                  (First)",
        "nvme 0000:02:00.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
        "nvme 0000:02:00.0: AER:    [ 0] RxErr                  (First)",
    ])
    assert [(r["pci"], r.get("aer_agent")) for r in reports] == [("0000:00:1c.0", "0000:01:00.0"), ("0000:02:00.0", None)]


def test_a_continuation_line_alone_is_an_event_of_its_kind(tmp_path):
    [event] = _events(tmp_path, ["nvme 0000:01:00.0: AER:    [ 0] RxErr                  (First)"])
    assert (event["kind"], event["detail"], event["pci"], event["aer_status"]) == ("aer", "error_bit", "0000:01:00.0", "RxErr")
