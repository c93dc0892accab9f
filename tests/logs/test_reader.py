"""LogReader: how physical lines become messages before the grammars see them."""

from diagdisk.logs.reader import LogReader


def _read(tmp_path, text: str):
    path = tmp_path / "messages"
    path.write_text(text)
    return LogReader().read(path, "var/log/messages")


def test_rsyslog_escaped_newline_splits_one_printk_into_its_messages(tmp_path):
    result = _read(tmp_path, (
        "2024-03-17T09:12:44.001+00:00 web kernel: md/raid1:md0: Disk failure on sdc1, disabling device."
        "#012md/raid1:md0: Operation continuing on 1 devices.\n"))
    assert result.unparsed_candidates == 0
    kinds = [(e["kind"], e.get("md")) for e in result.events]
    assert kinds == [("md_failure", "md0"), ("md_degraded", "md0")]
    assert {e["line"] for e in result.events} == {1}


def test_continuation_line_without_header_joins_the_message_before(tmp_path):
    result = _read(tmp_path, (
        "Mar  2 18:07:17 old kernel: SCSI disk error : host 0 channel 0 id 1 lun 0\n"
        "return code = 27010000\n"
        "Mar  2 18:07:18 old kernel: nothing to see\n"))
    assert result.unparsed_candidates == 0
    [event] = result.events
    assert event["kind"] == "scsi_result" and event["line"] == 1 and event["result"] == 0x27010000
    assert (event["host"], event["channel"], event["target"], event["lun"]) == (0, 0, 1, 0)


def test_candidate_no_grammar_accepts_is_counted_and_sampled(tmp_path):
    result = _read(tmp_path, "Mar  2 18:07:17 h kernel: raid1: Disk failure on, a wording no md grammar knows\n")
    assert result.unparsed_candidates == 1
    assert result.unparsed_samples[0][0] == 1


def test_a_known_device_line_no_grammar_reads_is_kept_unclassified(tmp_path):
    result = _read(tmp_path, "Mar  2 18:07:17 h kernel: md/raid1:md0: Disk failure on, a wording no md grammar knows\n")
    assert result.unparsed_candidates == 0
    [event] = result.events
    assert event["kind"] == "unclassified" and event["md"] == "md0"
    assert event["text"] == "Disk failure on, a wording no md grammar knows"


def test_words_of_trouble_count_only_on_a_storage_device_line(tmp_path):
    result = _read(tmp_path, (
        "Mar  2 18:07:17 h NetworkManager[812]: <error> device eth0 failed\n"
        "Mar  2 18:07:18 h kernel: e1000e 0000:00:19.0 eth0: Reset adapter unexpectedly\n"
        "Mar  2 18:07:19 h kernel: sd 2:0:1:0: [sdb] frobnication error the grammars do not know\n"))
    assert result.unparsed_candidates == 0
    [event] = result.events
    assert (event["kind"], event["hctl"], event["device"]) == ("unclassified", "2:0:1:0", "sdb")


def test_an_indented_line_of_one_printk_takes_the_time_of_the_line_it_belongs_to(tmp_path):
    """dmesg -T prints the second line of a multi-line printk indented, with no stamp."""
    result = _read(tmp_path, (
        "[Tue Mar 19 02:17:46 2024] md/raid1:md0: Disk failure on sdc1, disabling device.\n"
        "                           md/raid1:md0: Operation continuing on 1 devices.\n"))
    failure, degraded = result.events
    assert degraded["kind"] == "md_degraded" and degraded["_wall"] == failure["_wall"]


def test_a_word_of_trouble_inside_a_message_does_not_cut_it_in_two(tmp_path):
    """"FAULT" is one of the broad tier's words; the tail from it reads alone (2.4 printed that line
    bare), yet the line is one message of one adapter."""
    result = _read(tmp_path, "Mar  2 18:07:17 h kernel: mptbase: ioc0: WARNING -            FAULT code = 2651h\n")
    [event] = result.events
    assert (event["kind"], event["adapter"], event["fault_code"]) == ("controller_error", "ioc0", 0x2651)


def test_a_line_only_the_fallback_read_does_not_teach_its_shape_to_the_next_one():
    """'hda: possibly failed opcode: 0xc8c8' is no ide line (one opcode byte), so the fallback reads
    it as a device's line; 'hda: possibly failed opcode: 0xc8' has the same shape without its hex
    digits and must still be read by the ide grammar (a hostile test once made this order-dependent)."""
    from diagdisk.logs.grammar import FALLBACK_FAMILY, MessageParser
    parser = MessageParser(on_demand=True)
    families = ("ide", FALLBACK_FAMILY)
    odd = parser.parse("hda: possibly failed opcode: 0xc8c8", families)
    assert odd is not None and odd["family"] == FALLBACK_FAMILY
    real = parser.parse("hda: possibly failed opcode: 0xc8", families)
    assert (real["family"], real["kind"]) == ("ide", "ata_detail")
