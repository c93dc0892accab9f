"""sysstat's binary daily files (saDD) read directly: the disk activity (A_DISK) of every record
turned into the figures `sar -d` / `sadf -d` print for it, without sadf.

The layout is sysstat's (sa.h): a file_magic, a file_header, the list of activities in the file,
then records: a record_header, and for a statistics record each activity's items in list order,
an item count (__nr_t) first when the activity has one. Only the current format (FORMAT_MAGIC
0x2175, sysstat 11.7.1 onwards) is read; the sizes of the headers and of each activity's items are
taken from the file, as sysstat does, so a later sysstat that grows a structure stays readable.

A day of 1-second samples is 86,400 records of the same layout (the device count rarely changes),
so records are not walked one by one: the layout of one record predicts where the next ones start,
numpy checks that prediction over a run of records at once (record type, no extra structures, the
same item counts), and the disk structures of the whole run are one strided structured view of the
file. A record that breaks the run (a restart, a comment, a device added) is walked on its own.

Figures are computed as sysstat's print_disk_stats and compute_ext_disk_stats do: counters are
differenced in their own C types (unsigned 32-bit ticks wrap as in C), a device is matched to the
previous record by major and minor, a device seen for the first time or re-registered (all its
counters went down) is differenced against zero, and the interval is the uptime difference in
hundredths of a second. Devices are named devM-m, as sysstat names them when it cannot look the
device up: the names on the analysing machine mean nothing for another host's file, and the
performance stage resolves devM-m through the input's own device tables.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path

from .blocks import SampleBlock

SYSSTAT_MAGIC = 0xD596
FORMAT_MAGIC = 0x2175
OLD_FORMATS = {0x2171: "sysstat 10.3.1 to 11.7.0", 0x2173: "sysstat 11.7.1 development"}
FILE_MAGIC_SIZE = 76
A_DISK = 11
A_DISK_MAGIC = 0x8A + 2     # ACTIVITY_MAGIC_BASE + 2: sysstat 12.0.0 onwards
A_DISK_MAGIC_11 = 0x8A + 1  # sysstat 11.7.x: the same 48-byte structure
R_STATS, R_RESTART, R_LAST_STATS, R_COMMENT = 1, 2, 3, 4
R_EXTRA_MIN, R_EXTRA_MAX = 5, 15
MAX_COMMENT_LEN = 64
EXTRA_DESC_SIZE = 24
# records looked at together: the disk structures of a run this long make one block of samples,
# and a block holds about ROWS samples (devices x records) so its arrays stay about 20 MB
RUN = 4096
ROWS = 1 << 16
# sar -d / sadf -d columns the figures stand for (performance.columns names the era by them)
COLUMNS = ("tps", "rkB/s", "wkB/s", "dkB/s", "areq-sz", "aqu-sz", "await", "%util")


class SaFormatError(Exception):
    """The file is not a saDD this reader takes; the message is one line for the source's warnings."""


@dataclass
class SaFile:
    """What the header of a saDD says, and what reading its records found."""
    version: str = ""
    host: str | None = None
    kernel: str | None = None
    day: str | None = None
    interval: float | None = None
    restarts: int = 0
    records: int = 0
    truncated: bool = False
    warnings: list[str] = field(default_factory=list)


def _disk_dtype(types: tuple[int, int, int], size: int, order: str):
    """The structured dtype of one stats_disk item, from the file's own counts of unsigned long
    long, unsigned long and unsigned int fields (sysstat remaps structures by these counts)."""
    import numpy

    if types == (3, 3, 8) and size >= 80:      # sysstat 12.2.0 onwards: WWN, discards, partition
        names = ["nr_ios", "wwn0", "wwn1", "rd_sect", "wr_sect", "dc_sect", "rd_ticks", "wr_ticks", "tot_ticks",
                 "rq_ticks", "major", "minor", "dc_ticks", "part_nr"]
        formats = ["u8"] * 6 + ["u4"] * 8
        offsets = [0, 8, 16, 24, 32, 40, 48, 52, 56, 60, 64, 68, 72, 76]
    elif types == (1, 2, 6) and size >= 48:    # sysstat 11.7.x to 12.1.x: no discards
        names = ["nr_ios", "rd_sect", "wr_sect", "rd_ticks", "wr_ticks", "tot_ticks", "rq_ticks", "major", "minor"]
        formats = ["u8"] * 3 + ["u4"] * 6
        offsets = [0, 8, 16, 24, 28, 32, 36, 40, 44]
    else:
        return None
    return numpy.dtype({"names": names, "formats": [order + f for f in formats], "offsets": offsets,
                        "itemsize": size})


class _Reader:
    def __init__(self, data, name: str):
        self.data, self.name, self.info = data, name, SaFile()
        if len(data) < FILE_MAGIC_SIZE:
            raise SaFormatError(f"{name}: not a sysstat data file (too short for its header)")
        magic = struct.unpack_from("<H", data, 0)[0]
        if magic == SYSSTAT_MAGIC:
            self.order = "<"
        elif magic == ((SYSSTAT_MAGIC << 8) | (SYSSTAT_MAGIC >> 8)) & 0xFFFF:
            self.order = ">"
        else:
            raise SaFormatError(f"{name}: not a sysstat data file (magic {magic:#06x}, expected {SYSSTAT_MAGIC:#06x})")
        o = self.order
        fmt_magic, v1, v2, v3, v4, header_size = struct.unpack_from(o + "H4BI", data, 2)
        self.info.version = f"{v1}.{v2}.{v3}"
        if fmt_magic != FORMAT_MAGIC:
            era = OLD_FORMATS.get(fmt_magic, "an unknown sysstat")
            raise SaFormatError(f"{name}: sysstat data file of format {fmt_magic:#06x} ({era}, written by "
                                f"sysstat {self.info.version}); only format {FORMAT_MAGIC:#06x} (sysstat 11.7.1 "
                                f"and later) is read: convert it with `sadf -c` or keep its sar text")
        if not 336 <= header_size <= 8192 or FILE_MAGIC_SIZE + header_size > len(data):
            raise SaFormatError(f"{name}: sysstat data file with a damaged header (header size {header_size})")
        h = FILE_MAGIC_SIZE
        (_, _, _, act_nr, year, *_types) = struct.unpack_from(o + "QQIIi6I", data, h)
        act_size, rec_size, extra_next = struct.unpack_from(o + "III", data, h + 52)
        day, month, sizeof_long = struct.unpack_from(o + "BBb", data, h + 64)
        text = lambda at, n: data[h + at:h + at + n].split(b"\0")[0].decode("ascii", "replace")
        self.info.host, self.info.kernel = text(132, 65) or None, text(197, 65) or None
        if 0 <= month <= 11 and 1 <= day <= 31:      # struct tm: years since 1900, months from 0
            self.info.day = f"{year + 1900:04d}-{month + 1:02d}-{day:02d}"
        if sizeof_long != 8:
            raise SaFormatError(f"{name}: sysstat data file from a {8 * sizeof_long}-bit host; only 64-bit "
                                f"hosts' files are read: keep its sar text")
        if not 36 <= act_size <= 1024 or not 24 <= rec_size <= 512 or not 0 < act_nr <= 256:
            raise SaFormatError(f"{name}: sysstat data file with a damaged header (activities {act_nr}, "
                                f"sizes {act_size}/{rec_size})")
        self.rec_size = rec_size
        at = h + header_size
        self.activities = []     # (id, has_nr, nr, nr2, size)
        self.disk_index, self.disk_dtype = None, None
        for index in range(act_nr):
            if at + act_size > len(data):
                raise SaFormatError(f"{name}: sysstat data file cut short in its list of activities")
            ident, act_magic, nr, nr2, has_nr, size, *types = struct.unpack_from(o + "IIiiii3I", data, at)
            if nr2 < 1 or size < 0 or size > 1024 or nr < 0:
                raise SaFormatError(f"{name}: sysstat data file with a damaged activity list")
            self.activities.append((ident, has_nr, nr, nr2, size))
            if ident == A_DISK:
                if act_magic not in (A_DISK_MAGIC, A_DISK_MAGIC_11):
                    raise SaFormatError(f"{name}: disk activity of an unknown layout (magic {act_magic:#x}, "
                                        f"sysstat {self.info.version})")
                self.disk_dtype = _disk_dtype(tuple(types), size, o)
                if self.disk_dtype is None:
                    raise SaFormatError(f"{name}: disk activity of an unknown layout ({size} bytes, field counts "
                                        f"{tuple(types)}, sysstat {self.info.version})")
                self.disk_index = index
            at += act_size
        if extra_next:
            at = self._skip_extra(at)
        self.start = at

    def _skip_extra(self, at: int) -> int:
        while True:
            if at + EXTRA_DESC_SIZE > len(self.data):
                raise _Cut()
            extra_nr, extra_size, extra_next = struct.unpack_from(self.order + "III", self.data, at)
            if extra_nr > 8192 or extra_size > 1024:
                raise _Cut()
            at += EXTRA_DESC_SIZE + extra_nr * extra_size
            if not extra_next:
                return at

    def layout(self, at: int):
        """(record type, record length, item counts, offset of the disk items in the record) of
        the statistics record at `at`, walked field by field."""
        data, o = self.data, self.order
        length = self.rec_size
        counts = []
        disk_at = None
        for index, (_, has_nr, nr, nr2, size) in enumerate(self.activities):
            if has_nr:
                if at + length + 4 > len(data):
                    raise _Cut()
                nr = struct.unpack_from(o + "i", data, at + length)[0]
                if nr < 0 or nr > 1 << 20:
                    raise _Cut()
                counts.append((length, nr))
                length += 4
            if index == self.disk_index:
                disk_at = (length, nr)
            length += size * nr * nr2
        if at + length > len(self.data):
            raise _Cut()
        return length, counts, disk_at


class _Cut(Exception):
    """The records end mid-structure or hold values sysstat itself would refuse."""


def _names(majors, minors) -> list[str]:
    return [f"dev{major}-{minor}" for major, minor in zip(majors.tolist(), minors.tolist())]


def read_sa_binary(path: Path, name: str):
    """(SaFile, iterator of SampleBlocks) of a saDD. Raises SaFormatError on a file of another
    format; a file cut short or damaged mid-way yields the records before the damage and says so
    in SaFile.warnings (read once the iterator is spent)."""
    handle = open(path, "rb")
    try:
        data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except ValueError:      # an empty file cannot be mapped
        handle.close()
        raise SaFormatError(f"{name}: not a sysstat data file (empty)") from None
    try:
        reader = _Reader(data, name)
    except SaFormatError:
        data.close()
        handle.close()
        raise
    if reader.disk_index is None:
        data.close()
        handle.close()
        raise SaFormatError(f"{name}: sysstat data file without disk statistics (sadc was run without -S DISK)")
    return reader.info, _blocks(reader, data, handle)


def _blocks(reader: _Reader, data, handle):
    try:
        yield from _records(reader, data)
    except _Cut:
        reader.info.truncated = True
        reader.info.warnings.append(f"{reader.name}: cut short or damaged after {reader.info.records} records; "
                                    f"the records before it are read")
    finally:
        data.close()
        handle.close()


def _records(reader: _Reader, data):
    import numpy

    o, info = reader.order, reader.info
    header = numpy.dtype({"names": ["uptime", "time", "extra", "type"], "formats": [o + "u8", o + "u8", o + "u4", "u1"],
                          "offsets": [0, 8, 16, 20], "itemsize": 24})
    at, end = reader.start, len(data)
    last = None            # (uptime, disk items) of the previous statistics record
    released = 0
    segment = 0
    while at + reader.rec_size <= end:
        uptime, _, extra_next, rtype = struct.unpack_from(o + "QQIB", data, at)
        if rtype in (R_RESTART, R_COMMENT) or R_EXTRA_MIN <= rtype <= R_EXTRA_MAX:
            at += reader.rec_size + (4 if rtype == R_RESTART else MAX_COMMENT_LEN if rtype == R_COMMENT else 0)
            if extra_next or R_EXTRA_MIN <= rtype <= R_EXTRA_MAX:
                at = reader._skip_extra(at)
            if rtype == R_RESTART:
                last, segment = None, segment + 1
                info.restarts += 1
            info.records += 1
            continue
        if rtype not in (R_STATS, R_LAST_STATS):
            raise _Cut()
        if extra_next:
            # rare: walk this record alone, its extra structures sit between header and items
            body = reader._skip_extra(at + reader.rec_size) - reader.rec_size
            length, _, disk = reader.layout(body)
            items = _items(reader, data, body + disk[0], disk[1], 1, 0)
            stamp = struct.unpack_from(o + "Q", data, at + 8)[0]
            last, block = _emit(reader, numpy.array([uptime], dtype=numpy.uint64),
                                numpy.array([stamp], dtype=numpy.uint64), items, last, segment, info.records)
            if block is not None:
                yield block
            info.records += 1
            at = body + length
            continue
        length, counts, disk = reader.layout(at)
        # how many records from here have this record's layout: each one that does starts where
        # the previous one's length says, so the check holds record by record
        run = min(RUN, max(1, ROWS // max(1, disk[1])), (end - at) // length)
        heads = numpy.ndarray((run,), dtype=header, buffer=data, offset=at, strides=(length,))
        same = numpy.isin(heads["type"], (R_STATS, R_LAST_STATS)) & (heads["extra"] == 0)
        for offset, nr in counts:
            same &= numpy.ndarray((run,), dtype=o + "i4", buffer=data, offset=at + offset, strides=(length,)) == nr
        broken = numpy.flatnonzero(~same)
        run = int(broken[0]) if len(broken) else run
        run = max(run, 1)
        items = _items(reader, data, at + disk[0], disk[1], run, length)
        # the run holds records of one device order only, so rows difference against the row above
        if disk[1]:
            order = numpy.stack([items["major"], items["minor"]], axis=-1)
            changed = numpy.flatnonzero((order != order[0]).any(axis=(1, 2)))
            if len(changed):
                run = int(changed[0])
                items = items[:run]
        last, block = _emit(reader, heads["uptime"][:run].copy(), heads["time"][:run].copy(), items, last, segment,
                            info.records)
        if block is not None:
            yield block
        info.records += run
        at += run * length
        released = _release(data, released, at)
    if at < end:
        raise _Cut()


def _release(data, released: int, at: int) -> int:
    """Drops the pages of the file read so far from the mapping: they stay in the page cache, but
    no longer count in this process's memory, which then stays flat over a day of 1.5 GB."""
    upto = (at - (1 << 20)) // mmap.PAGESIZE * mmap.PAGESIZE     # keep the last MB: the current record
    if upto - released >= 16 << 20 and hasattr(data, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
        data.madvise(mmap.MADV_DONTNEED, released, upto - released)
        return upto
    return released


def _items(reader: _Reader, data, at: int, nr: int, run: int, stride: int):
    import numpy

    dtype = reader.disk_dtype
    return numpy.ndarray((run, nr), dtype=dtype, buffer=data, offset=at, strides=(stride or dtype.itemsize * nr,
                                                                                    dtype.itemsize))


def _emit(reader: _Reader, uptimes, times, items, last, segment: int, first_record: int):
    """Differences the run `items` (records x devices) against the record before each, as sar
    does: (the new `last`, a SampleBlock of the rows, or None when the run gives no rows)."""
    import numpy

    run, nr = items.shape
    fields = items.dtype.names
    current = {f: numpy.ascontiguousarray(items[f]) for f in fields}
    if run == 0:
        return last, None
    # the previous values of each row: the row above, and for the first row the previous record's
    # device of the same major and minor (zero when it had none)
    previous = {f: numpy.empty_like(current[f]) for f in fields}
    for f in fields:
        previous[f][1:] = current[f][:-1]
    uptime_before = numpy.empty(run, dtype=numpy.uint64)
    uptime_before[1:] = uptimes[:-1]
    if last is not None:
        last_uptime, last_items = last
        uptime_before[0] = last_uptime
        where = {(a, b): i for i, (a, b) in enumerate(zip(last_items["major"].tolist(), last_items["minor"].tolist()))}
        for j, key in enumerate(zip(current["major"][0].tolist(), current["minor"][0].tolist())):
            i = where.get(key)
            for f in fields:
                previous[f][0, j] = 0 if i is None else last_items[f][i]
    new_last = (int(uptimes[-1]), {f: current[f][-1].copy() for f in fields})
    emitted = slice(0 if last is not None else 1, run)
    if emitted.start >= run or nr == 0:
        return new_last, None
    c = {f: current[f][emitted] for f in fields}
    p = {f: previous[f][emitted] for f in fields}
    discards = "dc_sect" in c
    # all counters went down: the same major and minor is a new device, counted from zero
    reset = (c["nr_ios"] < p["nr_ios"]) & ((p["rd_sect"] == 0) | (c["rd_sect"] < p["rd_sect"])) \
        & ((p["wr_sect"] == 0) | (c["wr_sect"] < p["wr_sect"]))
    if discards:
        reset &= (p["dc_sect"] == 0) | (c["dc_sect"] < p["dc_sect"])
    if reset.any():
        for f in fields:
            p[f] = numpy.where(reset, 0, p[f]).astype(c[f].dtype)
    itv = (uptimes[emitted] - uptime_before[emitted]).astype(numpy.float64)
    itv[itv == 0] = 1.0
    itv = itv[:, None]
    delta = {f: (c[f] - p[f]) for f in ("nr_ios", "rd_sect", "wr_sect", "rd_ticks", "wr_ticks", "tot_ticks",
                                        "rq_ticks") + (("dc_sect", "dc_ticks") if discards else ())}
    ios = delta["nr_ios"].astype(numpy.float64)
    sectors = delta["rd_sect"] + delta["wr_sect"] + (delta["dc_sect"] if discards else 0)
    ticks = delta["rd_ticks"] + delta["wr_ticks"] + (delta["dc_ticks"] if discards else numpy.uint32(0))
    with numpy.errstate(divide="ignore", invalid="ignore"):
        values = {
            "tps": ios / itv * 100,
            "rkb_s": delta["rd_sect"].astype(numpy.float64) / itv * 100 / 2,
            "wkb_s": delta["wr_sect"].astype(numpy.float64) / itv * 100 / 2,
            "dkb_s": (delta["dc_sect"].astype(numpy.float64) / itv * 100 / 2) if discards else numpy.zeros_like(ios),
            "areq_kb": numpy.where(ios != 0, sectors.astype(numpy.float64) / ios, 0.0) / 2,
            "aqu": delta["rq_ticks"].astype(numpy.float64) / itv * 100 / 1000.0,
            "await": numpy.where(ios != 0, ticks.astype(numpy.float64) / ios, 0.0),
            "util": delta["tot_ticks"].astype(numpy.float64) / itv * 100 / 10.0,
        }
    rows = values["tps"].shape[0]
    if reader.info.interval is None:
        reader.info.interval = float(numpy.median(itv)) / 100
    devices = _names(c["major"][0], c["minor"][0])
    block = SampleBlock(devices=devices,
                        codes=numpy.tile(numpy.arange(nr, dtype=numpy.int64), rows),
                        t=numpy.repeat(times[emitted].astype(numpy.float64), nr),
                        interval=numpy.repeat(itv[:, 0] / 100, nr),
                        values={k: v.reshape(-1) for k, v in values.items()},
                        lines=numpy.repeat(numpy.arange(first_record + emitted.start, first_record + run,
                                                        dtype=numpy.int64), nr),
                        segment=segment)
    return new_last, block

