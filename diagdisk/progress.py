"""How far reading has got, for a progress display: bytes read from input files, also by workers.

The input stage counts the bytes it reads from files (inputs.chunks) with `count_read`; the
analysis tells what stage it is in. Both go to a Progress object, which the command line gives
the analysis when stderr is a terminal (cli/progress.py draws it); otherwise nothing is counted.

Workers are forked processes: their counts go to a shared integer made before they fork, which
the parent reads (`Progress.poll`) while it waits for them. Nothing here starts a thread, so a
fork never copies a lock another thread holds.
"""

from __future__ import annotations

import multiprocessing
import os
import time

_FLUSH_BYTES = 1 << 20


class Progress:
    """Receives what the analysis says of its progress; this one shows nothing."""

    shown = False   # whether anything is displayed (bytes are counted only then)

    def stage(self, name: str) -> None:
        """A new stage began ('reading logs', 'running rules')."""

    def reading(self, total_bytes: int, sources: int) -> None:
        """Reading log files of `total_bytes` on disk begins (their count is `sources`)."""

    def source(self, name: str) -> None:
        """This process now reads the source named `name`."""

    def sources_done(self, done: int, total: int) -> None:
        """`done` of `total` sources (or segments) were read."""

    def bytes_read(self, total: int) -> None:
        """`total` bytes of input have been read so far."""

    def poll(self) -> None:
        """Called now and then while workers read: take in what they counted."""

    def close(self) -> None:
        """The work is over (or failed): clear the display."""


class _SharedCount:
    """Bytes read in this process and its forked workers; reported to `progress` in the parent."""

    def __init__(self, progress: Progress, interval: float = 0.1):
        self.value = multiprocessing.get_context("fork").Value("q", 0, lock=True) \
            if "fork" in multiprocessing.get_all_start_methods() else None
        self.local = 0
        self.pending = 0
        self.parent = os.getpid()
        self.progress = progress
        self.interval = interval
        self.shown_at = 0.0

    def add(self, count: int) -> None:
        self.pending += count
        if self.pending >= _FLUSH_BYTES or os.getpid() == self.parent:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        if self.value is not None:
            with self.value.get_lock():
                self.value.value += self.pending
        else:
            self.local += self.pending
        self.pending = 0
        if os.getpid() == self.parent:
            self.report()

    def report(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.shown_at >= self.interval:
            self.shown_at = now
            total = self.local + (self.value.value if self.value is not None else 0)
            self.progress.bytes_read(total)


_count: _SharedCount | None = None


def start_counting(progress: Progress) -> None:
    """Count the bytes read from now on (call in the parent, before workers fork), when the
    progress is shown: the shared counter costs an import of ctypes."""
    global _count
    _count = _SharedCount(progress) if progress.shown else None


def stop_counting() -> None:
    global _count
    if _count is not None:
        _count.flush()
        _count.report(force=True)
    _count = None


def count_read(size: int) -> None:
    """`size` more bytes were read from an input file (a no-op unless counting)."""
    if _count is not None and size:
        _count.add(size)


def flush_count() -> None:
    """Hand a worker's last counted bytes to the parent (at the end of each file)."""
    if _count is not None:
        _count.flush()


def poll_count() -> None:
    """In the parent: report what the workers counted."""
    if _count is not None and os.getpid() == _count.parent:
        _count.report()
