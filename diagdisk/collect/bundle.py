"""Run the collection plan concurrently and write the one-folder ``.tar.gz`` bundle.

Items run in a small thread pool (each external command in its own process group, with its own
timeout capped by the overall deadline); only the main thread touches the tar file. The bundle is
written to ``<output>.part`` and renamed when complete, so a killed run never leaves a truncated
file under the final name. ``manifest.json`` is written last, when every item's outcome is known.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from diagdisk import __version__
from diagdisk.collect.items import Artifact, Context, Item, Outcome, make_record, plan
from diagdisk.errors import DiagdiskError

MANIFEST_SCHEMA = "diagdisk.bundle/1"
POOL_SIZE = 4


class OutputError(DiagdiskError):
    """The bundle cannot be written where asked."""


class BundleWriter:
    def __init__(self, output: Path, folder: str):
        self.output = output
        self.folder = folder
        self.partial = output.with_name(output.name + ".part")
        where = output.resolve().parent   # the folder, named whole: the default bundle name is relative
        if output.is_dir():
            raise OutputError(f"cannot write bundle {output}: it is a directory")
        try:
            self._file = open(self.partial, "wb")
        except OSError as error:
            raise OutputError(f"cannot write bundle {output.name} in the folder {where}: "
                              f"{error.strerror or error}") from None
        self._tar = tarfile.open(fileobj=self._file, mode="w:gz")
        self._paths: set[str] = set()
        self._mtime = time.time()
        self._add_directory("")

    def _info(self, path: str, size: int) -> tarfile.TarInfo:
        info = tarfile.TarInfo(f"{self.folder}/{path}" if path else self.folder)
        info.size, info.mtime, info.mode = size, self._mtime, 0o644
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    def _add_directory(self, path: str) -> None:
        if path in self._paths:
            return
        if path:
            parent = path.rpartition("/")[0]
            self._add_directory(parent)
        info = self._info(path, 0)
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        self._tar.addfile(info)
        self._paths.add(path)

    def add(self, artifact: Artifact) -> None:
        if artifact.path in self._paths:
            raise ValueError(f"duplicate bundle path {artifact.path}")
        self._add_directory(artifact.path.rpartition("/")[0])
        if artifact.file is not None:
            artifact.file.seek(0, os.SEEK_END)
            size = artifact.file.tell()
            artifact.file.seek(0)
            self._tar.addfile(self._info(artifact.path, size), artifact.file)
            artifact.file.close()
        else:
            data = artifact.data or b""
            self._tar.addfile(self._info(artifact.path, len(data)), io.BytesIO(data))
        self._paths.add(artifact.path)

    def close(self) -> None:
        self._tar.close()
        self._file.close()
        os.replace(self.partial, self.output)

    def abort(self) -> None:
        try:
            self._tar.close()
        except Exception:  # the archive is being thrown away; its own errors do not matter
            pass
        self._file.close()
        self.partial.unlink(missing_ok=True)


@dataclass
class CollectionResult:
    output: Path
    manifest: dict[str, Any]


def default_folder(hostname: str, when: datetime) -> str:
    safe_host = "".join(c if c.isalnum() or c in "-_." else "_" for c in hostname) or "unknown"
    return f"diagdisk-{safe_host}-{when.strftime('%Y%m%d-%H%M%S')}"


def collect_bundle(ctx: Context, output: Path, folder: str, hostname: str) -> CollectionResult:
    """Collect everything in the plan into ``output``; never raises for an item's failure."""
    started_at = datetime.now().astimezone()
    started = time.monotonic()
    writer = BundleWriter(output, folder)
    records: list[dict[str, Any]] = []
    try:
        with ThreadPoolExecutor(max_workers=POOL_SIZE, thread_name_prefix="collect") as pool:
            pending: dict[Future, Item] = {pool.submit(_run_item, item, ctx): item for item in plan(ctx)}
            while pending:
                done, _ = wait(pending, timeout=_PROGRESS_TICK, return_when=FIRST_COMPLETED)
                if not done:
                    _still_running(ctx, pending.values())
                for future in done:
                    pending.pop(future)
                    outcome = future.result()
                    for record in outcome.records:
                        ctx.progress(_progress_line(record))
                    records.extend(outcome.records)
                    for artifact in outcome.artifacts:
                        writer.add(artifact)
                    for follow_up in outcome.follow_ups:
                        pending[pool.submit(_run_item, follow_up, ctx)] = follow_up
        manifest = {
            "schema": MANIFEST_SCHEMA,
            "tool": {"name": "diagdisk", "version": __version__},
            "host": hostname,
            "created": started_at.isoformat(timespec="seconds"),
            "duration": round(time.monotonic() - started, 3),
            "since": ctx.since.isoformat(timespec="seconds"),
            "root": None if ctx.live else str(ctx.root),
            "privileged": ctx.privileged,
            "timeout": ctx.timeout,
            "self_test": ctx.self_test,
            "items": sorted(records, key=lambda r: r["name"]),
        }
        writer.add(Artifact("manifest.json", data=json.dumps(manifest, indent=2).encode() + b"\n"))
        writer.close()
    except BaseException:
        writer.abort()
        raise
    return CollectionResult(output, manifest)


# How often the progress display hears what is still running while no item finishes (iostat
# samples for --perf-seconds, a slow smartctl): a terminal never sits silent for long.
_PROGRESS_TICK = 0.5


def _still_running(ctx: Context, items) -> None:
    running = getattr(ctx.progress, "running", None)
    if running is not None:
        running(sorted(item.name for item in items))


def _run_item(item: Item, ctx: Context) -> Outcome:
    if ctx.remaining() <= 0:
        return Outcome([make_record(item.name, status="skipped", reason="overall deadline reached")])
    try:
        return item.collect(ctx)
    except Exception as error:  # one broken item must not lose the rest of the bundle
        return Outcome([make_record(item.name, status="failed", reason=f"internal error: {type(error).__name__}: {error}")])


def _progress_line(record: dict[str, Any]) -> str:
    detail = f" ({record['reason']})" if record.get("reason") else ""
    return f"  {record['status']:<7} {record['name']}{detail}"
