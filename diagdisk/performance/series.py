"""One normalised record per device and interval, and series of them in bounded memory.

Whatever a source printed, a sample becomes: IOPS, reads and writes per second, MB/s, average
request size in kB, queue length, await (and r_await/w_await), service time and utilisation.
sysstat's svctm was never measured (%util x 10 / IOPS); when a source does not print it, the same
quotient is computed and called the apparent service time.

A series keeps at most `cap` samples: past that, neighbouring samples are merged two by two
(rates and utilisation averaged over time, await over requests, request size over kB), so a month
of 1-second data holds as much memory as an hour and the merged samples stay exact averages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

NAN = math.nan
# The fields of a normalised sample, in order (each a float; NaN when the source does not give it).
FIELDS = ("t", "interval", "iops", "r_s", "w_s", "rkb_s", "wkb_s", "mb_s", "areq_kb", "aqu", "await",
          "r_await", "w_await", "svctm", "util")
INDEX = {name: i for i, name in enumerate(FIELDS)}
DEFAULT_CAP = 1024


def normalise(values: dict, t: float | None, interval: float | None) -> tuple[list[float], bool]:
    """(sample in FIELDS order, True when svctm was computed rather than printed)."""
    get = values.get
    r_s, w_s, d_s = get("r_s"), get("w_s"), get("d_s")
    iops = get("tps")
    if iops is None and (r_s is not None or w_s is not None):
        iops = (r_s or 0.0) + (w_s or 0.0) + (d_s or 0.0)
    rkb, wkb, dkb = get("rkb_s"), get("wkb_s"), get("dkb_s")
    kb = (rkb or 0.0) + (wkb or 0.0) + (dkb or 0.0) if (rkb is not None or wkb is not None) else None
    areq = get("areq_kb")
    if areq is None:
        parts = [(n, size) for n, size in ((r_s, get("rareq_kb")), (w_s, get("wareq_kb")), (d_s, get("dareq_kb")))
                 if n is not None and size is not None]
        weight = sum(n for n, _ in parts)
        if weight > 0:
            areq = sum(n * size for n, size in parts) / weight
        elif kb is not None and iops:
            areq = kb / iops
    await_ = get("await")
    if await_ is None:
        parts = [(n, ms) for n, ms in ((r_s, get("r_await")), (w_s, get("w_await")), (d_s, get("d_await")))
                 if n is not None and ms is not None]
        weight = sum(n for n, _ in parts)
        if weight > 0:
            await_ = sum(n * ms for n, ms in parts) / weight
        elif parts and not iops:
            await_ = 0.0
    util = get("util")
    svctm = get("svctm")
    apparent = False
    if svctm is None and util is not None and iops is not None:
        svctm = util * 10 / iops if iops > 0 else 0.0
        apparent = True
    sample = [NAN if t is None else float(t), NAN if interval is None else float(interval), iops, r_s, w_s,
              rkb, wkb, kb / 1024 if kb is not None else None, areq, get("aqu"), await_,
              get("r_await"), get("w_await"), svctm, util]
    return [NAN if v is None else v for v in sample], apparent


def merge(a: list[float], b: list[float]) -> list[float]:
    """Two neighbouring samples as one: the exact average over both intervals."""
    wa = a[1] if a[1] == a[1] and a[1] > 0 else 1.0
    wb = b[1] if b[1] == b[1] and b[1] > 0 else 1.0
    total = wa + wb

    def timed(i: int) -> float:
        x, y = a[i], b[i]
        if x != x:
            return y
        if y != y:
            return x
        return (x * wa + y * wb) / total

    def per_request(i: int, weight: int) -> float:
        x, y = a[i], b[i]
        nx = a[weight] * wa if a[weight] == a[weight] else 0.0
        ny = b[weight] * wb if b[weight] == b[weight] else 0.0
        if x != x:
            return y
        if y != y:
            return x
        return (x * nx + y * ny) / (nx + ny) if nx + ny > 0 else (x + y) / 2

    out = [b[0], (a[1] + b[1]) if a[1] == a[1] and b[1] == b[1] else NAN]
    for i in range(2, len(FIELDS)):
        name = FIELDS[i]
        if name in ("await", "svctm", "areq_kb"):
            out.append(per_request(i, INDEX["iops"]))
        elif name == "r_await":
            out.append(per_request(i, INDEX["r_s"]))
        elif name == "w_await":
            out.append(per_request(i, INDEX["w_s"]))
        else:
            out.append(timed(i))
    return out


@dataclass
class Series:
    """The samples of one device from one source, in the order read; bounded by `cap`."""
    device: str
    source: str
    cap: int = DEFAULT_CAP
    samples: list[list[float]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)          # the source line of each sample (its first)
    segments: list[int] = field(default_factory=list)       # restarts cut segments
    apparent_svctm: bool = False
    merged: int = 1                                        # raw samples per kept sample (a power of two)
    raw_count: int = 0

    def add(self, sample: list[float], line: int, segment: int) -> None:
        self.samples.append(sample)
        self.lines.append(line)
        self.segments.append(segment)
        self.raw_count += 1
        if len(self.samples) > 2 * self.cap:
            self._halve()

    def _halve(self) -> None:
        samples, lines, segments = [], [], []
        i = 0
        while i < len(self.samples):
            if i + 1 < len(self.samples) and self.segments[i] == self.segments[i + 1]:
                samples.append(merge(self.samples[i], self.samples[i + 1]))
                lines.append(self.lines[i])
                segments.append(self.segments[i])
                i += 2
            else:
                samples.append(self.samples[i])
                lines.append(self.lines[i])
                segments.append(self.segments[i])
                i += 1
        self.samples, self.lines, self.segments = samples, lines, segments
        self.merged *= 2

    def finish(self) -> None:
        while len(self.samples) > self.cap:
            self._halve()
