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
from array import array

NAN = math.nan
# The fields of a normalised sample, in order (each a float; NaN when the source does not give it).
FIELDS = ("t", "interval", "iops", "r_s", "w_s", "rkb_s", "wkb_s", "mb_s", "areq_kb", "aqu", "await",
          "r_await", "w_await", "svctm", "util")
INDEX = {name: i for i, name in enumerate(FIELDS)}
WIDTH = len(FIELDS)
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


class Series:
    """The samples of one device from one source, in the order read; bounded by `cap`.

    Samples are stored flat in an array of doubles (FIELDS after FIELDS), eight bytes a value
    instead of a Python float object each: 200 devices at the cap hold a few tens of MB.
    `samples` gives them as lists (a copy); assign to it to replace them.
    """

    def __init__(self, device: str, source: str, cap: int = DEFAULT_CAP):
        self.device = device
        self.source = source
        self.cap = cap
        self._data = array("d")
        self.lines = array("q")          # the source line of each sample (its first)
        self.segments = array("q")       # restarts cut segments
        self.apparent_svctm = False
        self.merged = 1                  # raw samples per kept sample (a power of two)
        self.raw_count = 0

    def __len__(self) -> int:
        return len(self._data) // WIDTH

    @property
    def samples(self) -> list[list[float]]:
        data = self._data
        return [data[i:i + WIDTH].tolist() for i in range(0, len(data), WIDTH)]

    @samples.setter
    def samples(self, values: list[list[float]]) -> None:
        self._data = array("d", (v for sample in values for v in sample))

    def add(self, sample: list[float], line: int, segment: int) -> None:
        self._data.extend(sample)
        self.lines.append(line)
        self.segments.append(segment)
        self.raw_count += 1
        if len(self.lines) > 2 * self.cap:
            self._halve()

    def fill_interval(self, seconds: float) -> None:
        """Samples that came without their interval get `seconds` (times the samples merged)."""
        column = INDEX["interval"]
        for i in range(column, len(self._data), WIDTH):
            if self._data[i] != self._data[i]:
                self._data[i] = seconds * self.merged

    def _halve(self) -> None:
        samples, lines, segments = self.samples, self.lines, self.segments
        kept, kept_lines, kept_segments = [], array("q"), array("q")
        i = 0
        while i < len(samples):
            if i + 1 < len(samples) and segments[i] == segments[i + 1]:
                kept.append(merge(samples[i], samples[i + 1]))
                step = 2
            else:
                kept.append(samples[i])
                step = 1
            kept_lines.append(lines[i])
            kept_segments.append(segments[i])
            i += step
        self.samples, self.lines, self.segments = kept, kept_lines, kept_segments
        self.merged *= 2

    def finish(self) -> None:
        while len(self.lines) > self.cap:
            before = len(self.lines)
            self._halve()
            if len(self.lines) == before:
                break   # every neighbour is in another segment: nothing more to merge
