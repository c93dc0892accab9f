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

The input is untrusted, so reading is bounded (each bound leaves a warning naming the file):

* a line longer than both `chunk_size` and `max_line_bytes` keeps only its first bytes, so a
  200 MB single line costs no more memory than a chunk;
* at most `max_bytes` bytes of (decompressed) text are read from one file;
* a regular file is read up to the size it had when it was opened, so a file still being
  written cannot keep the reader busy forever;
* data that looks binary (a journal file or an image named `messages`) is skipped;
* bytes that are not UTF-8 and NUL bytes are noted once per file (the decoder reads the former as
  Latin-1 and drops the latter).

Warnings that mean text was not read are `PartialRead` strings; the others are notes.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import stat
import zlib
from collections.abc import Iterable, Iterator
from typing import BinaryIO, NamedTuple

from diagdisk.errors import InputError, PartialRead
from diagdisk.progress import count_read, flush_count
from diagdisk.inputs.limits import Limits
from diagdisk.inputs.safeio import TEXT_SNIFF_BYTES, looks_like_text

# Text read at a time. A reader holds a chunk's events until it has read the whole chunk, and
# smaller chunks stay in the CPU caches: 1 MiB reads a storm at the same cost as 16 MiB, a quiet
# log faster, and takes about 100 MB less memory (benchmarks/README.md).
DEFAULT_CHUNK_SIZE = 1 << 20
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


class _UpTo:
    """A regular file read no further than the size it had when it was opened; the bytes read are
    counted for the progress display (diagdisk.progress)."""

    def __init__(self, stream: BinaryIO, size: int):
        self._stream = stream
        self.remaining = size

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0 or size > self.remaining:
            size = self.remaining
        data = self._stream.read(size) if size else b""
        self.remaining -= len(data)
        count_read(len(data))
        return data

    def readinto(self, buffer: memoryview) -> int:
        if not self.remaining:
            return 0
        with memoryview(buffer) as view:
            count = self._stream.readinto(view[: self.remaining]) or 0
        self.remaining -= count
        count_read(count)
        return count


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
    *,
    name: str | None = None,
    max_line_bytes: int = Limits.max_line_bytes,
    max_bytes: int | None = Limits.max_file_bytes,
) -> Iterator[tuple[bytes, int]]:
    """Yield (chunk, number of its first line) over a path or a binary file object.

    `name` is how warnings name the source (default: the path, or the stream's name).
    """
    if chunk_size < 1:
        raise ValueError("chunk_size must be at least 1")
    notes = _Notes(name, warnings)
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        notes.name = name or path
        try:
            stream = open(path, "rb")
        except OSError as exc:
            raise InputError(f"cannot open: {exc.strerror or exc}", path=notes.name) from None
        with stream:
            size_at_open = _regular_file_size(stream)
            bounded = _UpTo(stream, size_at_open) if size_at_open is not None else stream
            yield from _iter_stream(bounded, notes, chunk_size, max_line_bytes, max_bytes, size_at_open)
            flush_count()
            size_now = _regular_file_size(stream)
            if size_at_open is not None and size_now is not None and size_now > size_at_open:
                notes.note(f"{notes.name}: the file grew while it was read; read the {size_at_open} "
                           f"bytes it held when reading started")
    else:
        notes.name = name or str(getattr(source, "name", "<stream>"))
        yield from _iter_stream(source, notes, chunk_size, max_line_bytes, max_bytes)


def _regular_file_size(stream: BinaryIO) -> int | None:
    try:
        status = os.fstat(stream.fileno())
    except (OSError, AttributeError, ValueError):
        return None
    return status.st_size if stat.S_ISREG(status.st_mode) else None


class _Notes:
    """The caller's warnings list, with each kind of note given once per file."""

    def __init__(self, name: str | None, warnings: list[str] | None):
        self.name = name or "<stream>"
        self.warnings = warnings
        self.given: set[str] = set()

    def note(self, message: str, kind: str | None = None) -> None:
        if self.warnings is None or (kind is not None and kind in self.given):
            return
        if kind is not None:
            self.given.add(kind)
        self.warnings.append(message)

    def check_encoding(self, chunk: bytes, first_line: int) -> None:
        """Note bytes the decoder will change: cheap (C-speed scans), and only until each is seen."""
        if "nul" not in self.given:
            position = chunk.find(b"\x00")
            if position >= 0:
                line = first_line + chunk.count(b"\n", 0, position)
                self.note(f"{self.name}:{line}: holds NUL bytes (first on this line); they are dropped", "nul")
        if "latin1" not in self.given and not chunk.isascii():
            try:
                chunk.decode("utf-8")
            except UnicodeDecodeError as exc:
                line = first_line + chunk.count(b"\n", 0, exc.start)
                self.note(f"{self.name}:{line}: holds bytes that are not UTF-8 (first on this line); "
                          f"they are read as Latin-1", "latin1")


def iter_range_chunks(path: str | os.PathLike[str], start: int, stop: int, first_line: int,
                      chunk_size: int = DEFAULT_CHUNK_SIZE, warnings: list[str] | None = None, *,
                      name: str | None = None, max_line_bytes: int = Limits.max_line_bytes,
                      ) -> Iterator[tuple[bytes, int]]:
    """As iter_chunks, over bytes [start, stop) of a plain text file that starts at line
    `first_line` (a segment: start and stop lie on line boundaries, the file was sniffed whole)."""
    notes = _Notes(name or os.fspath(path), warnings)
    try:
        stream = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot open: {exc.strerror or exc}", path=notes.name) from None
    with stream:
        stream.seek(start)
        yield from _iter_stream(_UpTo(stream, stop - start), notes, chunk_size, max_line_bytes, None,
                                stop - start, first_line=first_line, sniff=False)
        flush_count()


def _iter_stream(stream: BinaryIO, notes: _Notes, chunk_size: int, max_line_bytes: int,
                 max_bytes: int | None, size: int | None = None, *, first_line: int = 1,
                 sniff: bool = True) -> Iterator[tuple[bytes, int]]:
    name = notes.name
    compression = None
    reader = stream
    if sniff:
        try:
            head = stream.read(6)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", path=name) from None
        compression = detect_compression(head)
        reader = _open_decompressed(_Prepended(head, stream), compression)
    read_size = min(chunk_size, _DECOMPRESSED_BLOCK) if compression else chunk_size
    what = f"{compression} data is corrupt or truncated" if compression else "read failed"

    if sniff:
        try:
            sample = _read_up_to(reader, TEXT_SNIFF_BYTES)
        except _READ_ERRORS as exc:
            notes.note(PartialRead(f"{name}: {what} at its start; nothing was read ({exc})"))
            return
        if not sample:
            notes.note(f"{name}: empty file; nothing to read")
            return
        if not looks_like_text(sample):
            notes.note(PartialRead(f"{name}: binary data, not a text log; skipped"))
            return
        reader = _Prepended(sample, reader)

    # A line that does not fit one chunk grows the buffer up to this size, then is cut.
    line_limit = max(chunk_size, max_line_bytes)
    # One buffer, reused: the kernel (or decompressor) writes into it and each chunk costs one copy
    # into its own bytes object. The unfinished last line moves to the front for the next chunk.
    # It starts no larger than the file needs (thousands of small rotations must not each zero a
    # whole chunk) and grows to chunk_size as data comes.
    buffer = bytearray(min(chunk_size, size + 1 if size is not None and not compression else _DECOMPRESSED_BLOCK))
    view = memoryview(buffer)
    filled = 0
    text_bytes = 0
    skipping = False  # inside a line cut at line_limit: drop its bytes up to its newline
    while True:
        want = min(filled + read_size, len(buffer)) - filled
        if max_bytes is not None and text_bytes + want > max_bytes:
            want = max_bytes - text_bytes
            if want <= 0:
                yield from _stop_at_cap(reader, view, filled, first_line, notes, max_bytes, text_bytes)
                return
        try:
            count = reader.readinto(view[filled : filled + want]) or 0
        except _READ_ERRORS as exc:
            cut = buffer.rfind(b"\n", 0, filled) + 1
            if cut:
                notes.check_encoding(view[:cut].tobytes(), first_line)
                yield bytes(view[:cut]), first_line
            dropped = " and an unfinished last line was dropped" if filled > cut else ""
            notes.note(PartialRead(f"{name}: {what} after {text_bytes} bytes of text; the rest is not "
                                   f"analysed{dropped} ({exc})"))
            return
        if not count:
            if filled:
                chunk = bytes(view[:filled])
                notes.check_encoding(chunk, first_line)
                yield chunk, first_line
            return
        text_bytes += count
        if skipping:
            newline = buffer.find(b"\n", filled, filled + count)
            if newline < 0:
                continue  # all of it belongs to the line being cut
            tail = filled + count
            count = tail - (newline + 1)
            buffer[filled : filled + count] = buffer[newline + 1 : tail]
            skipping = False
        filled += count
        if filled < len(buffer):
            continue
        cut = buffer.rfind(b"\n", 0, filled) + 1
        # Grow to a whole chunk first; past that, only for one line longer than the buffer, which
        # keeps growing until the line ends or reaches the line limit.
        if len(buffer) < chunk_size or (not cut and len(buffer) < line_limit):
            view.release()
            buffer.extend(bytes(min(len(buffer), (chunk_size if cut else line_limit) - len(buffer))))
            view = memoryview(buffer)
            continue
        if not cut:
            notes.note(f"{name}:{first_line}: line of at least {line_limit} bytes; kept its first "
                       f"{line_limit} bytes (longer lines are cut the same way)", "long line")
            chunk = bytes(view[:filled]) + b"\n"
            notes.check_encoding(chunk, first_line)
            yield chunk, first_line
            first_line += 1
            filled = 0
            skipping = True
            continue
        chunk = bytes(view[:cut])
        rest = filled - cut
        buffer[:rest] = bytes(view[cut:filled])
        filled = rest
        notes.check_encoding(chunk, first_line)
        yield chunk, first_line
        first_line += chunk.count(b"\n")


def _read_up_to(reader, size: int) -> bytes:
    parts = []
    while size > 0:
        data = reader.read(size)
        if not data:
            break
        parts.append(data)
        size -= len(data)
    return b"".join(parts)


def _stop_at_cap(reader, view: memoryview, filled: int, first_line: int, notes: _Notes, max_bytes: int,
                 text_bytes: int) -> Iterator[tuple[bytes, int]]:
    """The per-file cap is reached: pass on the complete lines read, and warn if more text follows."""
    try:
        more = bool(reader.read(1))
    except _READ_ERRORS:
        more = True
    if not more:
        if filled:
            chunk = bytes(view[:filled])
            notes.check_encoding(chunk, first_line)
            yield chunk, first_line
        return
    cut = view.tobytes().rfind(b"\n", 0, filled) + 1
    if cut:
        chunk = bytes(view[:cut])
        notes.check_encoding(chunk, first_line)
        yield chunk, first_line
    notes.note(PartialRead(f"{notes.name}: read its first {text_bytes} bytes of text, the per-file cap; "
                           f"the rest is not analysed (see --max-file-size)"))


class Window(NamedTuple):
    """Lines to work on (text[core_start:core_end]) with some lines around them for context."""

    text: bytes
    first_line: int      # line number of text[0]
    core_start: int
    core_end: int


def _last_lines(data: bytes, count: int) -> bytes:
    """The last `count` complete lines of `data` (which ends with a newline), or all of it."""
    position = len(data) - 1
    for _ in range(count):
        position = data.rfind(b"\n", 0, position)
        if position < 0:
            return data
    return data[position + 1:]


def _first_lines_end(data: bytes, count: int) -> int:
    position = -1
    for _ in range(count):
        position = data.find(b"\n", position + 1)
        if position < 0:
            return len(data)
    return position + 1


def iter_windows(chunks: Iterable[tuple[bytes, int]], context_lines: int,
                 first_core_bytes: int = 0, before: bytes = b"") -> Iterator[Window]:
    """Regroup chunks into windows whose core lines come with up to `context_lines` lines before
    and after them, so that work on a line can look at its neighbours wherever the chunks were cut.

    Sample input::

        >>> chunks = [(b"a\\n", 1), (b"b\\n", 2), (b"c\\n", 3), (b"d", 4)]
        >>> [(w.text[w.core_start:w.core_end], w.text, w.first_line) for w in iter_windows(chunks, 1)]
        [(b'a\\n', b'a\\nb\\n', 1), (b'b\\n', b'a\\nb\\nc\\n', 1), (b'c\\nd', b'b\\nc\\nd', 2)]

    The first core holds at least `first_core_bytes` of text (or all of it), so what is judged from
    the start of a file sees the same bytes whatever the chunk size. Cores partition the text.
    `before` is the text just before the first chunk (complete lines), the first core's context.
    """
    tail = _last_lines(before, context_lines) if before else b""
    tail_lines = tail.count(b"\n")
    core_parts: list[bytes] = []
    core_bytes = 0
    core_newlines: int | None = None  # known once the core is a former look-ahead: counted then
    core_first = 1
    ahead_parts: list[bytes] = []
    ahead_newlines = 0
    for chunk, first_line in chunks:
        if not core_parts:
            core_first = first_line
        if not core_parts or core_bytes < first_core_bytes:
            core_parts.append(chunk)
            core_bytes += len(chunk)
            core_newlines = None
            continue
        ahead_parts.append(chunk)
        ahead_newlines += chunk.count(b"\n")
        if ahead_newlines < context_lines:
            continue
        ahead = b"".join(ahead_parts)
        core = b"".join(core_parts)
        yield Window(tail + core + ahead[:_first_lines_end(ahead, context_lines)], core_first - tail_lines,
                     len(tail), len(tail) + len(core))
        if core_newlines is None:
            core_newlines = core.count(b"\n")
        tail = _last_lines(core, context_lines) if core_newlines >= context_lines \
            else _last_lines(tail + core, context_lines)
        tail_lines = tail.count(b"\n")
        core_first += core_newlines
        core_parts, core_bytes, core_newlines = [ahead], len(ahead), ahead_newlines
        ahead_parts, ahead_newlines = [], 0
    if core_parts:
        core = b"".join(core_parts + ahead_parts)
        yield Window(tail + core, core_first - tail_lines, len(tail), len(tail) + len(core))
