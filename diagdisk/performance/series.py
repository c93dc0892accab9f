"""One normalised record per device and interval, and series of them in bounded memory.

Whatever a source printed, a sample becomes: IOPS, reads and writes per second, MB/s, average
request size in kB, queue length, await (and r_await/w_await), service time and utilisation.
sysstat's svctm was never measured (%util x 10 / IOPS); when a source does not print it, the same
quotient is computed and called the apparent service time.

A series keeps at most `cap` samples: past that, neighbouring samples are merged two by two
(rates and utilisation averaged over time, await over requests, request size over kB), so a month
of 1-second data holds as much memory as an hour and the merged samples stay exact averages. The
decimation is uniform: each kept sample stands for the same number of raw samples (`merged`, a
power of two; only the last sample before a restart or the end may stand for fewer), because new
samples are merged in groups of that size before they are kept, as a binary counter holds a
partial sum. Each kept sample knows how many raw samples it stands for, so a source that gives no
interval (sar text) still weighs them right.

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
    # reads and writes add up only when both were read: a column the source lacks is unknown, not 0
    # (discards are 0 when not printed: sysstat before 12.1.2 has no discard columns)
    if iops is None and r_s is not None and w_s is not None:
        iops = r_s + w_s + (d_s or 0.0)
    rkb, wkb, dkb = get("rkb_s"), get("wkb_s"), get("dkb_s")
    kb = rkb + wkb + (dkb or 0.0) if (rkb is not None and wkb is not None) else None
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
        sides = ((r_s, get("r_await")), (w_s, get("w_await")), (d_s, get("d_await")))
        parts = [(n, ms) for n, ms in sides if n is not None and ms is not None]
        weight = _total(n for n, _ in parts)
        # reads or writes whose time was not read (a layout of read columns only) leave await unknown
        if any(ms is None and n != 0.0 for n, ms in sides[:2]):
            pass
        elif weight > 0:
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
        if iops is None and r_s is not None and w_s is not None:
            iops = r_s + w_s + or_zero(d_s)
        rkb, wkb, dkb = get("rkb_s"), get("wkb_s"), get("dkb_s")
        kb = rkb + wkb + or_zero(dkb) if (rkb is not None and wkb is not None) else None
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
                for m, ms in ((r_s, get("r_await")), (w_s, get("w_await"))):
                    if ms is None:
                        await_ = numpy.where(numpy.ones(n, dtype=bool) if m is None else m != 0.0, NAN, await_)
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


def merge(a: list[float], b: list[float], a_count: float = 1.0, b_count: float = 1.0) -> list[float]:
    """Two neighbouring samples as one: the exact average over both intervals. Without an interval,
    a sample weighs as many as the raw samples it stands for (`a_count`, `b_count`)."""
    wa = a[1] if a[1] == a[1] and a[1] > 0 else a_count
    wb = b[1] if b[1] == b[1] and b[1] > 0 else b_count
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


def _merge_rows(a, b, a_count=1.0, b_count=1.0):
    """merge over rows: a[i] and b[i] merged for every i (numpy arrays of samples, counts as
    numbers or arrays), as whole columns at once."""
    import numpy

    with numpy.errstate(all="ignore"):
        wa = numpy.where(a[:, 1] > 0, a[:, 1], a_count)[:, None]    # NaN > 0 is False
        wb = numpy.where(b[:, 1] > 0, b[:, 1], b_count)[:, None]
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


def _tree(rows, size: int):
    """Each run of `size` rows (a power of two) merged as a balanced binary tree: neighbours two by
    two, then those two by two. Rows of a tree stand for equal numbers of samples."""
    width = rows.shape[1]
    groups, count = rows.reshape(-1, size, width), 1.0
    while groups.shape[1] > 1:
        groups = _merge_rows(groups[:, 0::2].reshape(-1, width), groups[:, 1::2].reshape(-1, width),
                             count, count).reshape(len(groups), -1, width)
        count *= 2
    return groups[:, 0]


# fields averaged per request, and the field that counts their requests
_PER_REQUEST = {"await": INDEX["iops"], "svctm": INDEX["iops"], "areq_kb": INDEX["iops"], "r_await": INDEX["r_s"],
                "w_await": INDEX["w_s"]}
_PER_REQUEST_COLUMNS = [INDEX[name] for name in _PER_REQUEST]
_REQUEST_WEIGHTS = list(_PER_REQUEST.values())


class Series:
    """The samples of one device from one source, in the order read; bounded by `cap`.

    Samples are stored flat in an array of doubles (FIELDS after FIELDS), eight bytes a value
    instead of a Python float object each: 200 devices at the cap hold a few tens of MB.
    `samples` gives them as lists (a copy). `counts` says how many raw samples each stands for.
    Samples still being grouped (fewer than `merged`) wait in `pending` until close() or finish().
    """

    def __init__(self, device: str, source: str, cap: int = DEFAULT_CAP):
        self.device = device
        self.source = source
        self.cap = cap
        self._data = array("d")
        self.lines = array("q")          # the source line of each sample (its first)
        self.segments = array("q")       # restarts cut segments
        self.counts = array("q")         # raw samples each kept sample stands for
        self.apparent_svctm = False
        self.merged = 1                  # raw samples per kept sample (a power of two)
        self.raw_count = 0
        # the group being filled: (level, sample, first line) with 2**level raw samples each, levels
        # falling from left to right like the bits of the number of samples in the group so far
        self.pending: list[tuple[int, list[float], int]] = []
        self.segment: int | None = None  # the segment samples are being added to
        self.halvings = 0

    def __len__(self) -> int:
        return len(self.lines)

    @property
    def samples(self) -> list[list[float]]:
        import numpy

        return numpy.frombuffer(self._data, dtype=numpy.float64).reshape(-1, WIDTH).tolist()

    def matrix(self):
        """The kept samples as an (n, WIDTH) numpy array of float64 (a copy: the series may grow)."""
        import numpy

        return numpy.frombuffer(self._data, dtype=numpy.float64).reshape(-1, WIDTH).copy()

    @samples.setter
    def samples(self, values: list[list[float]]) -> None:
        self._data = array("d", (v for sample in values for v in sample))
        self.counts = array("q", [1] * len(values))

    # ---- adding
    def add(self, sample: list[float], line: int, segment: int) -> None:
        if segment != self.segment:
            self.close()
            self.segment = segment
        node = (0, sample, line)
        while self.pending and self.pending[-1][0] == node[0]:
            level, earlier, first_line = self.pending.pop()
            node = (level + 1, merge(earlier, node[1], 2 ** level, 2 ** level), first_line)
        self.raw_count += 1
        if 2 ** node[0] == self.merged:
            self._keep(node[1], node[2], self.merged)
        else:
            self.pending.append(node)

    def add_block(self, samples, lines, segment: int) -> None:
        """add() for each row of `samples` (an (n, WIDTH) numpy array) in order, with its line in
        `lines`: the same merges in the same order, whole groups at a time."""
        import numpy

        add_blocks([self], numpy.asarray(samples, dtype=numpy.float64)[None], numpy.asarray(lines)[None], segment)

    def state(self) -> tuple:
        """What decides how added samples are grouped and when the series halves: series in the
        same state can take their blocks together (add_blocks). Each halves on its own, by its own
        segments; the states are compared again after a halving."""
        return (self.cap, self.merged, self.segment, tuple(level for level, _, _ in self.pending), len(self.lines))

    def close(self) -> None:
        """The group being filled kept as it is (a restart, or the end of the source): its samples
        merged from the oldest, each weighed by the raw samples it stands for."""
        if not self.pending:
            return
        level, sample, line = self.pending[0]
        count = 2 ** level
        for other_level, other, _ in self.pending[1:]:
            sample = merge(sample, other, count, 2 ** other_level)
            count += 2 ** other_level
        self.pending = []
        self._keep(sample, line, count, growing=False)

    def _keep(self, sample: list[float], line: int, count: int, growing: bool = True) -> None:
        self._data.extend(sample)
        self.lines.append(line)
        self.segments.append(self.segment)
        self.counts.append(count)
        if len(self.lines) > 2 * self.cap:
            self._halve("growing" if growing else "closed")

    def _keep_rows(self, rows, lines, count: int) -> None:
        import numpy

        self._data.frombytes(numpy.ascontiguousarray(rows).tobytes())
        self.lines.frombytes(numpy.asarray(lines, dtype=numpy.int64).tobytes())
        self.segments += array("q", [self.segment]) * len(rows)
        self.counts += array("q", [count]) * len(rows)
        if len(self.lines) > 2 * self.cap:
            self._halve("growing")

    # ---- bounding
    def _halve(self, mode: str) -> None:
        """Neighbours merged two by two, never across a segment (a restart): from the start of each
        run of one segment, samples pair up; an odd one out at the end of a run stays as it is.
        `mode`: "growing" while samples are added to the last run: its odd one out goes back to the
        group being filled, so that every kept sample there stays the merge of `merged` raw samples,
        and groups double; "closed" when no run grows (groups stay); "final" at the end (groups
        double, as the last run's samples did)."""
        import numpy

        self.halvings += 1
        count = len(self.lines)
        data = numpy.frombuffer(self._data, dtype=numpy.float64).reshape(count, WIDTH)
        segments = numpy.frombuffer(self.segments, dtype=numpy.int64)
        lines = numpy.frombuffer(self.lines, dtype=numpy.int64)
        counts = numpy.frombuffer(self.counts, dtype=numpy.int64)
        positions = numpy.arange(count)
        run_start = numpy.ones(count, dtype=bool)
        run_start[1:] = segments[1:] != segments[:-1]
        starts = numpy.maximum.accumulate(numpy.where(run_start, positions, 0))
        in_run = positions - starts
        leaders = numpy.flatnonzero(in_run % 2 == 0)
        paired = leaders[leaders + 1 < count]
        paired = paired[segments[paired] == segments[paired + 1]]
        if mode == "final":
            self.merged *= 2
        if not len(paired):
            return
        last_run = count - starts[-1]
        open_run = mode == "growing" and not self.pending and segments[-1] == self.segment and last_run >= 2
        give_back = open_run and last_run % 2 == 1     # the odd one out of the run being filled
        if give_back:
            leaders = leaders[:-1]
        kept = data[leaders].copy()
        where = numpy.searchsorted(leaders, paired)
        kept[where] = _merge_rows(data[paired], data[paired + 1], counts[paired].astype(numpy.float64),
                                  counts[paired + 1].astype(numpy.float64))
        kept_counts = counts[leaders].copy()
        kept_counts[where] += counts[paired + 1]
        kept_lines, kept_segments = lines[leaders].tobytes(), segments[leaders].tobytes()
        if give_back:
            self.pending = [(self.merged.bit_length() - 1, data[-1].tolist(), int(lines[-1]))]
        if open_run:
            self.merged *= 2
        del data, segments, lines, counts   # views of the arrays being replaced
        self._data, self.lines, self.segments, self.counts = array("d"), array("q"), array("q"), array("q")
        self._data.frombytes(kept.tobytes())
        self.lines.frombytes(kept_lines)
        self.segments.frombytes(kept_segments)
        self.counts.frombytes(kept_counts.tobytes())

    def fill_interval(self, seconds: float) -> None:
        """Samples that came without their interval get `seconds` times the raw samples they stand for."""
        import numpy

        self.close()
        column = numpy.frombuffer(self._data, dtype=numpy.float64)[INDEX["interval"]::WIDTH]
        missing = numpy.isnan(column)
        if missing.any():
            column[missing] = seconds * numpy.frombuffer(self.counts, dtype=numpy.int64)[missing]
        del column   # a view of _data: released before _data can grow again

    def extend(self, other: "Series") -> None:
        """`other`'s samples after this series' own (its lines, segments and counts too)."""
        self.close()
        other.close()
        self._data += other._data
        self.lines += other.lines
        self.segments += other.segments
        self.counts += other.counts

    def sort_by_time(self) -> None:
        """Samples in time order (samples without a time first), stable: equal times keep their order."""
        import numpy

        self.close()
        count = len(self.lines)
        data = numpy.frombuffer(self._data, dtype=numpy.float64).reshape(count, WIDTH)
        times = data[:, INDEX["t"]]
        order = numpy.argsort(numpy.where(numpy.isnan(times), -1.0, times), kind="stable")
        if (order == numpy.arange(count)).all():
            return
        kept = data[order].copy()
        moved = [numpy.frombuffer(values, dtype=numpy.int64)[order].tobytes()
                 for values in (self.lines, self.segments, self.counts)]
        del data, times   # views of the arrays being replaced
        self._data, self.lines, self.segments, self.counts = array("d"), array("q"), array("q"), array("q")
        self._data.frombytes(kept.tobytes())
        for values, raw in zip((self.lines, self.segments, self.counts), moved):
            values.frombytes(raw)

    def finish(self) -> None:
        self.close()
        while len(self.lines) > self.cap:
            before = len(self.lines)
            self._halve("final")
            if len(self.lines) == before:
                break   # every neighbour is in another segment: nothing more to merge


def add_blocks(series: list[Series], samples, lines, segment: int) -> None:
    """Series.add_block for several series at once: series[j] takes samples[j] (an array (series,
    rows, WIDTH)) with lines[j]. Series in one state (Series.state) group and halve alike, so their
    groups are merged together (sar repeats every device each interval: a block of 200 devices is
    one tree of merges, not 200). When a halving sets them apart, each goes on alone."""
    import numpy

    for one in series:
        if segment != one.segment:
            one.close()
            one.segment = segment
    if len(series) > 1 and len({one.state() for one in series}) > 1:
        for index, one in enumerate(series):
            add_blocks([one], samples[index:index + 1], lines[index:index + 1], segment)
        return
    first = series[0]
    count, rows = len(series), samples.shape[1]
    done = 0

    def tree(size: int):
        nodes = _tree(samples[:, done:done + size].reshape(-1, WIDTH), size)
        return nodes, lines[:, done]

    def carry(level: int, nodes, first_lines):
        """A node of `level` for each series onto its group being filled, merged with the nodes
        of the same size it completes; True when that completes the group (then kept)."""
        while first.pending and first.pending[-1][0] == level:
            size = float(2 ** level)
            earlier = numpy.array([one.pending[-1][1] for one in series])
            first_lines = numpy.array([one.pending[-1][2] for one in series])
            for one in series:
                one.pending.pop()
            nodes = _merge_rows(earlier, nodes, size, size)
            level += 1
        if 2 ** level == first.merged:
            size = first.merged      # before a halving in _keep doubles it
            for index, one in enumerate(series):
                one._keep(nodes[index].tolist(), int(first_lines[index]), size)
            return True
        for index, one in enumerate(series):
            one.pending.append((level, nodes[index].tolist(), int(first_lines[index])))
        return False

    halvings = [one.halvings for one in series]
    split = False

    def apart() -> bool:
        """True once a halving has set the series' states apart (they stay apart for the rest of
        the block)."""
        nonlocal halvings, split
        if not split:
            now = [one.halvings for one in series]
            if now != halvings:
                halvings = now
                split = len({one.state() for one in series}) > 1
        return split

    while done < rows:
        # the group being filled: bring its last (smallest) node a neighbour of the same size
        while first.pending and rows - done >= 2 ** first.pending[-1][0]:
            level = first.pending[-1][0]
            nodes, first_lines = tree(2 ** level)
            done += 2 ** level
            if carry(level, nodes, first_lines):
                break
        if apart():
            break
        if first.pending:
            if rows - done < 2 ** first.pending[-1][0]:
                break
            continue   # a halving made the group larger
        # whole groups, as many as fit before the series must halve
        size = first.merged
        groups = min((rows - done) // size, max(1, 2 * first.cap + 1 - len(first.lines)))
        if groups == 0:
            break
        stop = done + groups * size
        nodes = _tree(samples[:, done:stop].reshape(-1, WIDTH), size).reshape(count, groups, WIDTH)
        for index, one in enumerate(series):
            one._keep_rows(nodes[index], lines[index, done:stop:size], size)
        done = stop
        if apart():
            break
    if apart():
        for index, one in enumerate(series):
            add_blocks([one], samples[index:index + 1, done:], lines[index:index + 1, done:], segment)
            one.raw_count += done
        return
    # the rest starts a group: its bits from the highest
    left = rows - done
    for level in range(left.bit_length() - 1, -1, -1):
        if left & (1 << level):
            nodes, first_lines = tree(1 << level)
            for index, one in enumerate(series):
                one.pending.append((level, nodes[index].tolist(), int(first_lines[index])))
            done += 1 << level
    for one in series:
        one.raw_count += rows
