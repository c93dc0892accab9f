"""Records grow with the distinct signatures a log holds, not with its length."""

from diagdisk.logs.source import read_log_source
from diagdisk.logs.records import RecordBuilder, signature
from perf_data import generated_log

_EXT4 = "May 24 11:09:27 db1 kernel: EXT4-fs error (device md0): ext4_find_entry:1455: inode #{inode}: " \
        "comm {comm}: reading directory lblock 0"


def _event(line: int, inode: int, comm: str = "rsync") -> dict:
    text = f"ext4_find_entry:1455: inode #{inode}: comm {comm}: reading directory lblock 0"
    return {"kind": "fs_error", "device": "md0", "text": text, "family": "fs", "grammar": "fs",
            "source": "messages", "line": line, "raw": _EXT4.format(inode=inode, comm=comm)}


def test_free_text_differing_only_in_numbers_is_one_signature():
    builder = RecordBuilder("messages")
    for line, inode in enumerate((3356266, 3744930, 17), start=1):
        builder.add(_event(line, inode))
    [record] = builder.records()
    assert record.count == 3
    assert record.fields["text"].startswith("ext4_find_entry:1455: inode #3356266:")  # the first event's
    assert [line for line, _ in record.samples] == [1, 2, 3]
    assert "#3744930" in record.samples[1][1]


def test_free_text_differing_in_words_is_another_signature():
    builder = RecordBuilder("messages")
    builder.add(_event(1, 3356266, "rsync"))
    builder.add(_event(2, 3356266, "postgres"))
    assert [record.count for record in builder.records()] == [1, 1]


def test_signature_ignores_field_order_and_keeps_other_fields_exact():
    fields = {"kind": "timeout", "qid": 8, "text": "I/O 709"}
    reordered = {"text": "I/O 525", "qid": 8, "kind": "timeout"}
    assert signature("mdt", fields) == signature("mdt", reordered)
    assert signature("mdt", fields) != signature("mdt", {**fields, "qid": 9})
    assert signature("mdt", fields) != signature("wall", fields)


def test_records_of_a_storm_level_off_as_it_grows(tmp_path):
    counts = []
    for size in (1_000_000, 8_000_000):
        path = tmp_path / f"messages-{size}"
        path.write_bytes(generated_log(size, 0.3, seed=5))
        result = read_log_source(path, "messages", None)
        counts.append((len(result.records), result.events))
    (small_records, small_events), (large_records, large_events) = counts
    assert large_events > 7 * small_events
    assert large_records < 1.3 * small_records


def test_times_that_go_back_and_forth_keep_one_entry_per_distinct_second():
    """A clock that keeps jumping back (here: the same hour over and over) must not make a record
    hold one entry per line; its counts per second stay exact."""
    builder = RecordBuilder("messages")
    for line in range(1, 200_001):
        second = 1_700_000_000 + line % 3600
        builder.add({"kind": "io_error", "device": "sdc", "source": "messages", "line": line,
                     "raw": f"line {line}", "_when": ("wall", None), "_sec": second})
    [record] = builder.records()
    assert record.count == 200_000
    assert len(record.seconds) < 70_000
    per_second: dict[int, int] = {}
    for second, count in zip(record.seconds, record.counts):
        per_second[second] = per_second.get(second, 0) + count
    assert len(per_second) == 3600
    assert per_second[1_700_000_000] == 200_000 // 3600          # lines 3600, 7200, ... 198000
    assert per_second[1_700_000_001] == 200_000 // 3600 + 1      # lines 1, 3601, ... 198001
