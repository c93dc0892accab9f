"""Reading untrusted log files and writing reports without surprises.

sosreports come from customers and strangers: any file may hold invalid UTF-8, Latin-1 hostnames,
NUL bytes, CRLF line ends, a single 200 MB line, binary data under a log's name, or be unreadable.
Everything here degrades to "keep what can be read, record a one-line warning" and never raises
anything but :class:`diagdisk.errors.InputError` for input problems.

Warnings are plain strings appended to a caller-owned ``warnings`` list; each names the file and
what is wrong, ready for the report's ``sources[].warnings`` or one line on stderr.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import errno
import gzip
import lzma
import os
import stat
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from diagdisk.errors import InputError

_LATIN1_FALLBACK = "diagdisk-latin1-fallback"


def _decode_invalid_utf8_as_latin1(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    # Latin-1 maps every byte to a character, so a Latin-1 hostname inside UTF-8 text reads naturally.
    return exc.object[exc.start : exc.end].decode("latin-1"), exc.end


codecs.register_error(_LATIN1_FALLBACK, _decode_invalid_utf8_as_latin1)


def decode_log_bytes(data: bytes) -> str:
    """Decode log bytes into text: never raises, never loses a printable character.

    Sample input::

        >>> decode_log_bytes(b"host caf\\xe9 sd 0:0:0:0\\r\\nnext\\x00 line\\r\\n")
        'host café sd 0:0:0:0\\nnext line\\n'

    Valid UTF-8 (and ASCII) takes the fast path; invalid sequences are read as Latin-1. NUL bytes
    are dropped and a carriage return before each line end is removed.
    """
    if b"\x00" in data:
        data = data.replace(b"\x00", b"")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors=_LATIN1_FALLBACK)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if text.endswith("\r"):
            text = text[:-1]
    return text


TEXT_SNIFF_BYTES = 8192
# Bytes that appear in real logs: tab, line feed, form feed, carriage return, backspace, ESC (colours).
_TEXT_CONTROLS = frozenset(b"\t\n\f\r\b\x1b")
_BINARY_CONTROLS = bytes(b for b in range(32) if b not in _TEXT_CONTROLS) + b"\x7f"
_BINARY_CONTROL_RATIO = 0.05


def looks_like_text(sample: bytes) -> bool:
    """True unless the first 8 KiB of ``sample`` look like binary data.

    NUL bytes are left out of the ratio: syslog files often carry a run of NULs where the host
    crashed mid-write, and those files are still logs. Among the other bytes, text has almost no
    control characters, while compressed or structured binary data (a journal file, a gzip archive
    named ``messages``) has about one in ten.
    """
    head = sample[:TEXT_SNIFF_BYTES].replace(b"\x00", b"")
    if not head:
        return True
    controls = len(head) - len(head.translate(None, _BINARY_CONTROLS))
    return controls / len(head) <= _BINARY_CONTROL_RATIO


def describe_os_error(exc: OSError) -> str:
    """A short lower-case reason for an OSError, without the path (callers put the path first)."""
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, FileNotFoundError):
        return "no such file or directory"
    if isinstance(exc, IsADirectoryError):
        return "is a directory"
    if isinstance(exc, NotADirectoryError):
        return "a parent is not a directory"
    if exc.errno == errno.ENOSPC:
        return "no space left on device"
    if exc.errno == errno.ELOOP:
        return "too many levels of symbolic links"
    if exc.strerror:
        return exc.strerror[0].lower() + exc.strerror[1:]
    return str(exc) or type(exc).__name__


# ---------------------------------------------------------------------------------------------
# Walking a directory tree


def safe_walk(root: str | os.PathLike[str], warnings: list[str] | None = None) -> Iterator[Path]:
    """Yield every readable regular file under ``root``, in a stable (sorted) order.

    Never leaves ``root``: symbolic links are yielded only when they point at a regular file inside
    ``root`` (sosreports hold many, e.g. ``hostname -> sos_commands/host/hostname``), and linked
    directories are never entered, which also rules out loops (``/sys`` is full of them). Folders
    and files that cannot be opened are skipped with a "permission denied" warning. Uses an explicit
    stack, so thousands of rotated logs or a deep tree cost neither recursion nor a full listing.
    """
    root_path = Path(root)
    try:
        real_root = Path(os.path.realpath(root_path))
    except OSError as exc:
        raise InputError(describe_os_error(exc), str(root_path)) from None
    pending: list[Path] = [root_path]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            if folder == root_path:
                raise InputError(describe_os_error(exc), str(folder)) from None
            _warn(warnings, f"{folder}: {describe_os_error(exc)}; folder skipped")
            continue
        subfolders: list[Path] = []
        for entry in entries:
            path = Path(entry.path)
            try:
                if entry.is_symlink():
                    if _symlink_to_file_inside(path, real_root) and _can_open(path, warnings):
                        yield path
                elif entry.is_dir(follow_symlinks=False):
                    subfolders.append(path)
                elif entry.is_file(follow_symlinks=False) and _can_open(path, warnings):
                    yield path
            except OSError as exc:
                _warn(warnings, f"{path}: {describe_os_error(exc)}; skipped")
        # Reversed so that popping from the stack visits folders in sorted order.
        pending.extend(reversed(subfolders))


def _symlink_to_file_inside(link: Path, real_root: Path) -> bool:
    try:
        target = Path(os.path.realpath(link))
        if not target.is_relative_to(real_root):
            return False
        return stat.S_ISREG(os.stat(target).st_mode)
    except OSError:
        return False


def _can_open(path: Path, warnings: list[str] | None) -> bool:
    try:
        # O_NONBLOCK: a fifo swapped in after the type check must not hang us.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        _warn(warnings, f"{path}: {describe_os_error(exc)}; skipped")
        return False
    os.close(descriptor)
    return True


def _warn(warnings: list[str] | None, message: str) -> None:
    if warnings is not None:
        warnings.append(message)


# ---------------------------------------------------------------------------------------------
# Reading log lines, plain or compressed rotations

MAX_LINE_BYTES = 1 << 20
_READ_CHUNK = 1 << 16
_COMPRESSED_OPENERS = (
    (b"\x1f\x8b", "gzip", lambda raw: gzip.GzipFile(fileobj=raw, mode="rb")),
    (b"\xfd7zXZ\x00", "xz", lzma.LZMAFile),
    (b"BZh", "bzip2", bz2.BZ2File),
)


def read_log_lines(
    path: str | os.PathLike[str],
    warnings: list[str] | None = None,
    *,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for each line of a log file, decoded by :func:`decode_log_bytes`.

    Compressed rotations (gzip, xz, bzip2, recognised by magic bytes, not by name) are decompressed
    on the fly; when one is corrupt or truncated halfway, the lines read so far are kept and a
    warning says where reading stopped. A line longer than ``max_line_bytes`` is cut at that length
    with one warning per file, so a 200 MB single line costs at most ``max_line_bytes`` of memory.
    A file that looks binary is skipped with a warning. A file that cannot be opened raises
    :class:`InputError` ("permission denied", ...).
    """
    path = Path(path)
    try:
        raw = open(path, "rb")  # noqa: SIM115 - closed in the finally below
    except OSError as exc:
        raise InputError(describe_os_error(exc), str(path)) from None
    try:
        magic = raw.read(6)
        raw.seek(0)
        compression = None
        stream: IO[bytes] = raw
        for prefix, name, opener in _COMPRESSED_OPENERS:
            if magic.startswith(prefix):
                compression, stream = name, opener(raw)
                break
        yield from _read_lines(path, stream, compression, warnings, max_line_bytes)
    except OSError as exc:
        raise InputError(describe_os_error(exc), str(path)) from None
    finally:
        raw.close()


def _read_lines(
    path: Path,
    stream: IO[bytes],
    compression: str | None,
    warnings: list[str] | None,
    max_line_bytes: int,
) -> Iterator[tuple[int, str]]:
    line_number = 0
    pending = b""
    warned_long_line = False
    first_chunk = True
    while True:
        start = 0
        while (end := pending.find(b"\n", start)) >= 0:
            line_number += 1
            yield line_number, decode_log_bytes(pending[start:end])
            start = end + 1
        pending = pending[start:]
        if len(pending) > max_line_bytes:
            line_number += 1
            if not warned_long_line:
                warned_long_line = True
                _warn(warnings, f"{path}:{line_number}: line longer than {max_line_bytes} bytes; cut there")
            yield line_number, decode_log_bytes(pending[:max_line_bytes])
            rest = _skip_rest_of_line(stream, pending[max_line_bytes:])
            if rest is None:
                return
            pending = rest
            continue
        try:
            chunk = stream.read(_READ_CHUNK)
        except (EOFError, lzma.LZMAError, zlib.error, OSError) as exc:
            if isinstance(exc, (PermissionError, IsADirectoryError)):
                raise
            damage = "truncated" if isinstance(exc, EOFError) else "corrupt"
            _warn(
                warnings,
                f"{path}: {compression or 'file'} data {damage} after line {line_number}; "
                f"kept the lines before it, the rest is unreadable",
            )
            return
        if first_chunk:
            first_chunk = False
            if not looks_like_text(chunk):
                _warn(warnings, f"{path}: binary data, not a text log; skipped")
                return
        if not chunk:
            if pending:
                yield line_number + 1, decode_log_bytes(pending)
            return
        pending += chunk


def _skip_rest_of_line(stream: IO[bytes], tail: bytes) -> bytes | None:
    """Discard bytes up to the next line end; return what follows it, or None at end of data."""
    while True:
        end = tail.find(b"\n")
        if end >= 0:
            return tail[end + 1 :]
        try:
            tail = stream.read(_READ_CHUNK)
        except (EOFError, lzma.LZMAError, zlib.error, OSError):
            return None
        if not tail:
            return None


# ---------------------------------------------------------------------------------------------
# Writing output atomically


def _same_file(destination: Path, candidate: Path) -> bool:
    try:
        return os.path.samefile(destination, candidate)
    except OSError:
        return destination.resolve() == candidate.resolve()


def check_not_input(destination: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]]) -> None:
    """Raise InputError when writing ``destination`` would overwrite or add to one of ``inputs``."""
    destination = Path(destination)
    resolved_destination = destination.resolve()
    for candidate in inputs:
        candidate = Path(candidate)
        if _same_file(destination, candidate):
            raise InputError(f"refusing to overwrite the input {candidate}", str(destination))
        if candidate.is_dir() and resolved_destination.is_relative_to(candidate.resolve()):
            # Reading never modifies the input, and that includes adding a report inside it.
            raise InputError(f"refusing to write inside the input folder {candidate}", str(destination))


@contextlib.contextmanager
def atomic_writer(
    path: str | os.PathLike[str],
    *,
    refuse: Iterable[str | os.PathLike[str]] = (),
    binary: bool = False,
    encoding: str = "utf-8",
) -> Iterator[IO]:
    """Write ``path`` all at once: a temp file in the same folder, renamed over ``path`` on success.

    If the body raises (including KeyboardInterrupt), the temp file is removed and ``path`` is left
    as it was, so a failed run never leaves a half-written report. ``refuse`` lists the input paths:
    writing over one of them, or inside an input folder, raises InputError before anything is
    written. Unwritable destinations raise InputError with a one-line reason.
    """
    destination = Path(path)
    check_not_input(destination, refuse)
    if destination.is_dir():
        raise InputError("is a directory, not a file to write", str(destination))
    folder = destination.parent
    try:
        descriptor, temp_name = tempfile.mkstemp(prefix=f".{destination.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise InputError(f"cannot write: {describe_os_error(exc)}", str(destination)) from None
    try:
        mode = _final_mode(destination)
        handle = os.fdopen(descriptor, "wb" if binary else "w", **({} if binary else {"encoding": encoding}))
    except BaseException:
        os.close(descriptor)
        _remove_quietly(temp_name)
        raise
    try:
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp_name, mode)
        os.replace(temp_name, destination)
    except OSError as exc:
        _remove_quietly(temp_name)
        if exc.errno in _DESTINATION_ERRNOS:
            raise InputError(f"cannot write: {describe_os_error(exc)}", str(destination)) from None
        raise
    except BaseException:
        _remove_quietly(temp_name)
        raise


def atomic_write(
    path: str | os.PathLike[str],
    data: str | bytes,
    *,
    refuse: Iterable[str | os.PathLike[str]] = (),
) -> None:
    """Write ``data`` to ``path`` atomically; see :func:`atomic_writer`."""
    with atomic_writer(path, refuse=refuse, binary=isinstance(data, bytes)) as handle:
        handle.write(data)


# Failures of the destination itself (as opposed to the body's own errors, which propagate as they are).
_DESTINATION_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO})


def _final_mode(destination: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(destination).st_mode)
    except OSError:
        # A new file gets the permissions a plain open() would give it.
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _remove_quietly(name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name)
