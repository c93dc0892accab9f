"""Reading untrusted log files and writing reports without surprises.

sosreports come from customers and strangers: any file may hold invalid UTF-8, Latin-1 hostnames,
NUL bytes, CRLF line ends, a single 200 MB line, binary data under a log's name, or be unreadable.
Everything here degrades to "keep what can be read, record a one-line warning" and never raises
anything but :class:`diagdisk.errors.InputError` for input problems.

Warnings are plain strings appended to a caller-owned ``warnings`` list; each names the file and
what is wrong, ready for the report's ``sources[].warnings`` or one line on stderr.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from diagdisk.errors import InputError, PartialRead

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


def safe_walk(
    root: str | os.PathLike[str],
    warnings: list[str] | None = None,
    unreadable: list[tuple[Path, str]] | None = None,
) -> Iterator[Path]:
    """Yield every readable regular file under ``root``, in a stable (sorted) order.

    Never leaves ``root``: symbolic links are yielded only when they point at a regular file inside
    ``root`` (sosreports hold many, e.g. ``hostname -> sos_commands/host/hostname``), and linked
    directories are never entered, which also rules out loops (``/sys`` is full of them). Folders
    that cannot be listed are skipped with a :class:`PartialRead` warning ("permission denied").
    Files that cannot be opened are skipped too: with a warning, or, when the caller passes an
    ``unreadable`` list, recorded there as (path, reason) for the caller to report where they
    belong. Uses an explicit stack, so thousands of rotated logs or a deep tree cost neither
    recursion nor a full listing.
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
            _warn(warnings, PartialRead(f"{folder}: {describe_os_error(exc)}; folder skipped"))
            continue
        subfolders: list[Path] = []
        for entry in entries:
            path = Path(entry.path)
            try:
                if entry.is_symlink():
                    if _symlink_to_file_inside(path, real_root) and _can_open(path, warnings, unreadable):
                        yield path
                elif entry.is_dir(follow_symlinks=False):
                    subfolders.append(path)
                elif entry.is_file(follow_symlinks=False) and _can_open(path, warnings, unreadable):
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


def _can_open(path: Path, warnings: list[str] | None, unreadable: list[tuple[Path, str]] | None) -> bool:
    try:
        # O_NONBLOCK: a fifo swapped in after the type check must not hang us.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if unreadable is not None:
            unreadable.append((path, describe_os_error(exc)))
        else:
            _warn(warnings, PartialRead(f"{path}: {describe_os_error(exc)}; skipped"))
        return False
    os.close(descriptor)
    return True


def _warn(warnings: list[str] | None, message: str) -> None:
    if warnings is not None:
        warnings.append(message)


# ---------------------------------------------------------------------------------------------
# Reading command outputs (log files go through diagdisk.chunks, which reads them in bounded chunks)


def read_text_capped(path: str | os.PathLike[str], name: str, max_bytes: int,
                     warnings: list[str] | None = None) -> str:
    """The text of a small file (a command output), at most ``max_bytes`` of it, decoded by
    :func:`decode_log_bytes`. A longer file is cut at its last line end before the cap, with a
    :class:`PartialRead` warning naming it; a file that cannot be read raises InputError naming it.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(describe_os_error(exc), name) from None
    if len(data) > max_bytes:
        data = data[: data.rfind(b"\n", 0, max_bytes) + 1]
        _warn(warnings, PartialRead(f"{name}: longer than {max_bytes} bytes; read the lines before that"))
    return decode_log_bytes(data)


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
