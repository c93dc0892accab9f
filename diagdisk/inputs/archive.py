"""Open an untrusted sosreport tarball safely.

A sosreport may come from anyone, so the archive is read as a stream and nothing in it is trusted:

* only regular files and directories are extracted, and only when their normalized path stays
  inside the extraction folder (no ``..``, no absolute paths) and the caller ``wanted`` them;
* symbolic and hard links are never created: a link whose target is inside the archive becomes a
  copy of the target's content (sosreports are full of them, e.g. ``hostname ->
  sos_commands/host/hostname``); links that point outside are refused with a warning;
* device files and fifos are refused; nested archives are listed in the warnings, not opened;
* bytes are capped per file and in total (declared sizes and bytes actually written), as are the
  number of members and the decompressed bytes scanned, so a tar bomb ends with a warning;
* tar metadata that tarfile would load whole into memory (pax and GNU long-name headers, old GNU
  sparse maps) is size-checked first;
* a corrupt or truncated archive keeps what was extracted before the damage, with a warning that
  says where; an archive with nothing readable raises :class:`InputError`;
* warnings that mean wanted data was lost (damage, caps) are :class:`PartialRead` strings, and a
  warning about one extracted file is also filed under that file's path;
* everything lands in a private ``tempfile.mkdtemp(prefix="diagdisk-")`` folder (mode 0700) that is
  removed when the ``with`` block ends, whether by success, error or Ctrl-C.

Warnings, the links found and counters come back through an :class:`ArchiveLog` passed as ``log``.
"""

from __future__ import annotations

import bz2
import contextlib
import errno
import gzip
import lzma
import os
import posixpath
import shutil
import stat
import sys
import tarfile
import tempfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from diagdisk.errors import DiagdiskError, InputError, PartialRead
from diagdisk.inputs.limits import Limits
from diagdisk.inputs.safeio import describe_os_error

_MAGIC_PREFIXES = {
    "gzip": b"\x1f\x8b",
    "xz": b"\xfd7zXZ\x00",
    "bzip2": b"BZh",
}
_UNSUPPORTED_MAGIC = {
    b"\x28\xb5\x2f\xfd": "zstd-compressed data is not supported; decompress it with `unzstd` first",
    b"PK\x03\x04": "a zip archive; diagdisk reads tar archives (.tar, .tar.gz, .tar.xz, .tar.bz2)",
}
_TAR_MAGIC_OFFSET = 257
_SNIFF_BYTES = 512

NESTED_ARCHIVE_SUFFIXES = (
    ".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".tbz", ".tar.zst", ".zip",
)
MAX_METADATA_BYTES = 1 << 20
MAX_STORED_WARNINGS = 200
_COPY_CHUNK = 1 << 20
# Member data is read in smaller pieces: a decompressor that meets damage drops what it decoded in
# the current read, so this bounds what a member cut short by damage loses.
_MEMBER_READ = 1 << 16
_RAW_CHUNK = 16384
_RECENT_BYTES = 1 << 16
_MAX_LINK_HOPS = 40


def _sniff(path: Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(_SNIFF_BYTES)
    except IsADirectoryError:
        return b""
    except OSError as exc:
        raise InputError(describe_os_error(exc), str(path)) from None


def _compression_of(head: bytes) -> str | None:
    """'gzip', 'xz', 'bzip2', 'tar' (uncompressed), or None when the bytes are none of those."""
    for name, prefix in _MAGIC_PREFIXES.items():
        if head.startswith(prefix):
            return name
    if head[_TAR_MAGIC_OFFSET : _TAR_MAGIC_OFFSET + 5] == b"ustar":
        return "tar"
    return None


TAR_NAME_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".tbz")


def is_archive(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` starts like a tar archive (gzip, xz, bzip2 or plain ustar), judged by its
    magic bytes and never by its name. A folder is not an archive. An unreadable file raises
    InputError. A gzip'ed single log also answers True: only opening it tells it is not a tar."""
    return _compression_of(_sniff(Path(path))) is not None


def holds_tar(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` holds a tar archive (plain or compressed), judged by content: the first
    header block after decompression carries the ustar signature. Reads at most one block of
    decompressed data, so neither a bomb nor a damaged stream costs anything here; a stream too
    damaged to give one block answers False. An unreadable file raises InputError."""
    path = Path(path)
    compression = _compression_of(_sniff(path))
    if compression is None:
        return False
    if compression == "tar":
        return True
    try:
        with open(path, "rb") as handle, _DECOMPRESSORS[compression](handle) as stream:
            block = stream.read(tarfile.BLOCKSIZE)
    except (EOFError, lzma.LZMAError, zlib.error, OSError) as exc:
        if isinstance(exc, PermissionError):
            raise InputError(describe_os_error(exc), str(path)) from None
        return False
    return _compression_of(block) == "tar"


def named_like_tar(path: str | os.PathLike[str]) -> bool:
    return Path(path).name.lower().endswith(TAR_NAME_SUFFIXES)


def unsupported_format(path: str | os.PathLike[str]) -> str | None:
    """Why a file in a format diagdisk recognises but cannot read (zip, zstd) is refused, or None."""
    head = _sniff(Path(path))
    for prefix, reason in _UNSUPPORTED_MAGIC.items():
        if head.startswith(prefix):
            return reason
    return None


@dataclass
class ArchiveLog:
    """What :func:`open_sosreport_archive` noticed; pass one in as ``log=`` to receive it.

    ``warnings`` are one-line strings naming the member and what is wrong (at most
    ``MAX_STORED_WARNINGS``; the rest are counted in ``suppressed_warnings`` and summarised by the
    last warning); those that mean wanted data was lost are :class:`PartialRead`, and ``partial``
    is True once any such warning was given, stored or not. ``member_warnings`` files the warnings
    about one extracted file under its path relative to the yielded root (they are in ``warnings``
    too). ``symlinks`` maps every symbolic link seen, relative to the yielded root, to its
    target as stored, so later steps can follow /sys links (they reveal H:C:T:L) without the
    filesystem ever holding a link. ``nested_archives`` lists member paths that are archives.
    """

    warnings: list[str] = field(default_factory=list)
    member_warnings: dict[str, list[str]] = field(default_factory=dict)
    partial: bool = False
    symlinks: dict[str, str] = field(default_factory=dict)
    nested_archives: list[str] = field(default_factory=list)
    members_seen: int = 0
    files_extracted: int = 0
    bytes_extracted: int = 0
    suppressed_warnings: int = 0

    def warn(self, message: str, member: str | None = None) -> None:
        """Record ``message``; ``member`` (its path in the archive) when it concerns one file."""
        self.partial = self.partial or isinstance(message, PartialRead)
        if len(self.warnings) < MAX_STORED_WARNINGS:
            self.warnings.append(message)
            if member is not None:
                self._by_member.append((member, message))
        else:
            self.suppressed_warnings += 1

    def __post_init__(self) -> None:
        self._by_member: list[tuple[str, str]] = []


class _UnsafeMetadata(Exception):
    """A tar header that tarfile would process at unbounded memory cost."""


class _StreamCapReached(Exception):
    pass


class _GuardedTarInfo(tarfile.TarInfo):
    """Checks sizes before tarfile reads header extensions into memory in one piece."""

    def _proc_member(self, tarfile_):
        if self.type in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE,
                         tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE) and self.size > MAX_METADATA_BYTES:
            raise _UnsafeMetadata(f"a {self.size}-byte tar header extension (limit {MAX_METADATA_BYTES})")
        if self.type == tarfile.GNUTYPE_SPARSE:
            # Old GNU sparse maps chain header blocks without limit; sos never writes them.
            raise _UnsafeMetadata("an old-style GNU sparse member (not supported)")
        return super()._proc_member(tarfile_)

    def _proc_gnusparse_10(self, next_, pax_headers, tarfile_):
        # The 1.0 map is read from the data blocks with a count taken from the data itself.
        raise _UnsafeMetadata("a GNU sparse 1.0 member (not supported)")


class _CountingFile:
    """The raw archive file, counting compressed bytes consumed (to say where damage was found)."""

    def __init__(self, handle: IO[bytes], size: int):
        self._handle = handle
        self.size = size
        self.consumed = 0

    def read(self, size: int = -1) -> bytes:
        # Small reads keep the reported position of a corruption close to where it was detected.
        data = self._handle.read(_RAW_CHUNK if size is None or size < 0 else min(size, _RAW_CHUNK))
        self.consumed += len(data)
        return data

    def readable(self) -> bool:
        return True


class _TarDataReader:
    """Decompressed tar bytes for tarfile, capped, remembering the latest bytes for the end check."""

    def __init__(self, source, max_bytes: int):
        self._source = source
        self._max_bytes = max_bytes
        self.delivered = 0
        self.exhausted = False
        self.recent = bytearray()
        self.recent_start = 0

    def read(self, size: int = -1) -> bytes:
        if self.delivered >= self._max_bytes:
            raise _StreamCapReached()
        if size is None or size < 0:
            size = _COPY_CHUNK
        data = self._source.read(min(size, self._max_bytes - self.delivered))
        if not data:
            self.exhausted = True
        self.delivered += len(data)
        self.recent += data
        excess = len(self.recent) - _RECENT_BYTES
        if excess > 0:
            del self.recent[:excess]
            self.recent_start += excess
        return data

    def block_at(self, offset: int, length: int = tarfile.BLOCKSIZE) -> bytes | None:
        """Bytes at ``offset`` of the tar data, reading ahead if needed; None if already discarded."""
        if offset < self.recent_start:
            return None
        while self.delivered < offset + length and not self.exhausted:
            self.read(length)
        start = offset - self.recent_start
        return bytes(self.recent[start : start + length])


_DECOMPRESSORS = {
    "gzip": lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"),
    "xz": lzma.LZMAFile,
    "bzip2": bz2.BZ2File,
}


def _describe_damage(exc: BaseException, compression: str, raw: _CountingFile) -> str:
    if isinstance(exc, EOFError):
        return (f"{compression} data truncated: the file ends at byte {raw.size}, "
                f"before the end of the compressed stream")
    if compression != "tar" and isinstance(exc, (lzma.LZMAError, zlib.error, OSError)) and not isinstance(
            exc, PermissionError):
        return f"{compression} data corrupt at byte {raw.consumed} of {raw.size} ({exc})"
    if isinstance(exc, _UnsafeMetadata):
        return f"refused {exc}"
    if isinstance(exc, tarfile.TarError):
        return f"tar data damaged ({exc})"
    if isinstance(exc, OSError):
        return f"read error: {describe_os_error(exc)}"
    return str(exc)


_READ_FAILURES = (EOFError, lzma.LZMAError, zlib.error, OSError, tarfile.TarError, _UnsafeMetadata)


def _normalize_member_name(name: str) -> tuple[str | None, str | None]:
    """(normalized path, None) for a safe name, (None, reason) for a refused one, (None, None) for
    the archive root itself ('.' or '')."""
    if "\x00" in name:
        return None, "name contains a NUL byte"
    if name.startswith("/"):
        return None, "absolute path"
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        return None, "path contains '..'"
    if not parts:
        return None, None
    return "/".join(parts), None


def _resolve_link(
    start: str, target: str, symlinks: dict[str, str]
) -> tuple[str | None, str | None]:
    """Resolve ``target`` seen from folder ``start`` within the archive, following the recorded
    symlinks one component at a time. Returns (path, None) or (None, reason)."""
    if target.startswith("/"):
        return None, "points to an absolute path outside the archive"
    resolved = [part for part in start.split("/") if part]
    pending = list(reversed(target.split("/")))
    hops = 0
    while pending:
        part = pending.pop()
        if part in ("", "."):
            continue
        if part == "..":
            if not resolved:
                return None, "points outside the archive"
            resolved.pop()
            continue
        resolved.append(part)
        next_target = symlinks.get("/".join(resolved))
        if next_target is not None:
            hops += 1
            if hops > _MAX_LINK_HOPS:
                return None, "is a symlink loop"
            if next_target.startswith("/"):
                return None, "points (through another link) to an absolute path outside the archive"
            resolved.pop()
            pending.extend(reversed(next_target.split("/")))
    return "/".join(resolved), None


@dataclass
class _Link:
    path: str
    target: str
    hard: bool


class _Extraction:
    """State of one streaming extraction into ``destination``."""

    def __init__(self, archive: Path, destination: Path, wanted, log: ArchiveLog,
                 max_total_bytes: int, max_member_bytes: int, max_members: int):
        self.archive = archive
        self.destination = destination
        self.wanted = wanted
        self.log = log
        self.max_total_bytes = max_total_bytes
        self.max_member_bytes = max_member_bytes
        self.max_members = max_members
        self.top_levels: set[str] = set()
        self.nested_path_seen = False
        self.extracted_files: set[str] = set()
        self.extracted_dirs: set[str] = set()
        self.symlinks: dict[str, str] = {}
        self.links: list[_Link] = []
        # Targets of wanted links, so that a target later in the stream is extracted too.
        self.link_targets: set[str] = set()
        self.stopped = False
        # Set for the second pass: the only paths still to extract (link targets seen too early).
        self.only: set[str] | None = None
        # The member being written, and its bytes so far: damage met now cuts it short.
        self.in_progress: tuple[str, int] | None = None

    # -- selection -----------------------------------------------------------------------------

    def is_wanted(self, path: str) -> bool:
        if self.wanted is None or path in self.link_targets:
            return True
        below_top = path.split("/", 1)[1] if "/" in path else path
        # An archive made from inside the sosreport folder has no top folder: ask about the whole
        # path too, since which case applies is only known once the stream has ended.
        return bool(self.wanted(below_top)) or (below_top != path and bool(self.wanted(path)))

    # -- members -------------------------------------------------------------------------------

    def handle(self, tar: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        path, refusal = _normalize_member_name(member.name)
        if self.only is not None:
            if path in self.only and member.isreg() and path not in self.extracted_files:
                self.extract_file(tar, member, path)
            return
        if refusal:
            self.log.warn(f"{self.archive}: member {member.name!r} refused: {refusal}")
            return
        if path is None:
            return
        top, _, rest = path.partition("/")
        self.top_levels.add(top)
        if rest or member.isdir():
            self.nested_path_seen = True
        if member.isreg() and path.lower().endswith(NESTED_ARCHIVE_SUFFIXES):
            self.log.nested_archives.append(path)
            self.log.warn(f"{self.archive}: member {path!r} is a nested archive; not opened")
        if member.issym():
            self.handle_symlink(path, member.linkname)
        elif member.islnk():
            self.handle_hardlink(path, member.linkname)
        elif member.isdir():
            if "/" not in path or self.is_wanted(path):
                self.make_dirs(path)
        elif member.isreg():
            if self.is_wanted(path) and self.second_opinion(member):
                self.extract_file(tar, member, path)
        elif member.ischr() or member.isblk():
            self.log.warn(f"{self.archive}: member {path!r} refused: device file")
        elif member.isfifo():
            self.log.warn(f"{self.archive}: member {path!r} refused: fifo")
        else:
            self.log.warn(f"{self.archive}: member {path!r} refused: unsupported type {member.type!r}")

    def second_opinion(self, member: tarfile.TarInfo) -> bool:
        """tarfile's own 'data' filter, where this Python has it; our checks remain the authority."""
        data_filter = getattr(tarfile, "data_filter", None)
        if data_filter is None:
            return True
        try:
            data_filter(member, str(self.destination))
        except tarfile.FilterError as exc:
            self.log.warn(f"{self.archive}: member {member.name!r} refused: {exc}")
            return False
        return True

    def handle_symlink(self, path: str, target: str) -> None:
        self.symlinks[path] = target
        lexical = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        if target.startswith("/") or lexical == ".." or lexical.startswith("../"):
            self.log.warn(f"{self.archive}: symlink {path!r} -> {target!r} points outside the archive; not followed")
            return
        if self.is_wanted(path):
            self.links.append(_Link(path, target, hard=False))
            resolved, _ = _resolve_link(posixpath.dirname(path), target, self.symlinks)
            if resolved:
                self.link_targets.add(resolved)

    def handle_hardlink(self, path: str, target: str) -> None:
        normalized, refusal = _normalize_member_name(target)
        if refusal or normalized is None:
            self.log.warn(f"{self.archive}: hardlink {path!r} -> {target!r} refused: "
                          f"{refusal or 'points to the archive root'}")
            return
        if self.is_wanted(path):
            self.links.append(_Link(path, normalized, hard=True))

    def make_dirs(self, path: str) -> bool:
        try:
            os.makedirs(self.destination / path, mode=0o700, exist_ok=True)
        except OSError as exc:
            self.fail_on_full_disk(exc)
            self.log.warn(f"{self.archive}: folder {path!r} not extracted: {describe_os_error(exc)}")
            return False
        self.extracted_dirs.add(path)
        parent = posixpath.dirname(path)
        while parent and parent not in self.extracted_dirs:
            self.extracted_dirs.add(parent)
            parent = posixpath.dirname(parent)
        return True

    def fail_on_full_disk(self, exc: OSError) -> None:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise DiagdiskError(
                f"cannot extract {self.archive}: {describe_os_error(exc)} in {self.destination.parent}; "
                f"free space or set TMPDIR", str(self.archive)) from None

    def byte_budget(self, path: str, declared: int) -> int:
        """How many bytes of a member to write, warning (and stopping) when a cap cuts it."""
        remaining_total = self.max_total_bytes - self.log.bytes_extracted
        budget = min(declared, self.max_member_bytes, remaining_total)
        if declared > remaining_total:
            self.log.warn(PartialRead(f"{self.archive}: total extraction cap of {self.max_total_bytes} bytes "
                                      f"reached at {path!r}; kept its first {max(budget, 0)} bytes and stopped "
                                      f"extracting (see --max-total-size)"), path)
            self.stopped = True
        elif declared > self.max_member_bytes:
            self.log.warn(PartialRead(f"{self.archive}: member {path!r} declares {declared} bytes, over the "
                                      f"per-file cap of {self.max_member_bytes}; kept the first {budget} bytes "
                                      f"(see --max-file-size)"), path)
        return max(budget, 0)

    def open_output(self, path: str) -> int | None:
        parent = posixpath.dirname(path)
        if parent and not self.make_dirs(parent):
            return None
        target = self.destination / path
        if path in self.extracted_files:
            self.log.warn(f"{self.archive}: member {path!r} appears twice; keeping the later copy", path)
        try:
            # O_NOFOLLOW: nothing in the folder should be a link, and this keeps it that way.
            return os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            self.fail_on_full_disk(exc)
            self.log.warn(PartialRead(f"{self.archive}: member {path!r} not extracted: {describe_os_error(exc)}"))
            return None

    def extract_file(self, tar: tarfile.TarFile, member: tarfile.TarInfo, path: str) -> None:
        source = tar.extractfile(member)
        # Read errors propagate to the caller: they mean the archive is damaged here.
        read = source.read if source is not None else (lambda size: b"")
        if self.copy_bounded(read, path, member.size):
            with contextlib.suppress(OSError, OverflowError, ValueError):
                os.utime(self.destination / path, (member.mtime, member.mtime))

    def copy_bounded(self, read, path: str, size: int) -> bool:
        """Write at most the byte budget of `path` from `read(n)`; False when nothing was created."""
        budget = self.byte_budget(path, size)
        if budget == 0 and size > 0:
            return False
        descriptor = self.open_output(path)
        if descriptor is None:
            return False
        self.extracted_files.add(path)
        self.log.files_extracted += 1
        written = 0
        try:
            while written < budget:
                self.in_progress = (path, written)
                chunk = read(min(_MEMBER_READ, budget - written))
                if not chunk:
                    break
                self.write_all(descriptor, chunk, path)
                written += len(chunk)
                self.log.bytes_extracted += len(chunk)
            self.in_progress = None
        finally:
            os.close(descriptor)
        return True

    def write_all(self, descriptor: int, chunk: bytes, path: str) -> None:
        view = memoryview(chunk)
        while view:
            try:
                written = os.write(descriptor, view)
            except OSError as exc:
                raise DiagdiskError(f"cannot extract {path!r} from {self.archive}: {describe_os_error(exc)}",
                                    str(self.archive)) from None
            view = view[written:]

    # -- links, after the stream ---------------------------------------------------------------

    def resolve(self, link: _Link) -> tuple[str | None, str | None]:
        start = "" if link.hard else posixpath.dirname(link.path)
        return _resolve_link(start, link.target, self.symlinks)

    def missing_link_targets(self) -> set[str]:
        """Targets of wanted links that went by, unextracted, before the link was seen."""
        targets = (self.resolve(link)[0] for link in self.links)
        return {target for target in targets
                if target and target not in self.extracted_files and target not in self.extracted_dirs}

    def materialize_links(self) -> None:
        for link in self.links:
            resolved, reason = self.resolve(link)
            kind = "hardlink" if link.hard else "symlink"
            if resolved is None:
                self.log.warn(f"{self.archive}: {kind} {link.path!r} -> {link.target!r} {reason}; not followed")
                continue
            if resolved in self.extracted_dirs:
                continue  # Recorded in log.symlinks; copying folders could loop or multiply the data.
            if resolved not in self.extracted_files:
                self.log.warn(f"{self.archive}: {kind} {link.path!r} -> {link.target!r}: target not in the "
                              f"extracted data; not copied")
                continue
            if self.stopped:
                continue
            self.copy_member(resolved, link.path)

    def copy_member(self, source_path: str, path: str) -> None:
        size = os.stat(self.destination / source_path, follow_symlinks=False).st_size
        source = os.open(self.destination / source_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            self.copy_bounded(lambda count: os.read(source, count), path, size)
        finally:
            os.close(source)

    # -- the root ------------------------------------------------------------------------------

    def root(self) -> Path:
        """The single top-level folder if there is exactly one, else the extraction folder."""
        if len(self.top_levels) == 1 and self.nested_path_seen:
            (top,) = self.top_levels
            candidate = self.destination / top
            if not candidate.exists():
                candidate.mkdir(mode=0o700)
            if candidate.is_dir() and not candidate.is_symlink():
                return candidate
        return self.destination

    def relative_to_root(self, path: str, root: Path) -> str:
        if root == self.destination:
            return path
        return path.split("/", 1)[1] if "/" in path else ""


def _open_tar_data(path: Path, compression: str, handle: IO[bytes], max_stream_bytes: int):
    raw = _CountingFile(handle, os.fstat(handle.fileno()).st_size)
    decompressed = raw if compression == "tar" else _DECOMPRESSORS[compression](raw)
    return raw, _TarDataReader(decompressed, max_stream_bytes)


def _check_end_of_archive(archive: Path, tar: tarfile.TarFile, reader: _TarDataReader, log: ArchiveLog) -> None:
    """tarfile ends quietly on a damaged or missing header after the first; say so when it happens."""
    block = reader.block_at(tar.offset)
    if block is None:
        return
    if len(block) < tarfile.BLOCKSIZE:
        where = "without an end-of-archive marker" if not block else "inside a member header"
        log.warn(PartialRead(f"{archive}: tar data truncated at byte {tar.offset} ({where}); "
                             f"kept the {log.files_extracted} files extracted before it"))
    elif block.count(0) != len(block):
        log.warn(PartialRead(f"{archive}: tar data damaged at byte {tar.offset} (invalid member header); "
                             f"kept the {log.files_extracted} files extracted before it, the rest is unreadable"))


@contextmanager
def open_sosreport_archive(
    path: str | os.PathLike[str],
    *,
    wanted: Callable[[str], bool] | None = None,
    max_total_bytes: int = Limits.max_total_bytes,
    max_member_bytes: int = Limits.max_file_bytes,
    max_members: int = 200_000,
    max_stream_bytes: int = 64 << 30,
    log: ArchiveLog | None = None,
    name: str | None = None,
) -> Iterator[Path]:
    """Extract what is ``wanted`` from a sosreport tarball and yield its root folder.

    ``wanted(relative_path)`` is asked about each regular file (and folder) by its path below the
    archive's top folder, e.g. ``"var/log/messages"``; None extracts everything. The yielded root
    is the archive's single top-level folder if it has exactly one, else the extraction folder.
    The extraction folder is removed when the ``with`` block exits, however it exits.

    Caps: ``max_member_bytes`` cuts one file (warning), ``max_total_bytes`` stops extracting
    (warning), ``max_members`` stops reading after that many members (warning), and
    ``max_stream_bytes`` bounds the decompressed bytes read, wanted or not (warning).

    ``name`` is how warnings and errors name the archive (default: its path; a copy of stdin is
    better called "<stdin>").

    Raises InputError (with the archive's name) when the file cannot be read, is not a tar archive,
    or is damaged before any member could be read. Damage later is a warning in ``log``.
    """
    archive = Path(path)
    label = Path(name) if name else archive
    log = log if log is not None else ArchiveLog()
    head = _sniff(archive)
    if archive.is_dir():
        raise InputError("is a folder, not an archive", str(label))
    compression = _compression_of(head)
    if compression is None:
        raise InputError(_not_an_archive_reason(head), str(label))
    destination = Path(tempfile.mkdtemp(prefix="diagdisk-"))
    try:
        os.chmod(destination, 0o700)
        root = _extract(archive, label, compression, destination, wanted, log,
                        max_total_bytes, max_member_bytes, max_members, max_stream_bytes)
        yield root
    finally:
        _remove_tree(destination)


def _not_an_archive_reason(head: bytes) -> str:
    if not head:
        return "not a tar archive (empty file)"
    for prefix, reason in _UNSUPPORTED_MAGIC.items():
        if head.startswith(prefix):
            return f"not a tar archive: {reason}"
    return "not a tar archive (no gzip, xz, bzip2 or tar signature)"


def _extract(archive: Path, label: Path, compression: str, destination: Path, wanted, log: ArchiveLog,
             max_total_bytes: int, max_member_bytes: int, max_members: int, max_stream_bytes: int) -> Path:
    """Extract ``archive``; every message names it ``label``."""
    extraction = _Extraction(label, destination, wanted, log, max_total_bytes, max_member_bytes, max_members)
    try:
        handle = open(archive, "rb")  # noqa: SIM115 - closed in the finally below
    except OSError as exc:
        raise InputError(describe_os_error(exc), str(label)) from None
    try:
        raw, reader = _open_tar_data(archive, compression, handle, max_stream_bytes)
        try:
            tar = tarfile.open(fileobj=reader, mode="r|", tarinfo=_GuardedTarInfo)
        except _StreamCapReached:
            raise InputError("no tar member within the decompressed-size cap", str(label)) from None
        except _READ_FAILURES as exc:
            if isinstance(exc, tarfile.ReadError) and compression != "tar" and reader.delivered > 0:
                raise InputError(f"not a tar archive: the {compression} data does not hold a tar archive",
                                 str(label)) from None
            raise InputError(_describe_damage(exc, compression, raw), str(label)) from None
        _read_members(extraction, tar, reader, raw, compression)
    finally:
        handle.close()
    missing = extraction.missing_link_targets()
    if missing and not extraction.stopped:
        # Archive order is arbitrary: 'hostname' may come after its unwanted target. Streams cannot
        # seek back, so read once more for those files only; rare, and only when needed.
        extraction.only = missing
        with open(archive, "rb") as handle:
            raw, reader = _open_tar_data(archive, compression, handle, max_stream_bytes)
            with contextlib.suppress(*_READ_FAILURES, _StreamCapReached):
                tar = tarfile.open(fileobj=reader, mode="r|", tarinfo=_GuardedTarInfo)
                _read_members(extraction, tar, reader, raw, compression, quiet=True)
    extraction.materialize_links()
    root = extraction.root()
    log.symlinks = {
        extraction.relative_to_root(link, root): target
        for link, target in extraction.symlinks.items()
    }
    for member, message in log._by_member:
        log.member_warnings.setdefault(extraction.relative_to_root(member, root), []).append(message)
    if log.suppressed_warnings:
        summary = f"{label}: {log.suppressed_warnings} more warnings not shown"
        log.warnings.append(PartialRead(summary) if log.partial else summary)
    return root


def _read_members(extraction: _Extraction, tar: tarfile.TarFile, reader: _TarDataReader,
                  raw: _CountingFile, compression: str, *, quiet: bool = False) -> None:
    """Handle members until the end, a cap, or damage. ``quiet`` (second pass): the first pass has
    already warned about everything this pass could find."""
    log = extraction.log
    archive = extraction.archive
    members_seen = 0
    while True:
        try:
            member = tar.next()
            if member is None:
                if not quiet:
                    _check_end_of_archive(archive, tar, reader, log)
                return
            # Stream mode keeps every member in a list; drop them, the stream never goes back.
            tar.members = []
            members_seen += 1
            if not quiet:
                log.members_seen = members_seen
            if members_seen > extraction.max_members:
                if not quiet:
                    log.warn(PartialRead(f"{archive}: more than {extraction.max_members} members; stopped reading"))
                return
            extraction.handle(tar, member)
            if extraction.stopped:
                return
        except _StreamCapReached:
            if quiet:
                return
            log.warn(PartialRead(f"{archive}: stopped after {reader.delivered} bytes of decompressed data (the "
                                 f"cap); later members were not read"))
            return
        except _READ_FAILURES as exc:
            if quiet:
                return
            description = _describe_damage(exc, compression, raw)
            if members_seen == 0:
                raise InputError(description, str(archive)) from None
            if extraction.in_progress is not None:
                path, kept = extraction.in_progress
                log.warn(PartialRead(f"{archive}: member {path!r} cut short where the archive is damaged; kept its first "
                                     f"{kept} bytes"), path)
            log.warn(PartialRead(f"{archive}: {description}; kept the {log.files_extracted} files extracted "
                                 f"before it"))
            return


def _remove_tree(folder: Path) -> None:
    """Remove an extraction folder and all in it, even what a caller made unreadable inside it."""
    top = os.path.abspath(folder)
    retried: set[str] = set()

    def inside(path: str) -> bool:
        return path == top or path.startswith(top + os.sep)

    def make_writable_and_retry(_function, failed_path, _exc_info=None):
        # Our own folders are 0700, but a caller may have changed modes inside the root (a folder
        # made unreadable: only root could still enter it). The folder that holds the path, and the
        # path itself when it is a folder, are given back to us (never anything outside `folder`),
        # then the path is removed again, once.
        failed_path = os.path.abspath(failed_path)
        if failed_path in retried or not inside(failed_path):
            return
        retried.add(failed_path)
        with contextlib.suppress(OSError):
            if inside(os.path.dirname(failed_path)):
                os.chmod(os.path.dirname(failed_path), stat.S_IRWXU)
            if os.path.isdir(failed_path) and not os.path.islink(failed_path):
                os.chmod(failed_path, stat.S_IRWXU)
                remove(failed_path)
            else:
                os.unlink(failed_path)

    def remove(path: str) -> None:
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=make_writable_and_retry)
        else:
            shutil.rmtree(path, onerror=make_writable_and_retry)

    with contextlib.suppress(OSError):
        remove(top)
