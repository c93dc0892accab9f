"""Read a log in large byte chunks that end on line boundaries, decompressing as it goes.

Sample input::

    >>> import io
    >>> list(iter_chunks(io.BytesIO(b"one\\ntwo\\nthree"), chunk_size=5))
    [(b'one\\n', 1), (b'two\\n', 2), (b'three', 3)]

Each chunk is yielded with the line number (1-based) of its first line, so a consumer turns an
offset inside the chunk into a file line number with `first_line + chunk.count(b"\\n", 0, offset)`.
Every chunk but the last ends with b"\\n"; the last one may hold a final line without a newline.
A line longer than `chunk_size` is carried until its newline arrives, so chunks can be larger.

Compression is recognised by magic bytes, not by file name (sosreports carry `messages-20261121`
rotations that are gzip without a .gz suffix): gzip, xz and bzip2 are streamed through the
standard-library readers, never inflated whole. A compressed stream that turns out corrupt or
truncated halfway yields the text decoded so far, drops the unfinished last line, and appends a
one-line note to the caller's `warnings` list instead of raising; a plain file that cannot be read
further is treated the same way. A path that cannot be opened at all is an InputError.

Lines are split on b"\\n" only. CRLF text keeps its b"\\r" at the end of each line: the consumer
strips it (`line.rstrip(b"\\r")`), which keeps offsets here equal to offsets in the file.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import zlib
from collections.abc import Iterator
from typing import BinaryIO

from diagdisk.errors import InputError

DEFAULT_CHUNK_SIZE = 16 << 20
# Compressed readers are asked for modest blocks so that a corrupt stream loses little decoded text.
_DECOMPRESSED_BLOCK = 256 << 10

_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"BZh", "bzip2"),
)
_READ_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError)


def detect_compression(head: bytes) -> str | None:
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    return None


class _Prepended:
    """A read-only stream that returns `head` before the rest of `stream` (no seek needed)."""

    def __init__(self, head: bytes, stream: BinaryIO):
        self._head = head
        self._stream = stream
        self.mode = "rb"

    def read(self, size: int = -1) -> bytes:
        if self._head:
            if size is None or size < 0:
                data, self._head = self._head + self._stream.read(), b""
                return data
            data, self._head = self._head[:size], self._head[size:]
            return data
        return self._stream.read(size)

    def readinto(self, buffer: memoryview) -> int:
        if self._head or not hasattr(self._stream, "readinto"):
            data = self.read(len(buffer))
            buffer[: len(data)] = data
            return len(data)
        return self._stream.readinto(buffer) or 0


def _open_decompressed(stream: BinaryIO, compression: str | None) -> BinaryIO:
    if compression == "gzip":
        return gzip.GzipFile(fileobj=stream, mode="rb")
    if compression == "xz":
        return lzma.LZMAFile(stream, mode="rb")
    if compression == "bzip2":
        return bz2.BZ2File(stream, mode="rb")
    return stream


def iter_chunks(
    source: str | os.PathLike[str] | BinaryIO,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    warnings: list[str] | None = None,
) -> Iterator[tuple[bytes, int]]:
    """Yield (chunk, number of its first line) over a path or a binary file object."""
    if chunk_size < 1:
        raise ValueError("chunk_size must be at least 1")
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        try:
            stream = open(name, "rb")
        except OSError as exc:
            raise InputError(f"cannot open: {exc.strerror or exc}", path=name) from None
        with stream:
            yield from _iter_stream(stream, name, chunk_size, warnings)
    else:
        yield from _iter_stream(source, str(getattr(source, "name", "<stream>")), chunk_size, warnings)


def _iter_stream(stream: BinaryIO, name: str, chunk_size: int, warnings: list[str] | None) -> Iterator[tuple[bytes, int]]:
    try:
        head = stream.read(6)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=name) from None
    compression = detect_compression(head)
    reader = _open_decompressed(_Prepended(head, stream), compression)
    read_size = min(chunk_size, _DECOMPRESSED_BLOCK) if compression else chunk_size

    # One buffer, reused: the kernel (or decompressor) writes into it and each chunk costs one copy
    # into its own bytes object. The unfinished last line moves to the front for the next chunk.
    buffer = bytearray(chunk_size)
    view = memoryview(buffer)
    filled = 0
    first_line = 1
    text_bytes = 0
    while True:
        try:
            count = reader.readinto(view[filled : min(filled + read_size, len(buffer))]) or 0
        except _READ_ERRORS as exc:
            cut = buffer.rfind(b"\n", 0, filled) + 1
            if cut:
                yield bytes(view[:cut]), first_line
            if warnings is not None:
                what = f"{compression} data is corrupt or truncated" if compression else "read failed"
                dropped = " and an unfinished last line was dropped" if filled > cut else ""
                warnings.append(f"{name}: {what} after {text_bytes} bytes of text; the rest is not analysed{dropped} ({exc})")
            return
        if not count:
            if filled:
                yield bytes(view[:filled]), first_line
            return
        filled += count
        text_bytes += count
        if filled < len(buffer):
            continue
        cut = buffer.rfind(b"\n", 0, filled) + 1
        if not cut:
            # One line longer than the buffer: grow it and keep reading until the line ends.
            view.release()
            buffer.extend(bytes(len(buffer)))
            view = memoryview(buffer)
            continue
        chunk = bytes(view[:cut])
        rest = filled - cut
        buffer[:rest] = bytes(view[cut:filled])
        filled = rest
        yield chunk, first_line
        first_line += chunk.count(b"\n")
