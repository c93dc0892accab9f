"""Decoding, sniffing, reading and walking files that were not written to be read by us.

Reading goes through diagdisk.inputs.chunks.iter_chunks, the reader the analysis uses for every log.
"""

from __future__ import annotations

import gzip
import os
import random
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagdisk.inputs import chunks, safeio
from diagdisk.inputs.chunks import iter_chunks
from diagdisk.errors import InputError, is_partial
from diagdisk.inputs.safeio import decode_log_bytes, looks_like_text, safe_walk

from hostile_builders import permission_denied_for


@pytest.mark.parametrize("data, expected", [
    (b"sd 0:0:1:0: [sdb] Medium Error", "sd 0:0:1:0: [sdb] Medium Error"),
    ("db1 caf\u00e9 \u2603".encode(), "db1 caf\u00e9 \u2603"),
    (b"Jan  1 h\xf4te-caf\xe9 kernel: I/O error", "Jan  1 h\u00f4te-caf\u00e9 kernel: I/O error"),
    ("utf8 \u00e9 and latin1 ".encode() + b"\xe9", "utf8 \u00e9 and latin1 \u00e9"),
    (b"nul\x00 in\x00side", "nul inside"),
    (b"one\r\ntwo\r\n", "one\ntwo\n"),
    (b"last line without newline\r", "last line without newline"),
    (b"progress 10%\rprogress 20%\n", "progress 10%\rprogress 20%\n"),
    (b"\xff\xfe\x00\x80", "\u00ff\u00fe\u0080"),
    (b"", ""),
])
def test_decode_log_bytes(data, expected):
    assert decode_log_bytes(data) == expected


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=4096))
def test_decode_log_bytes_accepts_any_bytes(data):
    text = decode_log_bytes(data)
    assert isinstance(text, str)
    assert "\x00" not in text
    assert "\r\n" not in text


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="\x00\r", blacklist_categories=("Cs",))))
def test_decode_log_bytes_keeps_valid_utf8_unchanged(text):
    assert decode_log_bytes(text.encode("utf-8")) == text


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=512).filter(lambda data: b"\x00" not in data and b"\r" not in data))
def test_decode_log_bytes_loses_no_byte(data):
    # Each invalid byte becomes one Latin-1 character, so every byte is accounted for.
    text = decode_log_bytes(data)
    assert len(text.encode("utf-8", errors="surrogatepass")) >= len(data) - data.count(b"\x00")
    assert len(text) >= len(data.decode("utf-8", errors="ignore"))


def test_looks_like_text():
    assert looks_like_text(b"Jan  1 00:00:00 db1 kernel: sd 0:0:1:0: [sdb] Sense Key : Medium Error\n" * 100)
    assert looks_like_text(b"Jan  1 h\xf4te kernel: I/O error\n" * 100)
    assert looks_like_text(b"\x1b[31mred\x1b[0m log line\n")
    assert looks_like_text(b"")
    # A crash leaves a run of NULs in syslog files; they are still logs.
    assert looks_like_text(b"\x00" * 6000 + b"Jan  1 00:00:00 db1 kernel: booting\n" * 20)
    assert not looks_like_text(random.Random(1).randbytes(8192))
    assert not looks_like_text(gzip.compress(random.Random(2).randbytes(8192)))
    assert not looks_like_text(b"LPKSHHRH" + bytes(range(32)) * 200)  # a systemd journal header shape


def read_lines(path, warnings=None, **bounds) -> list[tuple[int, str]]:
    """(line number, text) of every line, as the log reader sees them through iter_chunks."""
    lines = []
    for chunk, first_line in iter_chunks(path, chunk_size=bounds.pop("chunk_size", 65536), warnings=warnings,
                                         **bounds):
        pieces = chunk.split(b"\n")
        if chunk.endswith(b"\n"):
            pieces.pop()
        lines += [(first_line + index, decode_log_bytes(piece).rstrip("\r")) for index, piece in enumerate(pieces)]
    return lines


def test_binary_file_named_messages_is_skipped_with_a_partial_read_warning(tmp_path):
    messages = tmp_path / "messages"
    messages.write_bytes(random.Random(3).randbytes(20_000))
    warnings: list[str] = []
    assert read_lines(messages, warnings, name="var/log/messages") == []
    assert warnings == ["var/log/messages: binary data, not a text log; skipped"]
    assert is_partial(warnings[0])


def test_empty_file_gives_no_lines_and_a_note(tmp_path):
    empty = tmp_path / "messages"
    empty.write_bytes(b"")
    warnings: list[str] = []
    assert read_lines(empty, warnings, name="messages") == []
    assert warnings == ["messages: empty file; nothing to read"]
    assert not is_partial(warnings[0])


def test_mixed_encodings_crlf_and_nul_are_read_and_noted_once(tmp_path):
    log = tmp_path / "messages"
    log.write_bytes(b"Jan  1 db1 kernel: zero\r\nJan  1 caf\xe9 kernel: one\r\nJan  1 caf\xc3\xa9 kernel: t\x00wo\r\n"
                    b"Jan  1 h\xf4te kernel: t\x00hree\r\nno newline at end")
    warnings: list[str] = []
    assert read_lines(log, warnings, name="messages") == [
        (1, "Jan  1 db1 kernel: zero"),
        (2, "Jan  1 caf\u00e9 kernel: one"),
        (3, "Jan  1 caf\u00e9 kernel: two"),
        (4, "Jan  1 h\u00f4te kernel: three"),
        (5, "no newline at end"),
    ]
    assert warnings == [
        "messages:3: holds NUL bytes (first on this line); they are dropped",
        "messages:2: holds bytes that are not UTF-8 (first on this line); they are read as Latin-1",
    ]
    assert not any(is_partial(w) for w in warnings)


def test_huge_single_line_is_cut_without_holding_it(tmp_path):
    # The 200 MB line, scaled down with the caps: memory stays near one chunk plus the kept
    # part of the line, whatever the length of the line.
    log = tmp_path / "messages"
    with open(log, "wb") as handle:
        handle.write(b"before\n")
        for _ in range(160):
            handle.write(b"A" * 65536)
        handle.write(b"\nafter\n")
    warnings: list[str] = []
    tracemalloc.start()
    try:
        lines = read_lines(log, warnings, name="messages", chunk_size=65536, max_line_bytes=100_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [number for number, _ in lines] == [1, 2, 3]
    assert lines[1][1] == "A" * 100_000
    assert lines[2] == (3, "after")
    assert warnings == ["messages:2: line of at least 100000 bytes; kept its first 100000 bytes "
                        "(longer lines are cut the same way)"]
    assert peak < 2 << 20, f"peak {peak} bytes for a {160 * 65536} byte line"


def test_file_over_the_per_file_cap_keeps_its_first_lines(tmp_path):
    log = tmp_path / "messages"
    log.write_bytes(b"".join(b"line %04d\n" % index for index in range(1000)))
    warnings: list[str] = []
    lines = read_lines(log, warnings, name="messages", chunk_size=256, max_bytes=1000)
    assert lines == [(index + 1, "line %04d" % index) for index in range(100)]
    assert warnings == ["messages: read its first 1000 bytes of text, the per-file cap; the rest is not analysed "
                        "(see --max-file-size)"]
    assert is_partial(warnings[0])


def test_file_still_being_written_is_read_up_to_its_size_at_open(tmp_path):
    log = tmp_path / "messages"
    log.write_bytes(b"one\ntwo\n")
    warnings: list[str] = []
    chunks = iter_chunks(log, chunk_size=4, warnings=warnings, name="messages")
    assert next(chunks) == (b"one\n", 1)
    with open(log, "ab") as writer:  # the writer goes on while we read
        writer.write(b"three\n" * 10_000)
    assert list(chunks) == [(b"two\n", 2)]
    assert warnings == ["messages: the file grew while it was read; read the 8 bytes it held when reading started"]


def gzip_rotation(tmp_path: Path, lines: int = 20_000) -> tuple[Path, bytes]:
    body = b"".join(b"Jan  1 00:00:%02d db1 kernel: line %06d\n" % (index % 60, index) for index in range(lines))
    # Incompressible filler keeps the damage from landing in a trailing dictionary-only block.
    body += b"".join(b"%s\n" % random.Random(index).randbytes(30).hex().encode() for index in range(3000))
    rotated = tmp_path / "messages-20240101.gz"
    rotated.write_bytes(gzip.compress(body))
    return rotated, body


def test_gzip_rotation_truncated_halfway_keeps_what_was_read(tmp_path):
    rotated, _ = gzip_rotation(tmp_path)
    data = rotated.read_bytes()
    rotated.write_bytes(data[: len(data) // 2])
    warnings: list[str] = []
    lines = read_lines(rotated, warnings, name="var/log/messages-20240101.gz")
    assert 1000 < len(lines) < 23_000
    assert lines[0] == (1, "Jan  1 00:00:00 db1 kernel: line 000000")
    assert len(warnings) == 1 and is_partial(warnings[0])
    assert warnings[0].startswith("var/log/messages-20240101.gz: gzip data is corrupt or truncated after ")
    assert "the rest is not analysed" in warnings[0]


def test_gzip_rotation_corrupt_halfway_keeps_what_was_read(tmp_path):
    rotated, _ = gzip_rotation(tmp_path)
    data = bytearray(rotated.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 200] = b"\x00\xff" * 100
    rotated.write_bytes(bytes(data))
    warnings: list[str] = []
    lines = read_lines(rotated, warnings)
    assert len(lines) > 1000
    assert len(warnings) == 1 and f"{rotated}: gzip data is corrupt or truncated after" in warnings[0]


def test_compression_is_recognised_by_content_not_name(tmp_path):
    sneaky = tmp_path / "messages.1"
    sneaky.write_bytes(gzip.compress(b"Jan  1 db1 kernel: compressed\n"))
    assert read_lines(sneaky) == [(1, "Jan  1 db1 kernel: compressed")]


def test_unreadable_log_is_a_one_line_input_error(tmp_path, monkeypatch):
    # Tests run as root in CI, where chmod 000 would not stop a read: simulate the refusal.
    log = tmp_path / "messages"
    log.write_bytes(b"line\n")
    permission_denied_for(monkeypatch, chunks, "open", log)
    with pytest.raises(InputError) as caught:
        read_lines(log, name="var/log/messages")
    assert caught.value.one_line() == "var/log/messages: cannot open: Permission denied"


def make_tree(root: Path) -> None:
    (root / "var/log").mkdir(parents=True)
    (root / "sos_commands/host").mkdir(parents=True)
    (root / "sos_commands/host/hostname").write_text("db1\n")
    (root / "var/log/messages").write_text("m\n")
    (root / "hostname").symlink_to("sos_commands/host/hostname")
    (root / "escape").symlink_to("/etc/passwd")
    (root / "loop").symlink_to(".")
    (root / "dangling").symlink_to("nowhere")
    os.mkfifo(root / "fifo")


def test_safe_walk_stays_inside_and_skips_special_files(tmp_path):
    root = tmp_path / "sosreport"
    make_tree(root)
    found = [path.relative_to(root).as_posix() for path in safe_walk(root)]
    assert found == ["hostname", "sos_commands/host/hostname", "var/log/messages"]


def test_safe_walk_copes_with_thousands_of_rotated_logs(tmp_path):
    logs = tmp_path / "var/log"
    logs.mkdir(parents=True)
    for index in range(3000):
        (logs / f"messages-{index:05d}").write_bytes(b"")
    found = list(safe_walk(tmp_path))
    assert len(found) == 3000
    assert found == sorted(found)


def test_safe_walk_skips_unreadable_folders_and_files_with_a_warning(tmp_path, monkeypatch):
    root = tmp_path / "sosreport"
    make_tree(root)
    (root / "secret").mkdir()
    (root / "secret/shadow").write_text("x\n")
    permission_denied_for(monkeypatch, safeio.os, "scandir", root / "secret")
    permission_denied_for(monkeypatch, safeio.os, "open", root / "var/log/messages")
    warnings: list[str] = []
    found = [path.relative_to(root).as_posix() for path in safe_walk(root, warnings)]
    assert found == ["hostname", "sos_commands/host/hostname"]
    assert warnings == [
        f"{root / 'secret'}: permission denied; folder skipped",
        f"{root / 'var/log/messages'}: permission denied; skipped",
    ]


def test_safe_walk_on_an_unreadable_root_is_an_input_error(tmp_path, monkeypatch):
    permission_denied_for(monkeypatch, safeio.os, "scandir", tmp_path)
    with pytest.raises(InputError, match="permission denied"):
        list(safe_walk(tmp_path))
