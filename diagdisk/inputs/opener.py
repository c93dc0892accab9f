"""Open what the user named: a folder, a sosreport archive, a single file, a pipe or stdin.

Every input becomes an :class:`OpenedInput`: the folder its files live in, the files (path on disk,
name shown in the report), warnings about the input as a whole, and warnings about single files,
filed under the file's shown name so that the report lists them with that source. Temporary copies
(an extracted archive, stdin) live in private folders removed when the ``with`` block ends, also on
errors and Ctrl-C.

What the input is comes from its content, not its name, with one exception that keeps a damaged
download from passing for a log: a file named like a tar archive is opened as one, so it either
is one or fails with a one-line reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from .archive import ArchiveLog, holds_tar, named_like_tar, open_sosreport_archive, unsupported_format
from ..errors import InputError, PartialRead
from .limits import Limits
from .safeio import describe_os_error, safe_walk
from .sources import classify_in_tree, is_sosreport_root

STDIN_NAME = "<stdin>"
_COPY_CHUNK = 1 << 20


@dataclass
class OpenedInput:
    kind: str  # "file" (one file, or one stream), "folder" or "archive"
    root: Path
    files: list[tuple[Path, str]]
    warnings: list[str] = field(default_factory=list)
    file_warnings: dict[str, list[str]] = field(default_factory=dict)
    nested_archives: list[str] = field(default_factory=list)


@contextlib.contextmanager
def open_input(path: str, limits: Limits | None = None) -> Iterator[OpenedInput]:
    """Yield the :class:`OpenedInput` for ``path`` ('-' is stdin); clean up after.

    Raises InputError (one line naming the path) for a path that does not exist or cannot be read,
    a device, a zip or zstd file, and a file named like a tar archive that is not a readable one.
    """
    limits = limits or Limits()
    if path == "-":
        with _copied_stream(sys.stdin.buffer, STDIN_NAME, limits) as opened:
            yield opened
        return
    candidate = Path(path)
    try:
        mode = os.stat(candidate).st_mode
    except OSError as exc:
        raise InputError(describe_os_error(exc), path) from None
    if stat.S_ISDIR(mode):
        yield _walked_folder(candidate)
        return
    if stat.S_ISFIFO(mode):
        # A pipe (`diagdisk analyze <(zcat ...)`) can be read once: copy it, as stdin is.
        try:
            pipe = open(candidate, "rb")  # noqa: SIM115 - closed by the with below
        except OSError as exc:
            raise InputError(describe_os_error(exc), path) from None
        with pipe, _copied_stream(pipe, candidate.name, limits) as opened:
            yield opened
        return
    if not stat.S_ISREG(mode):
        kind = "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special file"
        raise InputError(f"is a {kind}, not a file diagdisk can read", path)
    reason = unsupported_format(candidate)
    if reason:
        raise InputError(f"not a tar archive: {reason}", path)
    if holds_tar(candidate) or named_like_tar(candidate):
        with _extracted_archive(candidate, limits) as opened:
            yield opened
        return
    yield OpenedInput(kind="file", root=candidate.parent, files=[(candidate, candidate.name)])


def _walked_folder(folder: Path) -> OpenedInput:
    opened = OpenedInput(kind="folder", root=folder, files=[])
    unreadable: list[tuple[Path, str]] = []
    opened.files = [(f, f.relative_to(folder).as_posix()) for f in safe_walk(folder, opened.warnings, unreadable)]
    _file_unreadable(opened, unreadable)
    return opened


def _file_unreadable(opened: OpenedInput, unreadable: list[tuple[Path, str]]) -> None:
    """A file that cannot be opened is reported where a reader would have reported it: a file the
    analysis reads stays in the list (its reader then says why it could not be read, in its own
    source entry); in a plain folder of logs any file might have been a log, so it is named in the
    input's warnings; in a sosreport, files the analysis never reads are left out."""
    sosreport = is_sosreport_root(opened.root)
    for path, reason in unreadable:
        name = path.relative_to(opened.root).as_posix()
        if classify_in_tree(name) is not None:
            opened.files.append((path, name))
        elif not sosreport:
            opened.warnings.append(PartialRead(f"{name}: {reason}; not read"))
    opened.files.sort(key=lambda item: item[1])


@contextlib.contextmanager
def _extracted_archive(archive: Path, limits: Limits, name: str | None = None) -> Iterator[OpenedInput]:
    log = ArchiveLog()
    with open_sosreport_archive(archive, wanted=_wanted_member, log=log, max_total_bytes=limits.max_total_bytes,
                                max_member_bytes=limits.max_file_bytes, name=name) as root:
        opened = OpenedInput(kind="archive", root=root, files=[], nested_archives=list(log.nested_archives))
        walk_warnings: list[str] = []
        opened.files = [(f, f.relative_to(root).as_posix()) for f in safe_walk(root, walk_warnings)]
        about_one_file = {warning for warnings in log.member_warnings.values() for warning in warnings}
        opened.warnings = [w for w in log.warnings if w not in about_one_file] + walk_warnings
        opened.file_warnings = {name: list(warnings) for name, warnings in log.member_warnings.items()}
        yield opened


def _wanted_member(relative: str) -> bool:
    return classify_in_tree(relative) is not None


@contextlib.contextmanager
def _copied_stream(stream: BinaryIO, name: str, limits: Limits) -> Iterator[OpenedInput]:
    """A stream copied into a private folder, at most ``limits.max_total_bytes`` of it."""
    folder = Path(tempfile.mkdtemp(prefix="diagdisk-"))
    try:
        target = folder / "input"
        warnings: list[str] = []
        with open(target, "wb") as handle:
            if _copy_bounded(stream, handle, limits.max_total_bytes):
                warnings.append(PartialRead(f"{name}: read its first {limits.max_total_bytes} bytes, the total "
                                            f"cap; the rest is not analysed (see --max-total-size)"))
        # A tarball piped in is opened like one given by name; anything else is one file.
        if holds_tar(target):
            with _extracted_archive(target, limits, name) as opened:
                opened.warnings[:0] = warnings
                yield opened
            return
        yield OpenedInput(kind="file", root=folder, files=[(target, name)], file_warnings={name: warnings} if warnings else {})
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _copy_bounded(source: BinaryIO, destination: BinaryIO, max_bytes: int) -> bool:
    """Copy at most ``max_bytes``; True when more data was left unread."""
    remaining = max_bytes
    while remaining > 0:
        data = source.read(min(_COPY_CHUNK, remaining))
        if not data:
            return False
        destination.write(data)
        remaining -= len(data)
    return bool(source.read(1))
