import bz2
import gzip
import io
import lzma

import pytest

from diagdisk.inputs.chunks import iter_chunks
from diagdisk.errors import InputError
from diagdisk.logs.prefilter import Prefilter
from perf_data import STORAGE_KEYWORDS, generated_log

CHUNK_SIZES = [1, 2, 7, 100, 4096, 65536, 1 << 20, 16 << 20]


def read_all(source, chunk_size=16 << 20, warnings=None):
    return list(iter_chunks(source, chunk_size=chunk_size, warnings=warnings))


def assert_well_formed(chunks, text):
    assert b"".join(chunk for chunk, _ in chunks) == text
    line = 1
    for index, (chunk, first_line) in enumerate(chunks):
        assert chunk, "no empty chunks"
        assert first_line == line
        if index < len(chunks) - 1:
            assert chunk.endswith(b"\n")
        line += chunk.count(b"\n")


def candidate_lines_by_number(chunks, prefilter):
    """(file line number, text, families) of every candidate: what must not depend on chunking."""
    found = []
    for chunk, first_line in chunks:
        line_number, counted_to = first_line, 0
        for start, end, families in prefilter.candidate_lines(chunk):
            line_number += chunk.count(b"\n", counted_to, start)
            counted_to = start
            found.append((line_number, chunk[start:end], families))
    return found


@pytest.fixture(scope="module")
def small_log() -> bytes:
    return generated_log(20_000, 0.3, seed=11)


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
def test_every_chunk_size_gives_the_same_text_lines_and_candidates(tmp_path, storm_log, small_log, chunk_size):
    text = small_log if chunk_size < 100 else storm_log
    path = tmp_path / "messages"
    path.write_bytes(text)
    chunks = read_all(path, chunk_size)
    assert_well_formed(chunks, text)
    prefilter = Prefilter(STORAGE_KEYWORDS)
    assert candidate_lines_by_number(chunks, prefilter) == candidate_lines_by_number([(text, 1)], prefilter)


def test_chunks_are_about_the_requested_size(tmp_path, storm_log):
    path = tmp_path / "messages"
    path.write_bytes(storm_log)
    sizes = [len(chunk) for chunk, _ in read_all(path, 65536)]
    assert len(sizes) > 3
    assert all(65536 - 2000 < size <= 65536 for size in sizes[:-1])


@pytest.mark.parametrize("compress", [gzip.compress, lzma.compress, bz2.compress], ids=["gzip", "xz", "bzip2"])
def test_compressed_files_are_recognised_by_content_not_name(tmp_path, storm_log, compress):
    path = tmp_path / "messages-20261121"  # rotated logs often carry no suffix
    path.write_bytes(compress(storm_log))
    warnings = []
    for chunk_size in (4096, 16 << 20):
        assert_well_formed(read_all(path, chunk_size, warnings), storm_log)
    assert warnings == []


def test_plain_text_named_gz_is_read_as_text(tmp_path):
    path = tmp_path / "messages.gz"
    path.write_bytes(b"not compressed\n")
    assert read_all(path) == [(b"not compressed\n", 1)]


def test_concatenated_gzip_members_are_all_read(tmp_path):
    path = tmp_path / "messages.gz"
    path.write_bytes(gzip.compress(b"first\n") + gzip.compress(b"second\n"))
    assert b"".join(chunk for chunk, _ in read_all(path)) == b"first\nsecond\n"


class CountingStream(io.RawIOBase):
    """A non-seekable stream that remembers how much of the underlying data has been read."""

    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)
        self.consumed = 0

    def readable(self):
        return True

    def readinto(self, buffer):
        count = self._data.readinto(buffer)
        self.consumed += count
        return count


def test_gzip_is_streamed_not_inflated_whole(storm_log):
    compressed = gzip.compress(storm_log * 8)
    stream = CountingStream(compressed)
    chunks = iter_chunks(stream, chunk_size=65536)
    next(chunks)
    assert stream.consumed < len(compressed) / 4
    assert_well_formed(read_all(CountingStream(compressed), 65536), storm_log * 8)


@pytest.mark.parametrize("chunk_size", [4096, 16 << 20])
def test_corrupt_gzip_yields_what_was_read_then_warns(tmp_path, storm_log, chunk_size):
    compressed = bytearray(gzip.compress(storm_log * 4))
    middle = len(compressed) // 2
    compressed[middle : middle + 64] = bytes(64)
    path = tmp_path / "messages.gz"
    path.write_bytes(bytes(compressed))
    warnings = []
    chunks = read_all(path, chunk_size, warnings)
    text = b"".join(chunk for chunk, _ in chunks)
    assert len(warnings) == 1 and "corrupt or truncated" in warnings[0] and str(path) in warnings[0]
    # Deflate may decode damaged bytes into wrong text before it notices (at worst at the CRC check
    # that ends the member); what precedes the damage must come through intact.
    original = storm_log * 4
    assert len(text) > len(original) // 4 and text[: len(original) // 4] == original[: len(original) // 4]
    assert text.endswith(b"\n"), "an unfinished line is dropped, never passed on"
    assert_well_formed(chunks, text)


def test_truncated_gzip_warns(tmp_path, storm_log):
    compressed = gzip.compress(storm_log)
    path = tmp_path / "messages.gz"
    path.write_bytes(compressed[: len(compressed) * 2 // 3])
    warnings = []
    text = b"".join(chunk for chunk, _ in read_all(path, 4096, warnings))
    assert len(warnings) == 1
    assert len(text) > len(storm_log) // 3 and storm_log.startswith(text)


def test_corrupt_gzip_without_warnings_list_still_does_not_raise(tmp_path):
    path = tmp_path / "messages.gz"
    path.write_bytes(gzip.compress(b"line\n" * 1000)[:40])
    text = b"".join(chunk for chunk, _ in read_all(path, 64))
    assert (b"line\n" * 1000).startswith(text)


def test_crlf_lines_keep_their_carriage_return(tmp_path):
    path = tmp_path / "messages"
    path.write_bytes(b"one\r\ntwo\r\n")
    chunks = read_all(path, 3)
    assert chunks == [(b"one\r\n", 1), (b"two\r\n", 2)]


def test_last_line_without_newline_is_yielded(tmp_path):
    path = tmp_path / "messages"
    path.write_bytes(b"one\ntwo")
    assert read_all(path) == [(b"one\ntwo", 1)]
    assert read_all(path, 4) == [(b"one\n", 1), (b"two", 2)]


def test_line_longer_than_chunk_size_is_kept_whole(tmp_path):
    path = tmp_path / "messages"
    text = b"short\n" + b"x" * 10_000 + b"\nend\n"
    path.write_bytes(text)
    chunks = read_all(path, 64)
    assert chunks[0] == (b"short\n", 1)
    assert chunks[1][0].startswith(b"x" * 10_000 + b"\n") and chunks[1][1] == 2
    assert_well_formed(chunks, text)


def test_empty_file_yields_nothing(tmp_path):
    path = tmp_path / "messages"
    path.write_bytes(b"")
    assert read_all(path) == []
    empty_gzip = tmp_path / "messages.gz"
    empty_gzip.write_bytes(gzip.compress(b""))
    assert read_all(empty_gzip) == []


def test_file_objects_are_accepted(storm_log):
    assert_well_formed(read_all(io.BytesIO(storm_log), 4096), storm_log)
    assert_well_formed(read_all(io.BytesIO(gzip.compress(storm_log)), 4096), storm_log)


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot open"):
        read_all(tmp_path / "absent")


def test_chunk_size_must_be_positive(tmp_path):
    with pytest.raises(ValueError):
        read_all(io.BytesIO(b"x\n"), 0)
