"""One normalised record per device and interval, and series of them in bounded memory.

Whatever a source printed, a sample becomes: IOPS, reads and writes per second, MB/s, average
request size in kB, queue length, await (and r_await/w_await), service time and utilisation.
sysstat's svctm was never measured (%util x 10 / IOPS); when a source does not print it, the same
quotient is computed and called the apparent service time.

A series keeps at most `cap` samples: past that, neighbouring samples are merged two by two
(rates and utilisation averaged over time, await over requests, request size over kB), so a month
of 1-second data holds as much memory as an hour and the merged samples stay exact averages.

Large sources arrive a block of rows at a time (performance.blocks): normalise_block and
Series.add_block do over numpy columns, operation for operation, what normalise and add do for one
sample, so a value is the same double whichever way its row was read (tests/performance compare
both ways bit for bit). numpy is imported only when a block arrives.
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


def _total(numbers) -> float:
    """Left-to-right sum from 0, as numpy adds a column to another (sum() compensates rounding on
    Python 3.12+, which would let the two ways of reading a row differ in the last bit)."""
    total = 0.0
    for number in numbers:
        total += number
    return total


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
        weight = _total(n for n, _ in parts)
        if weight > 0:
            areq = _total(n * size for n, size in parts) / weight
        elif kb is not None and iops:
            areq = kb / iops
    await_ = get("await")
    if await_ is None:
        parts = [(n, ms) for n, ms in ((r_s, get("r_await")), (w_s, get("w_await")), (d_s, get("d_await")))
                 if n is not None and ms is not None]
        weight = _total(n for n, _ in parts)
        if weight > 0:
            await_ = _total(n * ms for n, ms in parts) / weight
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


def normalise_block(values: dict, t, interval):
    """normalise over columns: `values` maps fields to numpy arrays of one length (a field is in
    every row of a block or in none), `t` is an array, `interval` an array or None. Returns the
    samples as an (n, WIDTH) array and whether svctm was computed. Same operations in the same
    order as normalise, so the same doubles."""
    import numpy

    n = len(t)
    get = values.get
    nan = numpy.full(n, NAN)

    def or_zero(column):
        # `x or 0.0`: None and both zeros become +0.0
        return numpy.zeros(n) if column is None else numpy.where(column == 0.0, 0.0, column)

    with numpy.errstate(all="ignore"):
        r_s, w_s, d_s = get("r_s"), get("w_s"), get("d_s")
        iops = get("tps")
        if iops is None and (r_s is not None or w_s is not None):
            iops = or_zero(r_s) + or_zero(w_s) + or_zero(d_s)
        rkb, wkb, dkb = get("rkb_s"), get("wkb_s"), get("dkb_s")
        kb = or_zero(rkb) + or_zero(wkb) + or_zero(dkb) if (rkb is not None or wkb is not None) else None
        areq = get("areq_kb")
        if areq is None:
            parts = [(m, size) for m, size in ((r_s, get("rareq_kb")), (w_s, get("wareq_kb")), (d_s, get("dareq_kb")))
                     if m is not None and size is not None]
            weight, weighted = numpy.zeros(n), numpy.zeros(n)
            for m, size in parts:
                weight = weight + m
                weighted = weighted + m * size
            fallback = numpy.where(iops != 0.0, kb / iops, NAN) if kb is not None and iops is not None else nan
            areq = numpy.where(weight > 0, weighted / weight, fallback)
        await_ = get("await")
        if await_ is None:
            parts = [(m, ms) for m, ms in ((r_s, get("r_await")), (w_s, get("w_await")), (d_s, get("d_await")))
                     if m is not None and ms is not None]
            if parts:
                weight, weighted = numpy.zeros(n), numpy.zeros(n)
                for m, ms in parts:
                    weight = weight + m
                    weighted = weighted + m * ms
                idle = numpy.ones(n, dtype=bool) if iops is None else iops == 0.0
                await_ = numpy.where(weight > 0, weighted / weight, numpy.where(idle, 0.0, NAN))
        util = get("util")
        svctm = get("svctm")
        apparent = False
        if svctm is None and util is not None and iops is not None:
            svctm = numpy.where(iops > 0, util * 10 / iops, 0.0)
            apparent = True
        columns = [t, interval, iops, r_s, w_s, rkb, wkb, kb / 1024 if kb is not None else None, areq, get("aqu"),
                   await_, get("r_await"), get("w_await"), svctm, util]
    out = numpy.empty((n, WIDTH))
    for index, column in enumerate(columns):
        out[:, index] = nan if column is None else column
    return out, apparent


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


def _merge_rows(a, b):
    """merge over rows: a[i] and b[i] merged for every i (numpy arrays of samples), as whole
    columns at once."""
    import numpy

    with numpy.errstate(all="ignore"):
        wa = numpy.where(a[:, 1] > 0, a[:, 1], 1.0)[:, None]    # NaN > 0 is False: no interval weighs 1
        wb = numpy.where(b[:, 1] > 0, b[:, 1], 1.0)[:, None]
        out = (a * wa + b * wb) / (wa + wb)                      # averaged over time
        weights = a[:, _REQUEST_WEIGHTS], b[:, _REQUEST_WEIGHTS]
        nx = numpy.where(numpy.isnan(weights[0]), 0.0, weights[0] * wa)
        ny = numpy.where(numpy.isnan(weights[1]), 0.0, weights[1] * wb)
        x, y = a[:, _PER_REQUEST_COLUMNS], b[:, _PER_REQUEST_COLUMNS]
        out[:, _PER_REQUEST_COLUMNS] = numpy.where(nx + ny > 0, (x * nx + y * ny) / (nx + ny), (x + y) / 2)
        out = numpy.where(numpy.isnan(a), b, numpy.where(numpy.isnan(b), a, out))   # a value beats none
        out[:, 0] = b[:, 0]
        out[:, 1] = a[:, 1] + b[:, 1]
    return out


# fields averaged per request, and the field that counts their requests
_PER_REQUEST = {"await": INDEX["iops"], "svctm": INDEX["iops"], "areq_kb": INDEX["iops"], "r_await": INDEX["r_s"],
                "w_await": INDEX["w_s"]}
_PER_REQUEST_COLUMNS = [INDEX[name] for name in _PER_REQUEST]
_REQUEST_WEIGHTS = list(_PER_REQUEST.values())


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
        import numpy

        return numpy.frombuffer(self._data, dtype=numpy.float64).reshape(-1, WIDTH).tolist()

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

    def add_block(self, samples, lines, segment: int) -> None:
        """add() for each row of `samples` (an (n, WIDTH) numpy array) in order, with its line in
        `lines`: the series halves at the same points as it would one sample at a time."""
        import numpy

        done, count = 0, len(samples)
        while done < count:
            # add() halves as soon as the series holds 2 x cap + 1 samples
            room = max(1, 2 * self.cap + 1 - len(self.lines))
            part = slice(done, min(count, done + room))
            self._data.frombytes(numpy.ascontiguousarray(samples[part], dtype=numpy.float64).tobytes())
            self.lines.frombytes(numpy.ascontiguousarray(lines[part], dtype=numpy.int64).tobytes())
            self.segments.frombytes(numpy.full(part.stop - part.start, segment, dtype=numpy.int64).tobytes())
            self.raw_count += part.stop - part.start
            done = part.stop
            if len(self.lines) > 2 * self.cap:
                self._halve()

    def fill_interval(self, seconds: float) -> None:
        """Samples that came without their interval get `seconds` (times the samples merged)."""
        import numpy

        column = numpy.frombuffer(self._data, dtype=numpy.float64)[INDEX["interval"]::WIDTH]
        missing = numpy.isnan(column)
        if missing.any():
            column[missing] = seconds * self.merged
        del column   # a view of _data: released before _data can grow again

    def _halve(self) -> None:
        """Neighbours merged two by two, never across a segment (a restart): from the start of each
        run of one segment, samples pair up; an odd one out at the end of a run stays as it is."""
        import numpy

        count = len(self.lines)
        data = numpy.frombuffer(self._data, dtype=numpy.float64).reshape(count, WIDTH)
        segments = numpy.frombuffer(self.segments, dtype=numpy.int64)
        lines = numpy.frombuffer(self.lines, dtype=numpy.int64)
        positions = numpy.arange(count)
        run_start = numpy.ones(count, dtype=bool)
        run_start[1:] = segments[1:] != segments[:-1]
        in_run = positions - numpy.maximum.accumulate(numpy.where(run_start, positions, 0))
        leaders = numpy.flatnonzero(in_run % 2 == 0)
        paired = leaders[leaders + 1 < count]
        paired = paired[segments[paired] == segments[paired + 1]]
        kept = data[leaders].copy()
        kept[numpy.searchsorted(leaders, paired)] = _merge_rows(data[paired], data[paired + 1])
        kept_lines, kept_segments = lines[leaders].tobytes(), segments[leaders].tobytes()
        del data, segments, lines   # views of the arrays being replaced
        self._data, self.lines, self.segments = array("d"), array("q"), array("q")
        self._data.frombytes(kept.tobytes())
        self.lines.frombytes(kept_lines)
        self.segments.frombytes(kept_segments)
        self.merged *= 2

    def extend(self, other: "Series") -> None:
        """`other`'s samples after this series' own (its lines and segments too)."""
        self._data += other._data
        self.lines += other.lines
        self.segments += other.segments

    def sort_by_time(self) -> None:
        """Samples in time order (samples without a time first), stable: equal times keep their order."""
        import numpy

        count = len(self.lines)
        data = numpy.frombuffer(self._data, dtype=numpy.float64).reshape(count, WIDTH)
        times = data[:, INDEX["t"]]
        order = numpy.argsort(numpy.where(numpy.isnan(times), -1.0, times), kind="stable")
        if (order == numpy.arange(count)).all():
            return
        kept = data[order].copy()
        lines = numpy.frombuffer(self.lines, dtype=numpy.int64)[order].tobytes()
        segments = numpy.frombuffer(self.segments, dtype=numpy.int64)[order].tobytes()
        del data, times   # views of the arrays being replaced
        self._data, self.lines, self.segments = array("d"), array("q"), array("q")
        self._data.frombytes(kept.tobytes())
        self.lines.frombytes(lines)
        self.segments.frombytes(segments)

    def finish(self) -> None:
        while len(self.lines) > self.cap:
            before = len(self.lines)
            self._halve()
            if len(self.lines) == before:
                break   # every neighbour is in another segment: nothing more to merge
