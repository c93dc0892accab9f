"""Builders for hostile archives, made in memory so that every test states its own input."""

from __future__ import annotations

import builtins
import bz2
import gzip
import io
import lzma
import tarfile
from pathlib import Path

COMPRESSORS = {
    "gz": gzip.compress,
    "xz": lzma.compress,
    "bz2": bz2.compress,
    "tar": lambda data: data,
}


def file_member(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def link_member(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


def dir_member(name: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    return info, None


def build_tar(members, fmt: int = tarfile.GNU_FORMAT) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def write_archive(path: Path, members, compression: str = "xz", fmt: int = tarfile.GNU_FORMAT) -> Path:
    path.write_bytes(COMPRESSORS[compression](build_tar(members, fmt)))
    return path


def tree_snapshot(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*")}


def permission_denied_for(monkeypatch, module, function_name, denied_path: Path):
    """Make ``module.function_name`` refuse ``denied_path`` as a permission problem would.

    Tests run as root in CI, where chmod 000 stops nothing, so the refusal is simulated."""
    real = getattr(module, function_name, None) or getattr(builtins, function_name)

    def guarded(path, *args, **kwargs):
        if Path(path) == Path(denied_path):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(module, function_name, guarded, raising=False)
