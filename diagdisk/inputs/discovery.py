"""Find what the paths hold and whose it is: sosreports, bundles and loose logs, grouped by host.

A support case folder holds several machines' sosreports, archives beside their unpacked copies,
a pasted dmesg and a README. Merging them gives one device table and one verdict for machines
that share nothing, and dates one host's year-less syslog lines with another host's year. So the
inputs are found and each is given a host identity before anything is read:

* a sosreport or `diagdisk collect` bundle (a folder laid out like one, or a tar archive of one)
  is one snapshot of one host; its identity is, in order, its `hostname` file, its `uname -a`, its
  manifest, the name sos or diagdisk gave the archive or folder, and the host field of its syslog
  headers;
* a loose file (a log, a rotation, a command output) is identified by the host field of its
  syslog or journal headers when they all name one host;
* a folder that is neither is searched: sosreport folders and archives under it are inputs of
  their own, loose files beside them are read only when they look like a log (a README is not);
  a folder of nothing but loose files is one input, as before, split by host only when its logs
  name several.

Snapshots and loose files naming one host are one group (a host's sosreport and the messages file
pasted from it merge). A snapshot without any identity (no hostname file, a host called
`localhost`) is a host of its own: two such snapshots are never merged. Loose files naming no host
join the one host found, or, when there are several, make a group of their own.

Nothing here reads more than a file's head; archives are opened (extracted) by :func:`open_groups`.
"""

from __future__ import annotations

import contextlib
import glob
import ipaddress
import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from .archive import holds_tar, named_like_tar
from .chunks import _open_decompressed, detect_compression
from .limits import Limits
from .opener import OpenedInput, open_input
from .sameness import copies_note, drop_copies
from .safeio import _symlink_to_file_inside, describe_os_error, looks_like_text, read_text_capped
from .sources import is_sosreport_root

# Host names that name no host: those of a system whose name was never set, or not yet at boot.
PLACEHOLDER_HOSTS = frozenset({"localhost", "localhost.localdomain", "localhost6", "(none)", "unknown",
                               "-", "(unknown)", "localdomain"})
_GLOB_CHARS = re.compile(r"[*?\[]")
_HEAD_BYTES = 1 << 16
_SAMPLED_LINES = 400

# The host field of a syslog or journal header: BSD/`short`/`short-precise` ("Mar  2 18:07:17 host
# tag:") and RFC 3339/`short-iso` ("2024-03-02T18:07:17+01:00 host tag:"). The same shapes the log
# stage frames (diagdisk/logs/framing.py), reduced to what names the host.
_HEADER_HOST = re.compile(
    r"(?:(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)?"
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?) +"
    r"(?P<host>[^\s:\[\]]+) (?P<tag>[^\s:\[]+)(?:\[\d+\])?:(?: |$)")
# A kernel ring buffer print: "[   12.345678] " or dmesg -T's "[Sat Mar  2 18:07:17 2024] ".
_DMESG_LINE = re.compile(r"\[ *\d+\.\d+\] |\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) \w{3} +\d{1,2} \d\d:\d\d:\d\d \d{4}\] ")

# sos 4: sosreport-<host>[-<case id>]-<YYYY-MM-DD>-<random>; sos 3: sosreport-<host>[.<case id>]-
# <YYYYmmddHHMMSS> (sos/report/__init__.py, sos/archive.py); diagdisk collect: diagdisk-<host>-
# <YYYYmmdd>-<HHMMSS> (diagdisk/collect/bundle.py default_folder).
_ARCHIVE_SUFFIX = re.compile(r"\.(?:tar(?:\.(?:gz|xz|bz2|zst))?|tgz|txz|tbz2?)$", re.IGNORECASE)
_SOS4_NAME = re.compile(r"^sosreport-(?P<rest>.+)-\d{4}-\d\d-\d\d-[A-Za-z0-9]+$")
_SOS3_NAME = re.compile(r"^sosreport-(?P<rest>.+)-\d{14}[A-Za-z0-9]*$")
_BUNDLE_NAME = re.compile(r"^diagdisk-(?P<host>.+)-\d{8}-\d{6}$")
_CASE_ID = re.compile(r"[-.]\d{5,}$")


@dataclass(frozen=True)
class HostIdentity:
    name: str        # as written where it was found
    evidence: str    # what named it: "hostname file", "uname", "manifest", "archive name", "syslog headers"

    @property
    def key(self) -> str:
        return self.name.strip().rstrip(".").lower()

    @property
    def short(self) -> str:
        """The first label of a host name; syslog headers often carry only that."""
        key = self.key
        try:
            ipaddress.ip_address(key)
            return key
        except ValueError:
            return key.split(".", 1)[0]


@dataclass
class Found:
    """One input found under the paths, not yet opened.

    kind: "sosreport" (a folder laid out like a sosreport or bundle), "archive" (a tar archive of
    one), "folder" (a folder of loose logs, read as one input), "file" (one loose file: a log, a
    rotation, a command output), "stream" (stdin or a pipe: read once, when opened).
    """

    path: str
    kind: str
    identity: HostIdentity | None = None
    # a part of a folder of loose logs split by host: the files (relative names) it holds
    files: list[str] | None = None

    @property
    def snapshot(self) -> bool:
        return self.kind in ("sosreport", "archive")

    @property
    def shown(self) -> str:
        return self.path


@dataclass
class HostGroup:
    """The inputs of one host, merged into one analysis and one report."""

    label: str                               # the host name, or what names an unidentified host
    identity: HostIdentity | None
    inputs: list[Found] = field(default_factory=list)
    # filled by open_groups: each input opened (path as shown, OpenedInput)
    opened: list[tuple[str, OpenedInput]] = field(default_factory=list)
    # what was read differently from how it was given, nothing lost (an input's copy read once)
    notes: list[str] = field(default_factory=list)

    @property
    def paths(self) -> list[str]:
        return [found.shown for found in self.inputs]


@dataclass
class Discovery:
    inputs: list[Found] = field(default_factory=list)
    # files seen but not taken (a README beside sosreports): one line each, not warnings about data
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Finding


def find_inputs(paths: list[str]) -> Discovery:
    """Every input under ``paths`` (globs expanded), in the order named, each folder in sorted order.

    Raises InputError for a path that does not exist (or a glob that matches nothing) or cannot be
    read; what is found inside a folder and cannot be read is left to the reader, which says why.
    """
    discovery = Discovery()
    for path in paths:
        for named in _expand(path):
            _find_under(named, discovery)
    # a path named twice (or found again under a folder also named) is read once, not counted twice
    seen: set[str] = set()
    unique = []
    for found in discovery.inputs:
        key = found.path if found.kind == "stream" else os.path.realpath(found.path)
        if key not in seen:
            seen.add(key)
            unique.append(found)
    discovery.inputs = unique
    _identify_loose(discovery)
    return discovery


def _expand(path: str) -> list[str]:
    if path == "-" or not _GLOB_CHARS.search(path) or os.path.lexists(path):
        return [path]
    matches = sorted(glob.glob(path))
    if not matches:
        raise InputError("matches no file", path)
    return matches


def _find_under(path: str, discovery: Discovery) -> None:
    if path == "-":
        discovery.inputs.append(Found(path="-", kind="stream"))
        return
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise InputError(describe_os_error(exc), path) from None
    if stat.S_ISFIFO(mode):
        discovery.inputs.append(Found(path=path, kind="stream"))
    elif stat.S_ISDIR(mode):
        _find_in_folder(Path(path), discovery)
    elif stat.S_ISREG(mode) and _is_archive(Path(path)):
        discovery.inputs.append(Found(path=path, kind="archive"))
    else:
        # a file named on the command line is read whatever it looks like (the reader says when it
        # is nothing diagdisk reads); devices and the like are refused when opened
        discovery.inputs.append(Found(path=path, kind="file"))


def _is_archive(path: Path) -> bool:
    try:
        return holds_tar(path) or named_like_tar(path)
    except InputError:
        return False  # unreadable: the reader reports it


def _find_in_folder(folder: Path, discovery: Discovery) -> None:
    if is_sosreport_root(folder):
        discovery.inputs.append(Found(path=str(folder), kind="sosreport"))
        return
    snapshots, loose = _search(folder)
    if not snapshots:
        # a folder of logs (a copy of /var/log, a case folder of pasted logs) is one input, as it
        # always was; the loose-file identities decide later whether it holds several hosts
        discovery.inputs.append(Found(path=str(folder), kind="folder"))
        return
    discovery.inputs.extend(snapshots)
    for path in loose:
        if _looks_like_log(path):
            discovery.inputs.append(Found(path=str(path), kind="file"))
        else:
            discovery.notes.append(f"{path}: not read: beside sosreports only logs are read, and its first "
                                   f"{_HEAD_BYTES // 1024} KB hold no syslog, journal or dmesg line")


def _search(folder: Path) -> tuple[list[Found], list[Path]]:
    """Sosreport folders and archives under ``folder`` (not looked into), and the other files.

    Like safeio.safe_walk: never leaves the folder (linked folders are not entered, links to
    files are followed only when they stay inside), sorted, an explicit stack."""
    real_root = Path(os.path.realpath(folder))
    snapshots: list[Found] = []
    loose: list[Path] = []
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            if current == folder:
                raise InputError(describe_os_error(exc), str(folder)) from None
            continue  # a folder nobody can list holds nothing found; the reader never sees it either
        subfolders = []
        for entry in entries:
            path = Path(entry.path)
            try:
                if entry.is_symlink():
                    if _symlink_to_file_inside(path, real_root):
                        (snapshots.append(Found(path=str(path), kind="archive")) if _is_archive(path)
                         else loose.append(path))
                elif entry.is_dir(follow_symlinks=False):
                    if is_sosreport_root(path):
                        snapshots.append(Found(path=str(path), kind="sosreport"))
                    else:
                        subfolders.append(path)
                elif entry.is_file(follow_symlinks=False):
                    (snapshots.append(Found(path=str(path), kind="archive")) if _is_archive(path)
                     else loose.append(path))
            except OSError:
                continue
        pending.extend(reversed(subfolders))
    return snapshots, loose


def _head(path: Path) -> bytes:
    """The first bytes of a file, decompressed when it is a compressed rotation."""
    try:
        with open(path, "rb") as handle:
            start = handle.read(6)
            compression = detect_compression(start)
            handle.seek(0)
            if compression is None:
                return handle.read(_HEAD_BYTES)
            with _open_decompressed(handle, compression) as stream:
                return stream.read(_HEAD_BYTES)
    except (OSError, EOFError, ValueError):
        return b""
    except Exception:  # noqa: BLE001 - a damaged compressed head (zlib, lzma errors) says nothing
        return b""


def _sample_lines(head: bytes) -> list[str]:
    lines = head.splitlines()
    if len(head) == _HEAD_BYTES:
        lines = lines[:-1]  # the last line may be cut
    return [line.decode("utf-8", "replace") for line in lines[:_SAMPLED_LINES]]


def _looks_like_log(path: Path) -> bool:
    head = _head(path)
    if not head or not looks_like_text(head):
        return False
    return any(_HEADER_HOST.match(line) or _DMESG_LINE.match(line) for line in _sample_lines(head))


def syslog_host(paths: list[Path]) -> HostIdentity | None:
    """The one host the syslog or journal headers at the start of these logs name, with at least
    one kernel line among them; None when they name several hosts (a log server's files) or none."""
    hosts: dict[str, str] = {}
    kernel_lines = 0
    for path in paths:
        for line in _sample_lines(_head(path)):
            match = _HEADER_HOST.match(line)
            if match and match.group("host").lower() not in PLACEHOLDER_HOSTS:
                hosts.setdefault(match.group("host").lower(), match.group("host"))
                kernel_lines += match.group("tag") == "kernel"
    if len(hosts) == 1 and kernel_lines:
        return HostIdentity(next(iter(hosts.values())), "syslog headers")
    return None


def _hosts_named(path: Path) -> set[str]:
    return {m.group("host").lower() for line in _sample_lines(_head(path))
            if (m := _HEADER_HOST.match(line)) and m.group("host").lower() not in PLACEHOLDER_HOSTS}


def _identify_loose(discovery: Discovery) -> None:
    """Loose files and sosreport folders can be identified without opening anything; a folder of
    logs naming several hosts becomes one input per host (and one of files naming none)."""
    found: list[Found] = []
    for item in discovery.inputs:
        if item.kind == "file":
            item.identity = syslog_host([Path(item.path)])
        elif item.kind == "sosreport":
            item.identity = tree_identity(Path(item.path), Path(item.path).name)
        elif item.kind == "folder":
            parts = _split_folder_by_host(Path(item.path))
            if len(parts) > 1:
                found.extend(parts)
                continue
            item.identity = parts[0].identity if parts else None
        found.append(item)
    discovery.inputs = found


def _split_folder_by_host(folder: Path) -> list[Found]:
    """A folder of loose logs: one part per host its logs name (files naming no host go with the
    one host named, or make a part of their own when several are named)."""
    from .safeio import safe_walk
    by_host: dict[str, list[str]] = {}
    unnamed: list[str] = []
    try:
        files = list(safe_walk(folder, []))
    except InputError:
        return []
    for path in files:
        hosts = _hosts_named(path)
        name = path.relative_to(folder).as_posix()
        if len(hosts) == 1:
            by_host.setdefault(hosts.pop(), []).append(name)
        else:
            unnamed.append(name)
    if len(by_host) <= 1:
        identity = syslog_host([folder / name for names in by_host.values() for name in names])
        return [Found(path=str(folder), kind="folder", identity=identity)]
    parts = [Found(path=str(folder), kind="folder", files=names,
                   identity=syslog_host([folder / name for name in names]) or HostIdentity(host, "syslog headers"))
             for host, names in by_host.items()]
    if unnamed:
        parts.append(Found(path=str(folder), kind="folder", files=unnamed))
    return parts


# ---------------------------------------------------------------------------------------------
# Identity of a sosreport or bundle


_HOSTNAME_FILES = ("hostname", "sos_commands/host/hostname", "sos_commands/general/hostname")
_UNAME_FILES = ("uname", "sos_commands/kernel/uname_-a")
_MANIFESTS = ("manifest.json", "sos_reports/manifest.json")
_SYSLOG_GLOBS = ("var/log/messages*", "var/log/syslog*", "var/log/kern.log*", "sos_commands/logs/journalctl*")


def tree_identity(root: Path, *names: str) -> HostIdentity | None:
    """Whose sosreport or bundle the folder ``root`` is; ``names`` are the names it came under
    (the archive's file name, its top folder), tried when the files name no host."""
    for relative in _HOSTNAME_FILES:
        first = _first_line(root / relative)
        if _names_a_host(first):
            return HostIdentity(first, "hostname file")
    for relative in _UNAME_FILES:
        fields = (_first_line(root / relative) or "").split()
        if len(fields) > 1 and fields[0] == "Linux" and _names_a_host(fields[1]):
            return HostIdentity(fields[1], "uname")
    for relative in _MANIFESTS:
        host = _manifest_host(root / relative)
        if _names_a_host(host):
            return HostIdentity(host, "manifest")
    for name in names:
        host = host_in_name(name)
        if _names_a_host(host):
            return HostIdentity(host, "archive name")
    logs = sorted({path for pattern in _SYSLOG_GLOBS for path in root.glob(pattern) if path.is_file()})
    return syslog_host(logs[:4])


def host_in_name(name: str) -> str | None:
    """The host a sosreport or bundle name carries ("sosreport-db01-03791234-2024-03-20-abcde.tar.xz"
    -> "db01"), or None when the name follows neither sos's pattern nor diagdisk collect's."""
    stem = _ARCHIVE_SUFFIX.sub("", name)
    bundle = _BUNDLE_NAME.match(stem)
    if bundle:
        return bundle.group("host")
    match = _SOS4_NAME.match(stem) or _SOS3_NAME.match(stem)
    if not match:
        return None
    return _CASE_ID.sub("", match.group("rest")) or None


def _names_a_host(name: str | None) -> bool:
    return bool(name) and name.strip().lower() not in PLACEHOLDER_HOSTS and len(name) <= 253 and not any(
        c.isspace() or not c.isprintable() for c in name.strip())


def _first_line(path: Path) -> str | None:
    try:
        if not path.is_file():
            return None
        text = read_text_capped(path, str(path), 4096)
    except InputError:
        return None
    stripped = text.strip()
    return stripped.splitlines()[0].strip() if stripped else None


def _manifest_host(path: Path) -> str | None:
    try:
        if not path.is_file():
            return None
        document = json.loads(read_text_capped(path, str(path), Limits.max_table_bytes))
    except (InputError, ValueError, RecursionError):
        return None
    if not isinstance(document, dict):
        return None
    for key in ("host", "hostname"):
        value = document.get(key)
        if isinstance(value, str):
            return value
    return None


# ---------------------------------------------------------------------------------------------
# Grouping and opening


def group_by_host(inputs: list[Found], notes: list[str] | None = None) -> list[HostGroup]:
    """Inputs naming one host in one group, in the order first named. See the module's docstring."""
    groups: list[HostGroup] = []
    by_key: dict[str, HostGroup] = {}
    unnamed_loose: list[Found] = []
    for found in sorted(inputs, key=lambda f: not f.snapshot):  # snapshots first: they name hosts best
        identity = found.identity
        if identity is None:
            if found.snapshot:
                groups.append(HostGroup(label=_label_of_unnamed(found), identity=None, inputs=[found]))
            else:
                unnamed_loose.append(found)
            continue
        group = by_key.get(identity.key) or (None if found.snapshot else _by_short_name(groups, identity))
        if group is None:
            group = HostGroup(label=identity.name, identity=identity)
            groups.append(group)
            by_key[identity.key] = group
        group.inputs.append(found)
    if unnamed_loose:
        if len(groups) == 1:
            groups[0].inputs.extend(unnamed_loose)
        else:
            if groups and notes is not None:
                notes.append(f"{', '.join(f.shown for f in unnamed_loose[:5])}: these logs name no host and "
                             f"{len(groups)} hosts were found, so they are reported on their own")
            label = "unidentified host" if groups else (
                _label_of_unnamed(unnamed_loose[0]) if len(unnamed_loose) == 1 else "unidentified host")
            groups.append(HostGroup(label=label, identity=None, inputs=unnamed_loose))
    # restore the order inputs were named in
    order = {id(found): index for index, found in enumerate(inputs)}
    for group in groups:
        group.inputs.sort(key=lambda f: order[id(f)])
    groups.sort(key=lambda g: min(order[id(f)] for f in g.inputs))
    return groups


def _by_short_name(groups: list[HostGroup], identity: HostIdentity) -> HostGroup | None:
    """A log whose headers carry a short name joins the one host of that short name."""
    matches = [g for g in groups if g.identity is not None and g.identity.short == identity.short]
    return matches[0] if len(matches) == 1 else None


def _label_of_unnamed(found: Found) -> str:
    return "<stdin>" if found.path == "-" else Path(found.path).name or found.path


@contextlib.contextmanager
def open_groups(groups: list[HostGroup], limits: Limits) -> Iterator[list[HostGroup]]:
    """Open (extract) every input of the groups; removed when the block ends."""
    with contextlib.ExitStack() as stack:
        for group in groups:
            group.opened = [(found.shown, stack.enter_context(open_found(found, limits))) for found in group.inputs]
        yield groups


@contextlib.contextmanager
def open_found(found: Found, limits: Limits) -> Iterator[OpenedInput]:
    """Open one input found; a part of a folder split by host holds only its files."""
    with open_input(found.path, limits) as opened:
        if found.files is not None:
            wanted = set(found.files)
            opened.files = [(path, name) for path, name in opened.files if name in wanted]
        yield opened


def discover_hosts(paths: list[str], limits: Limits) -> tuple[list[HostGroup], list[str], contextlib.ExitStack]:
    """Find, open and group by host: archives are identified by what they hold, so they are
    opened here. Returns the groups (opened), notes, and the ExitStack that removes the copies."""
    discovery = find_inputs(paths)
    stack = contextlib.ExitStack()
    try:
        opened: dict[int, OpenedInput] = {}
        for found in discovery.inputs:
            if found.kind in ("archive", "stream"):
                handle = stack.enter_context(open_found(found, limits))
                opened[id(found)] = handle
                if found.kind == "archive":
                    found.identity = tree_identity(handle.root, Path(found.path).name, handle.root.name)
                elif handle.kind == "archive":  # a tarball piped in
                    found.identity = tree_identity(handle.root, handle.root.name)
                else:
                    found.identity = syslog_host([path for path, _ in handle.files])
        groups = group_by_host(discovery.inputs, discovery.notes)
        for group in groups:
            group.opened = [(found.shown, opened[id(found)] if id(found) in opened
                             else stack.enter_context(open_found(found, limits))) for found in group.inputs]
            group.opened, copies = drop_copies(group.opened)
            group.notes += [copies_note(copy) for copy in copies]
            discovery.notes += group.notes
    except BaseException:
        stack.close()
        raise
    return groups, discovery.notes, stack
