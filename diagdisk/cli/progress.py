"""Progress on stderr while a long analysis or collection runs, drawn by tqdm.

Shown only when stderr is a terminal and --quiet was not given: a pipe, a file or a CI log gets
nothing, and tqdm is not even imported then. The bar appears after PROGRESS_DELAY seconds (so a
small input answers without a flicker of it) and is erased when the work ends, so the terminal
keeps only the report. While logs are read it shows the source, the bytes read of the total,
MB/s and the time left; then the stage (building the device table, running the rules, writing
the report).

tqdm does the drawing (terminal width, rates, ETA, redraw throttling) and has no dependencies of
its own; nothing here starts a thread (its monitor thread is switched off), so the workers the
analysis forks copy no lock another thread holds.
"""

from __future__ import annotations

import os
import sys
import time

from ..progress import Progress
from ..safetext import escape_control

# Seconds before anything is drawn; DIAGDISK_PROGRESS_DELAY changes it (0 draws at once).
PROGRESS_DELAY = 0.5
_DESCRIPTION_CHARS = 40


def progress_delay() -> float:
    try:
        return max(0.0, float(os.environ.get("DIAGDISK_PROGRESS_DELAY", PROGRESS_DELAY)))
    except ValueError:
        return PROGRESS_DELAY


def wants_progress(quiet: bool, stream=None) -> bool:
    stream = stream or sys.stderr
    try:
        return not quiet and stream.isatty()
    except (AttributeError, ValueError):
        return False


def make_progress(quiet: bool) -> Progress:
    """A progress display on stderr when it is a terminal, else one that shows nothing."""
    return TerminalProgress() if wants_progress(quiet) else Progress()


# Back to the start of the line, and erase to its end: what pip and cargo write over their
# progress line, so that the report (or the next line) starts on a clean line.
ERASE_LINE = "\r\x1b[K"


class _DrawnStream:
    """The terminal stream, noting whether anything was drawn on it since the line was erased:
    tqdm clears only what it thinks it drew (a bar drawn by refresh() before its delay passed is
    not), so the erasing is done here."""

    def __init__(self, stream):
        self.stream = stream
        self.drawn = False

    def write(self, text: str) -> int:
        self.drawn = self.drawn or bool(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)

    def erase(self) -> None:
        if self.drawn:
            self.stream.write(ERASE_LINE)
            self.stream.flush()
            self.drawn = False


class TerminalProgress(Progress):
    shown = True

    def __init__(self, stream=None):
        import time
        from tqdm.std import tqdm
        tqdm.monitor_interval = 0   # no monitor thread: workers are forked
        self._tqdm = tqdm
        self._clock = time.monotonic
        self._started = self._clock()
        self._stream = _DrawnStream(stream or sys.stderr)
        self._bar = None
        self._stage = ""
        self._sources = ""

    def _new_bar(self, **options):
        self.close()
        self._bar = self._tqdm(file=self._stream, leave=False, dynamic_ncols=True, delay=progress_delay(),
                               mininterval=0.2, **options)

    def stage(self, name: str) -> None:
        self._stage = name
        if name == "reading logs":
            return  # reading() draws the bytes bar
        self._new_bar(total=None, bar_format="diagdisk: {desc} {elapsed}", desc=name)
        if self._clock() - self._started >= progress_delay():
            self._bar.refresh()   # a stage has no count to advance: drawn now, once the run is not short

    def reading(self, total_bytes: int, sources: int) -> None:
        self._sources = f"{sources} log{'s' if sources != 1 else ''}"
        self._new_bar(total=max(total_bytes, 1), unit="B", unit_scale=True, unit_divisor=1000,
                      desc=f"diagdisk: reading {self._sources}",
                      bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
                                 "[{rate_fmt}, {remaining} left{postfix}]")

    def source(self, name: str) -> None:
        if self._bar is not None and self._stage == "reading logs":
            self._bar.set_description_str(f"diagdisk: reading {_short(name)}", refresh=True)

    def sources_done(self, done: int, total: int) -> None:
        if self._bar is not None and self._stage == "reading logs" and total > 1:
            self._bar.set_postfix_str(f"{done}/{total} done")

    def bytes_read(self, total: int) -> None:
        if self._bar is not None and self._stage == "reading logs":
            self._bar.update(max(0, min(total, self._bar.total) - self._bar.n))

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._stream.erase()


class CollectProgress:
    """`diagdisk collect`: how many items are done, and the last one that finished."""

    def __init__(self, quiet: bool):
        self._bar = None
        if wants_progress(quiet):
            from tqdm.std import tqdm
            tqdm.monitor_interval = 0
            self._bar = tqdm(total=None, file=sys.stderr, leave=False, dynamic_ncols=True, delay=progress_delay(),
                             desc="diagdisk: collecting", bar_format="{desc}: {n} items done [{elapsed}] {postfix}")
        self._started = time.monotonic()

    def __call__(self, line: str) -> None:
        """One item finished; `line` says which and how (collect.bundle's progress line)."""
        if self._bar is not None:
            self._bar.set_postfix_str(_short(" ".join(line.split())), refresh=False)
            self._bar.update(1)

    def running(self, names: list[str]) -> None:
        """No item finished for a while: say which are still running, and that time passes."""
        if self._bar is not None:
            shown = names[0] + (f" and {len(names) - 1} more" if len(names) > 1 else "")
            self._bar.set_postfix_str(_short(f"running {shown}"), refresh=False)
            if time.monotonic() - self._started >= progress_delay():
                self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _short(name: str) -> str:
    name = escape_control(name)
    return name if len(name) <= _DESCRIPTION_CHARS else "\u2026" + name[-(_DESCRIPTION_CHARS - 1):]
