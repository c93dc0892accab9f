"""Identical content is read once, whatever its path or container.

A case folder usually holds the customer's sosreport archive and the folder someone unpacked from
it; a messages file is pasted beside the sosreport it came from. Reading both copies counts every
disk error twice (`medium errors (x6)` for three), lists every source twice, and turns one USB
unplug into two. So, among the inputs of one host, a file whose bytes an input named earlier
already holds is not read again, and a note says so (no data is lost: it is no warning).

What is the same:

* a log, or a file only its content classifies (a pasted dmesg, iostat text): the same bytes,
  whatever it is called: a log carries its own times and device names;
* any other file of a sosreport tree (a command output, a queue setting, smartctl): the same bytes
  under the same name in the tree, since there the name says what the bytes are about (the
  scheduler file of sda and that of sdb often hold the same text).

Files are compared within one host's inputs and only across inputs (inside one input sos's own
copies, dmesg beside dmesg -T, are handled by inputs.sources.mark_duplicate_kernel_logs). Sizes are
compared first: only files whose size another input's file shares are hashed (SHA-256, as fleet
hashes its inputs). An input whose every file is a copy is left out altogether.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from .sources import classify_in_tree, is_sosreport_root

_BLOCK = 1 << 20
# formats whose file says by its name what it is about; logs and unknown files are judged by content
_CONTENT_ONLY = (None, "log")


@dataclass
class Copies:
    """What one input holds that an earlier one already does."""

    path: str            # the input, as named
    of: list[str]        # the earlier inputs holding the same content
    files: int           # how many of its files are copies
    whole: bool          # every file of it is a copy: the input is left out


def _size(path: Path) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None   # unreadable: its reader says why


def _digest(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while block := handle.read(_BLOCK):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def _key(name: str, digest: str) -> tuple[str, str | None]:
    return (digest, None if classify_in_tree(name) in _CONTENT_ONLY else name)


def drop_copies(opened: list[tuple[str, object]]) -> tuple[list[tuple[str, object]], list[Copies]]:
    """The inputs of one host (path as named, OpenedInput), in the order named, with the files an
    earlier input holds taken out of the later ones; and what was taken out. Inputs left with no
    file are left out."""
    if len(opened) < 2:
        return opened, []
    sizes: dict[int, set[int]] = {}     # size -> the inputs holding a file of that size
    files_sizes: list[list[int | None]] = []
    for index, (_, handle) in enumerate(opened):
        mine = [_size(path) for path, _ in handle.files]
        files_sizes.append(mine)
        for size in mine:
            if size is not None:
                sizes.setdefault(size, set()).add(index)
    seen: dict[tuple, int] = {}          # content key -> the first input holding it
    kept: list[tuple[str, object]] = []
    copies: list[Copies] = []
    for index, (path, handle) in enumerate(opened):
        keep, earlier = [], set()
        for (file, name), size in zip(handle.files, files_sizes[index]):
            digest = _digest(file) if size is not None and len(sizes.get(size, ())) > 1 else None
            if digest is None:
                keep.append((file, name))
                continue
            key = _key(name, digest)
            first = seen.setdefault(key, index)
            if first == index:
                keep.append((file, name))
            else:
                earlier.add(first)
        if not earlier:
            kept.append((path, handle))
            continue
        # of a sosreport tree only the files the analysis reads count (an unpacked folder holds
        # more than the archive it came from, whose other members were never extracted)
        tree = is_sosreport_root(handle.root)
        whole = not [name for _, name in keep if not tree or classify_in_tree(name) is not None]
        copies.append(Copies(path=path, of=[opened[i][0] for i in sorted(earlier)],
                             files=len(handle.files) - len(keep), whole=whole))
        if not whole:
            handle.files = keep
            kept.append((path, handle))
    return kept, copies


def copies_note(copy: Copies) -> str:
    """The note for one input's copies: what was not read again, and where it was read."""
    where = ", ".join(copy.of)
    if copy.whole:
        return f"{copy.path}: not read: the same content as {where}, which was read (read once, not counted twice)"
    files = f"{copy.files} file{'s' if copy.files != 1 else ''}"
    return f"{copy.path}: {files} not read: the same content as in {where}, which was read (read once, not counted twice)"
