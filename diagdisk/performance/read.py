"""The entry point of the performance stage: the performance sources of an input, plus the device
table, become one PerformanceData (sources described, devices classified and grouped, one series
per device).

One day is often stored several times (sos keeps the host's sarDD, writes its own C-locale sarDD
and saDD.xml): each device's samples are taken from the best copy (structured before text, C
locale before the host's) and a source whose samples another copy already gave is marked a
duplicate rather than counted twice.
"""

from __future__ import annotations

import multiprocessing
import os
from array import array
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..decode import devnames
from ..errors import InputError, PartialRead
from ..inputs.chunks import iter_chunks
from ..inputs.limits import Limits
from ..inputs.safeio import decode_log_bytes, read_text_capped
from .devices import LITTLE_TOLERANCE, UTIL_POSSIBLE_MAX, PerfDevice, classify
from .kernel import (Names, QueueSettings, queue_file_of, queue_value, read_blockdev_report, read_dev_listing,
                     read_diskstats, read_dmsetup_info, read_dmsetup_table, read_lsblk_topology, read_lvs,
                     read_partitions, read_pressure)
from .blocks import SampleBlock
from .columns import era_of
from .sabinary import COLUMNS as SA_COLUMNS, SaFormatError, read_sa_binary
from .sadf import SadfError, iter_sadf_csv, read_sadf_json, read_sadf_xml
from .series import DEFAULT_CAP, INDEX, Series, add_blocks, normalise, normalise_block
from .sysstat import TextSource, iter_sysstat_text, plain_chunk

# source formats (diagdisk.inputs.sources) this stage reads; in the order copies of one day are preferred
SAMPLE_FORMATS = ("sadf_xml", "sadf_json", "sadf_csv", "sar_c", "sar", "iostat", "diskstats")
SETTING_FORMATS = ("queue_setting", "lsblk_topology", "blockdev_report")
NAME_FORMATS = ("partitions", "dmsetup_info", "dmsetup_table", "lvs", "by_id")
OTHER_FORMATS = ("pressure_io", "sa_binary")
PERF_FORMATS = SAMPLE_FORMATS + SETTING_FORMATS + NAME_FORMATS + OTHER_FORMATS
SADF_TIMEOUT = 60.0


@dataclass
class PerfSource:
    name: str
    kind: str
    status: str = "read"              # read | duplicate | present, not read
    era: list[str] = field(default_factory=list)
    locale: dict = field(default_factory=dict)
    interval: float | None = None
    truncated: bool = False
    restarts: int = 0
    since_boot_report_skipped_at: int | None = None
    samples: int = 0
    devices: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    duplicate_of: str | None = None
    day: str | None = None            # the date the text's banner names
    host: str | None = None

    def to_dict(self) -> dict:
        return {"path": self.name, "kind": self.kind, "status": self.status, "sysstat_era": self.era,
                "day": self.day, "host": self.host,
                "locale": self.locale, "interval": self.interval, "truncated": self.truncated,
                "restarts": self.restarts, "since_boot_report_skipped_at": self.since_boot_report_skipped_at,
                "samples": self.samples, "devices": self.devices, "duplicate_of": self.duplicate_of,
                "warnings": self.warnings}


@dataclass
class PerformanceData:
    sources: list[PerfSource] = field(default_factory=list)
    devices: dict[str, PerfDevice] = field(default_factory=dict)
    series: dict[str, Series] = field(default_factory=dict)
    groups: dict[str, dict] = field(default_factory=dict)
    pressure: dict = field(default_factory=dict)

    @property
    def has_data(self) -> bool:
        return bool(self.series) or any(s.kind == "saDD (binary)" for s in self.sources) or bool(self.pressure)


def read_performance(sources: list, topology, limits: Limits | None = None, cap: int = DEFAULT_CAP,
                     run_sadf: bool = True, jobs: int | None = None) -> PerformanceData | None:
    """PerformanceData of the sources (diagdisk.inputs.sources.Source) in PERF_FORMATS; None when
    the input holds none that give samples, settings or pressure. `jobs`: worker processes that
    read saDD days at once (default: one per CPU)."""
    limits = limits or Limits()
    mine = [s for s in sources if s.format in PERF_FORMATS and not getattr(s, "duplicate_of", None)]
    if not any(s.format in SAMPLE_FORMATS + ("pressure_io", "sa_binary") for s in mine):
        return None
    data = PerformanceData()
    names = Names()
    settings = QueueSettings()
    for source in sorted(mine, key=lambda s: s.name):
        try:
            _read_static(source, names, settings, data, limits)
        except InputError as exc:
            source.warnings.append(PartialRead(exc.one_line()))
    _names_from_topology(names, topology)
    raw: list[PerfSource] = []       # the sources whose samples were read, in the order added
    builder = _SeriesBuilder(data, cap)
    # a saDD read directly is the best copy of its day (exact counters, no text to parse): it is
    # read first, and the sar text and sadf -x of the same day are not read again
    binary_days: dict[str, str] = {}
    refused: dict[str, list[str]] = {}
    binaries = sorted((s for s in mine if s.format == "sa_binary"), key=lambda s: s.name)
    for source, (info, collected) in zip(binaries, _read_binaries(binaries, names, cap, jobs)):
        if info.status == "read":
            data.sources.append(info)
            raw.append(info)
            builder.add(info, collected)
            del collected
            day = _day_of(source.name)
            if day is not None:
                binary_days.setdefault(day, source.name)
        elif info.status == "read, no disk samples":
            data.sources.append(info)
        else:
            refused[source.name] = info.warnings
    by_format = {fmt: i for i, fmt in enumerate(SAMPLE_FORMATS)}
    ordered = sorted((s for s in mine if s.format in SAMPLE_FORMATS), key=lambda s: (by_format[s.format], s.name))
    for source in ordered:
        day = _day_of(source.name)
        twin = binary_days.get(day) if day is not None else None
        if twin is not None and source.format in ("sar", "sar_c", "sadf_xml"):
            data.sources.append(PerfSource(source.name, "sar text" if source.format != "sadf_xml" else "sadf -x",
                                           status="duplicate", duplicate_of=twin))
            continue
        info, collected = _read_samples(source, names, limits, cap)
        data.sources.append(info)
        raw.append(info)
        builder.add(info, collected)
        del collected
    for source in mine:
        if source.format == "sa_binary" and not any(info.name == source.name for info in data.sources):
            data.sources.append(_binary(source, names, limits, run_sadf, raw, builder, cap,
                                        refused.get(source.name, [])))
    builder.finish()
    _build_devices(data, names, settings, topology)
    _little_warnings(data)
    return data


def _little_warnings(data: PerformanceData) -> None:
    """Samples whose queue (aqu-sz) and IOPS x await disagree beyond what Little's law allows: one
    figure cannot be true (an accounting bug of the kernel or sysstat, a column read wrong), said in
    the warnings of the source that gave them."""
    import numpy

    by_name = {info.name: info for info in data.sources}
    for device, series in sorted(data.series.items()):
        matrix = series.matrix()
        if not len(matrix):
            continue
        queue, little = matrix[:, INDEX["aqu"]], matrix[:, INDEX["iops"]] * matrix[:, INDEX["await"]] / 1000
        with numpy.errstate(divide="ignore", invalid="ignore"):
            ratio = queue / little
            apart = ((ratio > LITTLE_TOLERANCE) | (ratio < 1 / LITTLE_TOLERANCE)) & (numpy.fmax(queue, little) >= 1)
        info = by_name.get(series.source.split(", ")[0])
        util = matrix[:, INDEX["util"]]
        impossible = util > UTIL_POSSIBLE_MAX
        if impossible.any() and info is not None:
            at = int(numpy.argmax(impossible))
            info.warnings.append(f"{device}: %util {util[at]:.2f} (line {series.lines[at]}), {int(impossible.sum())} of "
                                 f"{len(matrix)} samples past 100%: its busy-time accounting cannot be true; "
                                 f"its %util, svctm, await and queue are not judged there")
        count = int(apart.sum())
        if count and info is not None:
            at = int(numpy.argmax(apart))
            info.warnings.append(
                f"{device}: aqu-sz {queue[at]:.2f} against IOPS x await {little[at]:.2f} (line {series.lines[at]}), "
                f"{count} of {len(matrix)} samples more than {LITTLE_TOLERANCE:g} times apart (Little's law): one "
                f"of them cannot be true (an accounting bug or a misread column); the smaller is taken as the queue")


# ---------------------------------------------------------------- static files

def _read_static(source, names: Names, settings: QueueSettings, data: PerformanceData, limits: Limits) -> None:
    fmt = source.format
    if fmt in SAMPLE_FORMATS or fmt == "sa_binary":
        return
    text = read_text_capped(source.path, source.name, limits.max_table_bytes, source.warnings)
    if fmt == "queue_setting":
        found = queue_file_of(source.name)
        if found:
            settings.set(found[0], found[1], queue_value(found[1], text), f"{source.name}:1")
    elif fmt == "lsblk_topology":
        read_lsblk_topology(text, source.name, settings)
    elif fmt == "blockdev_report":
        read_blockdev_report(text, source.name, settings)
    elif fmt == "partitions":
        read_partitions(text, names)
    elif fmt == "dmsetup_info":
        read_dmsetup_info(text, names)
    elif fmt == "dmsetup_table":
        read_dmsetup_table(text, names)
    elif fmt == "lvs":
        read_lvs(text, names)
    elif fmt == "by_id":
        read_dev_listing(text, names)
    elif fmt == "pressure_io":
        data.pressure = read_pressure(text) or data.pressure
        data.sources.append(PerfSource(source.name, "pressure", samples=0))


def _names_from_topology(names: Names, topology) -> None:
    for device in getattr(topology, "devices", {}).values():
        if device.majmin and device.name:
            names.by_majmin.setdefault(device.majmin, device.name)
    for mp in getattr(topology, "multipath", []):
        if mp.dm:
            names.aliases.setdefault(mp.name, mp.dm)
            for path in mp.paths:
                if path.get("device"):
                    legs = names.legs.setdefault(mp.dm, [])
                    if path["device"] not in legs:
                        legs.append(path["device"])
            names.dm_targets.setdefault(mp.dm, "multipath")


# ---------------------------------------------------------------- samples

# Text is read in chunks of this size: large enough for long blocks of rows, small enough that the
# chunk, its text and its lines stay a small part of the stage's memory.
TEXT_CHUNK = 4 << 20


def _lines(source, limits: Limits):
    for batch in _line_batches(source, limits):
        yield from batch


def _line_batches(source, limits: Limits, raw: bool = False):
    """The lines of a text source, a chunk's worth at a time; `raw`: a chunk whose lines are its
    ASCII bytes split at line feeds comes as those bytes (see sysstat.plain_chunk)."""
    for chunk, _ in iter_chunks(source.path, chunk_size=TEXT_CHUNK, warnings=source.warnings, name=source.name,
                                max_bytes=limits.max_file_bytes):
        yield chunk if raw and plain_chunk(chunk) else decode_log_bytes(chunk).splitlines()


@dataclass
class _BinarySource:
    path: Path
    name: str
    warnings: list


@dataclass
class _Collected:
    """The series one source gives each device, and the time span they cover."""
    series: dict[str, Series] = field(default_factory=dict)
    spans: dict[str, tuple[float, float]] = field(default_factory=dict)
    count: int = 0


def _collect(samples, info: PerfSource, names: Names, cap: int, interval: float | None) -> _Collected:
    """Stream samples (RawSamples and SampleBlocks) into one bounded series per device (memory does
    not grow with the input)."""
    collected = _Collected()
    resolved: dict[str, str] = {}
    steps: list[float] = []
    last_t: dict[str, float] = {}
    for sample in samples:
        if isinstance(sample, SampleBlock):
            _collect_block(sample, collected, resolved, steps, last_t, names, info, cap, interval)
            continue
        device = resolved.get(sample.device)
        if device is None:
            device = resolved[sample.device] = names.resolve(sample.device)
        t = sample.t
        if t is None and "_report" in sample.values:
            t = sample.values["_report"] * (interval or 1.0)   # iostat without -t: report number x interval
        normal, apparent = normalise(sample.values, t, sample.interval or interval)
        series = collected.series.get(device)
        if series is None:
            series = collected.series[device] = Series(device, info.name, cap=cap)
        series.apparent_svctm |= apparent
        series.add(normal, sample.line, sample.segment)
        collected.count += 1
        if t is not None:
            low, high = collected.spans.get(device, (t, t))
            collected.spans[device] = (min(low, t), max(high, t))
            previous = last_t.get(device)
            if previous is not None and t > previous and len(steps) < STEPS_KEPT:
                steps.append(t - previous)
            last_t[device] = t
    info.interval = info.interval or (sorted(steps)[len(steps) // 2] if steps else None)
    for series in collected.series.values():
        series.close()
        if info.interval:
            series.fill_interval(info.interval)
    return collected


# steps between a device's samples kept to find the source's interval (their median)
STEPS_KEPT = 200


def _collect_block(block: SampleBlock, collected: _Collected, resolved: dict, steps: list, last_t: dict,
                   names: Names, info: PerfSource, cap: int, interval: float | None) -> None:
    """What _collect does for each row of a block, a device at a time: each device's rows keep
    their order, so its series, span, last time and the first steps come out the same."""
    import numpy

    # rows named differently may be one device (dev8-0 and sda): group by the resolved name,
    # in order of first appearance as rows one by one would create the series
    order: dict[str, int] = {}
    for raw in block.devices:
        device = resolved.get(raw)
        if device is None:
            device = resolved[raw] = names.resolve(raw)
        order.setdefault(device, len(order))
    devices = list(order)
    groups = numpy.array([order[resolved[raw]] for raw in block.devices], dtype=numpy.int64)[block.codes]
    t = block.t
    if block.interval is None:
        intervals = numpy.full(len(t), numpy.nan if interval is None else float(interval))
    else:   # `sample.interval or interval`
        intervals = numpy.where(block.interval != 0.0, block.interval, numpy.nan if interval is None else interval)
    normal, apparent = normalise_block(block.values, t, intervals)
    rows = numpy.argsort(groups, kind="stable")
    bounds = numpy.searchsorted(groups[rows], numpy.arange(len(devices) + 1))
    if len(steps) < STEPS_KEPT:
        # each row's previous time on its device, to take the first steps in row order
        previous = numpy.empty(len(t))
        sorted_t = t[rows]
        previous[1:] = sorted_t[:-1]
        previous[bounds[:-1]] = [last_t.get(device, numpy.nan) for device in devices]
        before = numpy.empty(len(t))
        before[rows] = previous
        with numpy.errstate(invalid="ignore"):
            stepped = numpy.flatnonzero(t > before)[:STEPS_KEPT - len(steps)]
        steps.extend((t[stepped] - before[stepped]).tolist())
    # devices whose series are in one state and have as many rows take them together (add_blocks)
    normal, lines, times = normal[rows], block.lines[rows], t[rows]
    sizes = numpy.diff(bounds).tolist()
    together: dict[tuple, list[int]] = {}
    for index, device in enumerate(devices):
        series = collected.series.get(device)
        if series is None:
            series = collected.series[device] = Series(device, info.name, cap=cap)
        series.apparent_svctm |= apparent
        together.setdefault((sizes[index], series.state()), []).append(index)
    for (size, _), members in together.items():
        if len(members) == len(devices):
            stacked, stacked_lines = normal.reshape(len(devices), size, -1), lines.reshape(len(devices), size)
        else:
            stacked = numpy.stack([normal[bounds[i]:bounds[i + 1]] for i in members])
            stacked_lines = numpy.stack([lines[bounds[i]:bounds[i + 1]] for i in members])
        add_blocks([collected.series[devices[i]] for i in members], stacked, stacked_lines, block.segment)
    lows = numpy.minimum.reduceat(times, bounds[:-1]).tolist()
    highs = numpy.maximum.reduceat(times, bounds[:-1]).tolist()
    lasts = times[bounds[1:] - 1].tolist()
    for index, device in enumerate(devices):
        low, high = lows[index], highs[index]
        if device in collected.spans:
            low, high = min(collected.spans[device][0], low), max(collected.spans[device][1], high)
        collected.spans[device] = (low, high)
        last_t[device] = lasts[index]
    collected.count += len(t)


def _read_samples(source, names: Names, limits: Limits, cap: int) -> tuple[PerfSource, _Collected]:
    fmt = source.format
    info = PerfSource(source.name, {"sar": "sar text", "sar_c": "sar text", "iostat": "iostat text",
                                    "sadf_xml": "sadf -x", "sadf_json": "sadf -j", "sadf_csv": "sadf -d",
                                    "diskstats": "/proc/diskstats"}[fmt])
    info.truncated = source.name.endswith(".tailed") or any(isinstance(w, PartialRead) for w in source.warnings)
    text_source: TextSource | None = None
    collected = _Collected()
    try:
        if fmt in ("sar", "sar_c", "iostat"):
            no_since_boot = True if re.search(r"(?:^|_)-y(?:_|$)", Path(source.name).name) else None
            text_source, samples = iter_sysstat_text(_line_batches(source, limits, raw=True), source.name,
                                                     c_locale=fmt == "sar_c", since_boot_skipped=no_since_boot,
                                                     batched=True)
            collected = _collect(samples, info, names, cap, None)
            if text_source.kind != "unknown":
                info.kind = f"{text_source.kind} text"
        elif fmt == "sadf_xml":
            with open(source.path, "rb") as handle:
                text_source, samples = read_sadf_xml(handle, source.name)
            collected = _collect(samples, info, names, cap, text_source.interval)
        elif fmt == "sadf_json":
            text_source, samples = read_sadf_json(read_text_capped(source.path, source.name,
                                                                   limits.max_table_bytes * 16, source.warnings),
                                                  source.name)
            collected = _collect(samples, info, names, cap, text_source.interval)
            if text_source.kind == "iostat -o JSON":
                info.kind = text_source.kind
        elif fmt == "sadf_csv":
            text_source, samples = iter_sadf_csv(_lines(source, limits), source.name)
            collected = _collect(samples, info, names, cap, None)
        elif fmt == "diskstats":
            text = read_text_capped(source.path, source.name, limits.max_table_bytes, source.warnings)
            samples, snapshots, warnings = read_diskstats(text, source.name, names)
            info.warnings += warnings
            info.kind = "/proc/diskstats (two snapshots)" if snapshots >= 2 else "/proc/diskstats (since boot)"
            collected = _collect(samples, info, names, cap, samples[0].interval if samples else None)
    except (SadfError, InputError) as exc:
        info.status = "present, not read"
        info.warnings.append(exc.one_line() if isinstance(exc, InputError) else str(exc))
        return info, _Collected()
    except OSError as exc:
        info.status = "present, not read"
        info.warnings.append(f"{source.name}: {exc.strerror or exc}")
        return info, _Collected()
    if text_source is not None:
        info.era = text_source.eras
        info.day, info.host = text_source.day, text_source.host
        info.locale = {k: v for k, v in (("date_order", text_source.date_order), ("clock", text_source.clock),
                                         ("decimal_comma", text_source.decimal_comma or None),
                                         ("average_label", text_source.average_label)) if v is not None}
        info.restarts = len(text_source.restarts)
        info.since_boot_report_skipped_at = text_source.skipped_since_boot
        info.warnings += text_source.warnings
        info.interval = text_source.interval or info.interval
        if text_source.headerless_rows:
            info.warnings.append(f"{source.name}: {text_source.headerless_rows} rows without a header of "
                                 f"their own were read with the disk header above them")
        if info.truncated and not collected.count:
            info.warnings.append(f"{source.name}: cut short (sos keeps the tail of large files) before any disk "
                                 f"header; its rows cannot be read by column name")
        elif fmt in ("sar", "sar_c", "iostat") and not collected.count:
            # sysstat's text that gave no disk sample is said to be so, never passed over in silence
            what = "sar" if text_source.kind == "unknown" and fmt != "iostat" else text_source.kind
            what = "iostat" if what == "unknown" else what
            if not text_source.eras:
                info.warnings.append(f"{source.name}: {what} output without a disk section (no DEV or Device "
                                     f"header with its columns): no disk samples in it")
            else:
                info.warnings.append(f"{source.name}: {what} output whose disk rows were not understood under "
                                     f"their header: no disk samples read")
    info.warnings = list(dict.fromkeys(list(source.warnings) + info.warnings))
    info.samples = collected.count
    info.devices = sorted(collected.series)
    if not collected.count and info.status == "read":
        info.status = "read, no disk samples"
    return info, collected


_DAY_OF_NAME = re.compile(r"(?:^|[._])sar?(\d{2}|\d{8})(?:\.xml)?(?:\.tailed)?$")


def _day_of(name: str) -> str | None:
    """The DD (or YYYYMMDD, sadc -D) of a sysstat daily file's name: sarDD, saDD.xml, a tailed
    sarDD; None for other names."""
    match = _DAY_OF_NAME.search(Path(name).name)
    return match.group(1) if match else None


# Days are read by worker processes from this many saDD files on: below it, starting the workers
# costs more than they save (a day of 10-minute data reads in tens of milliseconds).
PARALLEL_DAYS = 4


def _read_binaries(sources: list, names: Names, cap: int, jobs: int | None):
    """_read_binary of each saDD, days in parallel on forked workers: each day is a file of its
    own, and a worker gives back that day's bounded series (memory follows the devices and the
    days, not the samples a day holds)."""
    tasks = [(source.path, source.name, [str(w) for w in source.warnings]) for source in sources]
    jobs = min(jobs or os.cpu_count() or 1, len(tasks))
    if jobs <= 1 or len(tasks) < PARALLEL_DAYS or "fork" not in multiprocessing.get_all_start_methods():
        for task in tasks:
            yield _read_binary(*task, names, cap)
        return
    from concurrent.futures import ProcessPoolExecutor

    # in order, as each day is done: the caller folds a day into the series before the next
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        yield from pool.map(_read_binary, *zip(*tasks), [names] * len(tasks), [cap] * len(tasks))


def _read_binary(path, name: str, warnings: list[str], names: Names, cap: int) -> tuple[PerfSource, _Collected]:
    """A saDD read directly (performance.sabinary); a file of another sysstat format, or not a
    saDD at all, is left with a one-line warning for _binary to try through sadf."""
    source = _BinarySource(path, name, warnings)
    info = PerfSource(source.name, "saDD (binary)", status="present, not read")
    try:
        sa_file, blocks = read_sa_binary(source.path, source.name)
        collected = _collect(blocks, info, names, cap, None)
    except SaFormatError as exc:
        info.warnings.append(str(exc))
        return info, _Collected()
    except OSError as exc:
        info.warnings.append(f"{source.name}: {exc.strerror or exc}")
        return info, _Collected()
    info.status = "read"
    info.era = [era_of(list(SA_COLUMNS))]
    info.day, info.host = sa_file.day, sa_file.host
    info.interval = sa_file.interval or info.interval
    info.restarts, info.truncated = sa_file.restarts, sa_file.truncated
    info.warnings = list(dict.fromkeys([str(w) for w in source.warnings] + sa_file.warnings))
    info.samples, info.devices = collected.count, sorted(collected.series)
    if not collected.count:
        info.status = "read, no disk samples"
    return info, collected


def _binary(source, names: Names, limits: Limits, run_sadf: bool, raw: list, builder: _SeriesBuilder, cap: int,
            refused: list[str]) -> PerfSource:
    """A binary saDD this stage does not read itself: read through the host's sadf when one is
    installed and takes the file; otherwise listed as present but not read, with the reason."""
    info = PerfSource(source.name, "saDD (binary)", status="present, not read", warnings=list(refused))
    day = Path(source.name).name[2:]
    twins = [other.name for other in raw if Path(other.name).name in (f"sar{day}", f"sa{day}.xml")
             and other.status != "present, not read"]
    if twins:
        info.status, info.duplicate_of = "duplicate", twins[0]
        return info
    sadf = shutil.which("sadf") if run_sadf else None
    if sadf is None:
        info.warnings.append(f"{source.name}: binary sysstat data; no sadf here to read it (the sar text or "
                             f"sadf -x of the same day, when present, is read instead)")
        return info
    try:
        result = subprocess.run([sadf, "-j", "--", "-d", str(source.path)], capture_output=True, timeout=SADF_TIMEOUT,
                                env=dict(os.environ, LC_ALL="C"), check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        info.warnings.append(f"{source.name}: sadf failed: {exc}")
        return info
    if result.returncode != 0:
        reason = decode_log_bytes(result.stderr[:300]).strip().splitlines()[:1]
        info.warnings.append(f"{source.name}: sadf could not read it ({reason[0] if reason else 'exit ' + str(result.returncode)})")
        return info
    try:
        text_source, samples = read_sadf_json(decode_log_bytes(result.stdout), source.name)
    except SadfError as exc:
        info.warnings.append(str(exc))
        return info
    collected = _collect(samples, info, names, cap, text_source.interval)
    info.status, info.kind = "read", "saDD (binary, through sadf)"
    info.era, info.samples, info.devices = text_source.eras, collected.count, sorted(collected.series)
    raw.append(info)
    builder.add(info, collected)
    return info


class _SeriesBuilder:
    """Each device's samples from the best source that has them; later copies of the same times
    are duplicates. A source gives a device its samples when their time span is not already covered.
    Sources are added as they are read, best first, so only one source's samples wait at a time."""

    def __init__(self, data: PerformanceData, cap: int):
        self.data, self.cap = data, cap
        self.covered: dict[str, list[tuple[float, float, str]]] = {}
        self.halved: dict[str, int] = {}
        self.added = 0

    def add(self, info: PerfSource, collected: _Collected) -> None:
        _add_source(self.data, info, collected, self.added, self.covered, self.halved, self.cap)
        self.added += 1

    def finish(self) -> None:
        for series in self.data.series.values():
            series.sort_by_time()
            series.finish()


def _add_source(data: PerformanceData, info: PerfSource, collected: _Collected, index: int, covered: dict,
                halved: dict, cap: int) -> None:
    import numpy

    taken = False
    duplicates_of: set[str] = set()
    for device, series in collected.series.items():
        span = collected.spans.get(device)
        existing = data.series.get(device)
        if existing is not None and span is not None:
            overlap = [name for start, stop, name in covered.get(device, []) if start <= span[1] and span[0] <= stop]
            if overlap:
                duplicates_of.update(overlap)
                continue
        if existing is not None and span is None:
            continue   # since-boot figures add nothing to a device that has interval samples
        series.segments = array("q", (numpy.frombuffer(series.segments, dtype=numpy.int64) + index * 10_000).tobytes())
        # each source is a segment of its own and a halving merges neighbours within a segment
        # only: halving the series gathered so far as soon as it passes twice the cap, and each
        # later source as often before it joins, gives what halving all of them at the end
        # gives, in memory that follows the devices, not the days
        series.close()
        for _ in range(halved.get(device, 0)):
            series._halve("final")
        if existing is None:
            data.series[device] = existing = series
        else:
            existing.source = f"{existing.source}, {info.name}"
            existing.extend(series)
            existing.raw_count += series.raw_count
            existing.apparent_svctm |= series.apparent_svctm
            existing.merged = max(existing.merged, series.merged)
        while len(existing) > 2 * cap:
            before = len(existing)
            existing._halve("final")
            halved[device] = halved.get(device, 0) + 1
            if len(existing) == before:
                break
        if span is not None:
            covered.setdefault(device, []).append((span[0], span[1], info.name))
        taken = True
    if not taken and duplicates_of:
        info.status = "duplicate"
        info.duplicate_of = sorted(duplicates_of)[0]
    elif duplicates_of:
        info.warnings.append(f"{info.name}: some devices' samples are also in {', '.join(sorted(duplicates_of))}, "
                             f"read first; counted once")


# ---------------------------------------------------------------- devices

def _build_devices(data: PerformanceData, names: Names, settings: QueueSettings, topology) -> None:
    reverse_aliases: dict[str, list[str]] = {}
    for alias, kernel_name in names.aliases.items():
        reverse_aliases.setdefault(kernel_name, []).append(alias)
    for majmin, kernel_name in names.by_majmin.items():
        major, minor = majmin.split(":")
        reverse_aliases.setdefault(kernel_name, []).append(f"dev{major}-{minor}")
    multipath_paths = {p["device"] for mp in getattr(topology, "multipath", []) for p in mp.paths if p.get("device")}
    wanted = set(data.series) | {d for d in settings.values if d in data.series or not devnames.is_partition(d)}
    for name in sorted(wanted):
        device = PerfDevice(name=name, aliases=sorted(set(reverse_aliases.get(name, [])) - {name}))
        device.settings = dict(settings.values.get(name, {}))
        device.settings_origin = dict(settings.origin.get(name, {}))
        known = topology.find(name) if topology is not None else None
        if known is not None:
            device.model, device.vendor, device.hctl = known.model, known.vendor, known.hctl
        classify(device, multipath_paths)
        data.devices[name] = device
    _groups(data, names, topology)


def _member(name: str, data: PerformanceData) -> str:
    """The device whose samples stand for an md member or a leg: itself, else its whole disk."""
    if name in data.devices:
        return name
    return devnames.disk_of(name)


def _groups(data: PerformanceData, names: Names, topology) -> None:
    groups: dict[str, dict] = {}

    def add(group_id: str, kind: str, parent: str | None, members: list[str]) -> None:
        members = [m for m in dict.fromkeys(members) if m in data.devices]
        if len(members) < 2 and kind != "stack":
            return
        groups[group_id] = {"kind": kind, "parent": parent, "members": members}
        for member in members:
            data.devices[member].groups.append(group_id)
        if parent in data.devices:
            data.devices[parent].members = list(dict.fromkeys(data.devices[parent].members + members))

    for md_array in sorted(getattr(topology, "md_arrays", {}).values(), key=lambda a: a.name):
        members = [_member(m, data) for m in md_array.members if m not in md_array.failed_members]
        if md_array.name in data.devices:
            data.devices[md_array.name].md_level = md_array.level
        add(f"md:{md_array.name}", "md members", md_array.name, members)
    for dm, legs in sorted(names.legs.items()):
        members = [_member(names.resolve(leg), data) for leg in legs]
        kind = "multipath paths" if names.dm_targets.get(dm) == "multipath" else "dm legs"
        add(f"dm:{dm}", kind, dm, members)
        stripes = names.stripes.get(dm)
        if stripes and dm in data.devices:
            data.devices[dm].stripe_kb = stripes[1] * stripes[0]
    for mapper, pvs in sorted(names.lv_devices.items()):
        dm = names.aliases.get(mapper, mapper)
        if f"dm:{dm}" not in groups:
            add(f"lv:{mapper}", "LV legs", dm if dm in data.devices else None, [_member(p, data) for p in pvs])
    for members in _same_writes(data):
        add(f"writes:{'+'.join(members)}", "same writes", None, members)
    for members in _same_writes(data, reads=True):
        add(f"reads:{'+'.join(members)}", "same reads", None, members)
    by_model: dict[tuple, list[str]] = {}
    for device in data.devices.values():
        if device.model and device.cls in ("hdd", "ssd", "nvme", "unknown") and not device.groups:
            by_model.setdefault((device.vendor, device.model), []).append(device.name)
    for (vendor, model), members in sorted(by_model.items(), key=lambda kv: str(kv[0])):
        if len(members) >= 3:
            add(f"model:{' '.join(x for x in (vendor, model) if x)}", "same model", None, members)
    data.groups = groups


_W, _WKB = INDEX["w_s"], INDEX["wkb_s"]
_R, _RKB = INDEX["r_s"], INDEX["rkb_s"]
SAME_WRITES_TOLERANCE = 0.05
SAME_WRITES_MIN_WS = 5.0


def _writes_by_time(rows, count: int = _W, kb: int = _WKB):
    """(times, w/s, wkB/s) of the samples that write at least SAME_WRITES_MIN_WS requests a second,
    one per time (the last, as a dict by time keeps), sorted by time; None when there are none.
    Samples without a time are left out: they match no other device's. `count`, `kb`: the columns
    (r/s and rkB/s for reads)."""
    import numpy

    rows = rows[rows[:, count] >= SAME_WRITES_MIN_WS]   # NaN compares false: no writes figure
    rows = rows[~numpy.isnan(rows[:, 0])]
    if not len(rows):
        return None
    times, last = numpy.unique(rows[::-1, 0], return_index=True)
    rows = rows[::-1][last]
    return times, rows[:, count], rows[:, kb]


# cells of the (devices x times) grids _matching_writes fills at a time
_GRID_CELLS = 4_000_000


def _matching_writes(candidates: list) -> tuple:
    """For each pair of candidates (times, w/s, wkB/s), in two (n, n) arrays (upper triangle): the
    times both write at, and those where both figures are within SAME_WRITES_TOLERANCE of the
    larger. The times of all of them are laid out as columns, a slice at a time so memory stays
    bounded; each device is compared with all later ones at once, on its own times only."""
    import numpy

    count = len(candidates)
    common = numpy.zeros((count, count), dtype=numpy.int64)
    same = numpy.zeros((count, count), dtype=numpy.int64)
    if count < 2:
        return common, same
    times = numpy.unique(numpy.concatenate([c[0] for c in candidates]))
    step = max(1, _GRID_CELLS // count)
    for start in range(0, len(times), step):
        columns = times[start:start + step]
        writes = numpy.full((count, len(columns)), numpy.nan)
        kbs = numpy.full((count, len(columns)), numpy.nan)
        present = numpy.zeros((count, len(columns)), dtype=bool)
        for index, (t, w, kb) in enumerate(candidates):
            inside = (t >= columns[0]) & (t <= columns[-1])
            at = numpy.searchsorted(columns, t[inside])
            writes[index, at], kbs[index, at], present[index, at] = w[inside], kb[inside], True
        for index in range(count - 1):
            mine = numpy.flatnonzero(present[index])
            if not len(mine):
                continue
            both = present[index + 1:, mine]
            w, other_w = writes[index, mine], writes[index + 1:, mine]
            kb, other_kb = kbs[index, mine], kbs[index + 1:, mine]
            with numpy.errstate(invalid="ignore"):
                alike = (both & (numpy.abs(w - other_w) <= SAME_WRITES_TOLERANCE * numpy.maximum(w, other_w))
                         & (numpy.abs(kb - other_kb) <= SAME_WRITES_TOLERANCE * numpy.maximum(kb, other_kb)))
            common[index, index + 1:] += both.sum(axis=1)
            same[index, index + 1:] += alike.sum(axis=1)
    return common, same


def _same_writes(data: PerformanceData, reads: bool = False) -> list[list[str]]:
    """Whole disks outside any known group whose writes match within 5% (requests and kB) in at
    least 80% of the samples where they write: mirror members (md RAID 1, ZFS mirrors, a hardware
    mirror's halves) receive every write twice, so their write load is the same by construction.
    Stacked devices (md, dm) and partitions are left out: they repeat their members' writes.
    `reads`: the same over reads, which only a check or resync, or a striped array's spread,
    make alike (a mirror splits its reads): the peers of a RAID check that a table does not name."""
    import numpy

    candidates = {}
    for name, device in data.devices.items():
        series = data.series.get(name)
        if (series is None or device.groups or device.cls in ("md", "dm", "other") or devnames.is_partition(name)):
            continue
        writes = _writes_by_time(series.matrix(), *((_R, _RKB) if reads else (_W, _WKB)))
        if writes is not None:
            candidates[name] = writes
    names = sorted(candidates)
    common, same = _matching_writes([candidates[name] for name in names])
    linked: dict[str, set[str]] = {name: set() for name in names}
    for i, j in zip(*numpy.nonzero((common > 0) & (same >= 0.8 * common))):
        linked[names[i]].add(names[j])
        linked[names[j]].add(names[i])
    groups, seen = [], set()
    for name in names:
        if name in seen or not linked[name]:
            continue
        component, stack = [], [name]
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            component.append(current)
            stack.extend(linked[current] - seen)
        groups.append(sorted(component))
    return groups
