"""The analysis pipeline: input -> sources -> events -> topology -> rules -> report dict.

Each step is a module of its own; this one only wires them in the one direction data flows.
"""

from __future__ import annotations

import contextlib
import gc
import json
import multiprocessing
import os
import re
import signal
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..topology import tables as inventory
from ..inputs.chunks import DEFAULT_CHUNK_SIZE, detect_compression
from ..logs.dedup import deduplicate
from ..errors import InputError, Note, PartialRead, is_partial
from ..logs.events import NON_EVENT_KINDS
from ..logs.framing import MONTHS, frame_line
from ..inputs.opener import STDIN_NAME, OpenedInput, open_input
from ..inputs.limits import Limits
from ..logs.grammar import default_parser
from ..logs.reader import MAX_UNPARSED_SAMPLES, default_prefilter
from ..logs.reader import Segment
from ..logs.source import SEGMENT_MIN_BYTES, join_segments, plan_segments, read_log_segment, read_log_source
from ..topology.mdstate import apply_md_events
from ..inputs.safeio import read_text_capped
from ..inputs.sources import (EXPECTED_SOURCES, Source, classify_in_tree, is_kernel_ring_buffer, is_sosreport_root,
                      mark_duplicate_kernel_logs, sniff_format)
from ..topology.devices import Topology
from ..performance.read import PerformanceData, read_performance
from ..progress import Progress, poll_count, start_counting, stop_counting


@dataclass
class SourceReport:
    name: str
    format: str
    lines: int = 0
    events: int = 0
    unparsed_candidates: int = 0
    unparsed_samples: list = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    origin: str = ""        # the input it came from
    # the kernel log lines it holds and when the first and last were written (logs.coverage)
    kernel_lines: int = 0
    kernel_first: str | None = None
    kernel_last: str | None = None
    kernel_first_uptime: float | None = None
    kernel_last_uptime: float | None = None
    years_inferred: bool = False
    duplicate_of: str | None = None   # not read: another source holds the same lines


@dataclass
class Analysis:
    input: str
    hostname: str | None = None
    kernel: str | None = None
    report_date: datetime | None = None
    sources: list[SourceReport] = field(default_factory=list)
    missing_sources: list[str] = field(default_factory=list)
    # event records (diagdisk.records): one per distinct event of a source, `repeat` times over
    events: list[dict] = field(default_factory=list)
    topology: Topology = field(default_factory=Topology)
    sequences: list = field(default_factory=list)   # SequenceLinks of each log source
    printouts: list = field(default_factory=list)   # RAID conf printouts of the log sources
    smart: list = field(default_factory=list)
    performance: PerformanceData | None = None    # sar/iostat/diskstats series and queue settings, when any
    warnings: list[str] = field(default_factory=list)
    # what was read differently from how it was given, with nothing lost (an input's copy read once)
    notes: list[str] = field(default_factory=list)
    limits: Limits = field(default_factory=Limits)
    # An unexpected exception while reading one source becomes that source's warning, so one
    # odd file cannot stop the analysis; strict (--debug) lets it through to show the bug.
    strict: bool = False
    collection: dict | None = None      # the manifest of a `diagdisk collect` bundle
    window: object = None               # coverage.Window the events were cut to, if any
    coverage: object = None             # coverage.Coverage, once assessed
    progress: Progress = field(default_factory=Progress, repr=False)

    @property
    def complete(self) -> bool:
        """False when part of the input the analysis wanted was not read (see the warnings)."""
        return not any(is_partial(w) for w in self.warnings) and not any(
            is_partial(w) for source in self.sources for w in source.warnings)


def discover(root: Path, files: list[tuple[Path, str]], multiple: bool,
             file_warnings: dict[str, list[str]] | None = None) -> list[Source]:
    """The sources among ``files``; each carries the warnings found about it before reading."""
    sosreport = is_sosreport_root(root) and len(files) > 1
    sources = []
    for path, name in files:
        fmt = classify_in_tree(name)
        if fmt is None and (not sosreport or multiple):
            fmt = sniff_format(path)
        if fmt is None:
            continue
        sources.append(Source(path=path, name=name, format=fmt, warnings=list((file_warnings or {}).get(name, []))))
    sources.sort(key=lambda s: (s.format, s.rotation_key))
    mark_duplicate_kernel_logs(sources)
    return sources


def _check_found(opened: OpenedInput, found: list[Source], path: str, single_input: bool) -> None:
    """An input alone that yields nothing readable is bad input, not a healthy system."""
    path = STDIN_NAME if path == "-" else path
    if single_input and opened.kind == "file" and _is_empty(opened.files[0][0]):
        raise InputError("empty file; nothing to analyze", path)
    if found or not single_input:
        return
    if opened.nested_archives:
        raise InputError(f"holds no sosreport of its own, only the nested archive(s) "
                         f"{', '.join(opened.nested_archives[:3])}; extract one and analyze it", path)
    if opened.kind == "file":
        raise InputError("not a log, sosreport or command output diagdisk can read", path)
    if opened.warnings:
        raise InputError(f"holds nothing diagdisk can read; the first of {len(opened.warnings)} warnings: "
                         f"{opened.warnings[0]}", path)
    raise InputError("holds no log, sosreport or command output diagdisk can read", path)


def _is_empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except OSError:
        return False


def _input_warnings(opened: OpenedInput, found: list[Source]) -> list[str]:
    """The input's own warnings, plus those about single files that did not become sources."""
    names = {source.name for source in found}
    orphans = [w for name, warnings in opened.file_warnings.items() if name not in names for w in warnings]
    return opened.warnings + orphans


_DATE_RE = re.compile(r"(?:\w{3} )?(\w{3}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (?:\S+ )?(\d{4})")


def parse_report_date(text: str) -> datetime | None:
    """The date a `date` output names; None when it names none, or an impossible one."""
    text = text.strip()
    try:
        m = _DATE_RE.search(text)
        if m and m.group(1) in MONTHS:
            return datetime(int(m.group(6)), MONTHS[m.group(1)], int(m.group(2)),
                            int(m.group(3)), int(m.group(4)), int(m.group(5)))
        m = re.search(r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)", text)
        if m:
            return datetime(*map(int, m.groups()))
    except ValueError:  # 'Feb 31', year 0000, hour 99
        return None
    return None


def analyze(paths: list[str], limits: Limits | None = None, strict: bool = False, jobs: int | None = None,
            keep_each: bool = False, chunk_size: int = DEFAULT_CHUNK_SIZE, segment_bytes: int = SEGMENT_MIN_BYTES,
            progress: Progress | None = None) -> Analysis:
    """Read every input, fold events into records, and build the device topology.

    `jobs` workers read log sources, and segments of large plain files, at once (default: one per
    CPU; `segment_bytes` is the smallest segment); `keep_each` keeps every event as its own record
    (for `diagdisk events`). None of them changes the result. `progress` hears of each stage and
    of the bytes read.
    """
    limits = limits or Limits()
    progress = progress or Progress()
    progress.stage("opening inputs")
    with contextlib.ExitStack() as stack:
        opened = [(path, stack.enter_context(open_input(path, limits))) for path in paths]
        return analyze_opened(opened, limits=limits, strict=strict, jobs=jobs, keep_each=keep_each,
                              chunk_size=chunk_size, segment_bytes=segment_bytes, progress=progress)


def analyze_opened(inputs: list[tuple[str, OpenedInput]], limits: Limits | None = None, strict: bool = False,
                   jobs: int | None = None, keep_each: bool = False, chunk_size: int = DEFAULT_CHUNK_SIZE,
                   segment_bytes: int = SEGMENT_MIN_BYTES, single_input: bool | None = None,
                   progress: Progress | None = None, notes: list[str] | None = None) -> Analysis:
    """:func:`analyze` of inputs already opened, each as (path as named, OpenedInput): one host's
    (diagdisk.inputs.discovery groups them). ``single_input`` says whether this is all the user
    named (an input that yields nothing is then bad input); default: one input."""
    paths = [path for path, _ in inputs]
    single_input = len(inputs) == 1 if single_input is None else single_input
    analysis = Analysis(input=", ".join(paths), limits=limits or Limits(), strict=strict,
                        progress=progress or Progress(), notes=list(notes or []))
    all_sources: list[Source] = []
    for path, opened in inputs:
        found = discover(opened.root, opened.files, multiple=len(paths) > 1 or len(opened.files) == 1,
                         file_warnings=opened.file_warnings)
        _check_found(opened, found, path, single_input=single_input)
        analysis.warnings.extend(_input_warnings(opened, found))
        if not found:
            analysis.warnings.append(f"{path}: holds no log, sosreport or command output diagdisk can read")
        for source in found:
            source.origin = path
        all_sources.extend(found)
    # the same sources in the same order, whatever order the inputs were named in
    all_sources.sort(key=lambda s: (s.format, s.rotation_key, s.name, s.origin))
    _read_metadata(analysis, all_sources)
    _read_sources(analysis, all_sources, jobs, keep_each, chunk_size, segment_bytes)
    if not keep_each:
        _count_copies_once(analysis)
    formats = {s.format for s in all_sources}
    analysis.missing_sources = [desc for fmt, desc in EXPECTED_SOURCES.items() if fmt not in formats]
    analysis.progress.stage("building the device table")
    _build_topology(analysis)
    # read while an archive's files still exist: the stage classifies devices with the topology
    _read_performance(analysis, all_sources, jobs)
    return analysis


def _read_performance(analysis: Analysis, sources: list[Source], jobs: int | None = None) -> None:
    """The performance stage reads its sources once the device table exists (it classifies and
    groups devices with it); what it says about each source joins that source's entry."""
    try:
        analysis.performance = read_performance(sources, analysis.topology, analysis.limits, jobs=jobs)
    except (OSError, ValueError, KeyError, IndexError, ZeroDivisionError, OverflowError, TypeError) as exc:
        if analysis.strict:
            raise
        analysis.warnings.append(PartialRead(f"performance data: {exc}"))
        return
    if analysis.performance is None:
        return
    by_name = {report.name: report for report in analysis.sources}
    for info in analysis.performance.sources:
        report = by_name.get(info.name)
        if report is not None:
            report.warnings.extend(w for w in info.warnings if w not in report.warnings)


def _read_metadata(analysis: Analysis, sources: list[Source]) -> None:
    """Host name, kernel and report date: from the sosreport's `hostname`, `uname` and `date`; else
    the date from the end of the sos run (sos_reports/manifest.json), then the latest log's mtime;
    the host name from the syslog headers when they all name one host."""
    manifests = []
    for source in sources:
        if source.format == "sos_manifest":
            manifests.append(source)
        elif source.format == "bundle_manifest" and analysis.collection is None:
            analysis.collection = _bundle_manifest(source, analysis.limits)
        try:
            text = read_text_capped(source.path, source.name, 4096) if source.format in (
                "date", "hostname", "uname") else None
        except InputError:
            continue
        if source.format == "date" and text and analysis.report_date is None:
            analysis.report_date = parse_report_date(text)
        elif source.format == "hostname" and text and analysis.hostname is None:
            analysis.hostname = text.strip().splitlines()[0] if text.strip() else None
        elif source.format == "uname" and text and analysis.kernel is None:
            parts = text.split()
            analysis.kernel = parts[2] if len(parts) > 2 else None
            analysis.hostname = analysis.hostname or (parts[1] if len(parts) > 1 else None)
    for manifest in manifests:
        if analysis.report_date is None:
            analysis.report_date = _sos_manifest_date(manifest, analysis.limits)
    if analysis.report_date is None:
        analysis.report_date = _latest_log_mtime(sources)
    if analysis.hostname is None:
        analysis.hostname = _syslog_hostname(sources)
    if analysis.kernel is None:
        analysis.kernel = _booted_kernel(sources)


# The kernel's banner, the first line it prints at boot (init/version.c linux_banner):
# "Linux version 5.14.0-362.el9.x86_64 (mockbuild@...) (gcc ...) #1 SMP ..."
_LINUX_BANNER = re.compile(rb"Linux version (\S+) \(")


def _booted_kernel(sources: list[Source]) -> str | None:
    """The kernel release the newest boot in the logs printed in its banner (a dmesg starts with
    it), for an input without `uname`; None when no log holds one near its start."""
    logs = [s for s in sources if s.format == "log" and not s.duplicate_of]
    newest_first = sorted(logs, key=lambda s: s.rotation_key, reverse=True)
    for source in sorted(newest_first, key=lambda s: not is_kernel_ring_buffer(s.name)):
        try:
            with open(source.path, "rb") as handle:
                head = handle.read(_HOSTNAME_SAMPLE_BYTES)
        except OSError:
            continue
        if detect_compression(head[:6]):
            continue
        banners = _LINUX_BANNER.findall(head)
        if banners:
            return banners[-1].decode("utf-8", "replace")
    return None


def _sos_manifest_date(source: Source, limits: Limits) -> datetime | None:
    """When the sos run ended (or began): sos writes its manifest (sos/component.py SoSMetadata) with
    top-level "start_time" and "end_time", str() of naive local datetimes ("2024-03-20 10:06:44.902177")."""
    try:
        text = read_text_capped(source.path, source.name, limits.max_table_bytes)
        manifest = json.loads(text)
    except InputError:
        return None
    except (ValueError, RecursionError):
        source.warnings.append(f"{source.name}: not JSON; the report date is not taken from it")
        return None
    if not isinstance(manifest, dict):
        return None
    for key in ("end_time", "start_time"):
        value = manifest.get(key)
        when = parse_report_date(value) if isinstance(value, str) else None
        if when is not None:
            return when
    return None


def _bundle_manifest(source: Source, limits: Limits) -> dict | None:
    """A `diagdisk collect` manifest: what each collection step got, or why not (coverage)."""
    try:
        manifest = json.loads(read_text_capped(source.path, source.name, limits.max_table_bytes))
    except (InputError, ValueError, RecursionError):
        return None
    if not isinstance(manifest, dict) or not str(manifest.get("schema", "")).startswith("diagdisk.bundle/"):
        return None
    return manifest


# Syslog header host names that name no host: those of lines logged before the host name was set.
_PLACEHOLDER_HOSTS = frozenset({"localhost", "localhost.localdomain", "(none)"})
_HOSTNAME_SAMPLE_BYTES = 1 << 16
_HOSTNAME_SAMPLE_SOURCES = 3


def _syslog_hostname(sources: list[Source]) -> str | None:
    """The one host the syslog headers at the start of the newest plain system logs name (with at
    least one kernel line among them); None when they name several (a log server's files) or none."""
    logs = [s for s in sources if s.format == "log" and not s.duplicate_of and not is_kernel_ring_buffer(s.name)]
    hosts: set[str] = set()
    kernel_lines = 0
    sampled = 0
    for source in sorted(logs, key=lambda s: s.rotation_key, reverse=True):
        if sampled == _HOSTNAME_SAMPLE_SOURCES:
            break
        try:
            with open(source.path, "rb") as handle:
                head = handle.read(_HOSTNAME_SAMPLE_BYTES)
        except OSError:
            continue
        if detect_compression(head[:6]):
            continue
        sampled += 1
        lines = head.splitlines()
        for line in lines[:-1] if len(head) == _HOSTNAME_SAMPLE_BYTES else lines:
            framed = frame_line(line.decode("utf-8", "replace"))
            if framed.header in ("syslog", "rfc3339") and framed.host and framed.host not in _PLACEHOLDER_HOSTS:
                hosts.add(framed.host)
                kernel_lines += framed.tag == "kernel"
    return hosts.pop() if len(hosts) == 1 and kernel_lines else None


def _latest_log_mtime(sources: list[Source]) -> datetime | None:
    mtimes = []
    for source in sources:
        if source.format == "log":
            with contextlib.suppress(OSError):
                mtimes.append(source.path.stat().st_mtime)
    try:
        return datetime.fromtimestamp(max(mtimes), timezone.utc).replace(tzinfo=None) if mtimes else None
    except (OverflowError, OSError, ValueError):  # an archive member may carry any mtime at all
        return None


def _read_sources(analysis: Analysis, sources: list[Source], jobs: int | None, keep_each: bool,
                  chunk_size: int, segment_bytes: int) -> None:
    from ..topology.smart import parse_smartctl_json, parse_smartctl_text
    logs = [source for source in sources if source.format == "log" and not source.duplicate_of]
    log_results = iter(read_logs(logs, analysis, jobs, keep_each, chunk_size, segment_bytes))
    queue_files = [source for source in sources if source.format == "queue_setting"]
    if queue_files:
        analysis.sources.append(SourceReport(name=f"sys/block/*/queue/* ({len(queue_files)} files)",
                                             format="queue_setting", origin=queue_files[0].origin))
    for source in sources:
        if source.format == "queue_setting":
            continue
        report = SourceReport(name=source.name, format=source.format, warnings=list(source.warnings),
                              origin=source.origin)
        analysis.sources.append(report)
        if source.duplicate_of:
            report.duplicate_of = source.duplicate_of
            continue  # its warnings name the source read instead
        try:
            if source.format == "log":
                result = next(log_results)
                if isinstance(result, BaseException):
                    raise result
                read = result.read
                report.lines = read.lines
                report.events = result.events
                report.unparsed_candidates = read.unparsed_candidates
                report.unparsed_samples = read.unparsed_samples
                report.warnings.extend(read.warnings)
                _note_kernel_lines(report, read.kernel, analysis.report_date)
                if read.header_style:
                    report.format = read.header_style
                for record in result.records:
                    record["_input"] = source.origin  # logs of two inputs never hold copies of each other
                analysis.events.extend(result.records)
                analysis.sequences.append(result.sequence)
                analysis.printouts.extend(result.printouts)
            elif source.format in _TABLE_PARSERS:
                text = _read_table(source, analysis, report)
                report.lines = text.count("\n")
                unparsed = _TABLE_PARSERS[source.format](analysis, text, source.name)
                report.unparsed_candidates = len(unparsed)
                report.unparsed_samples = unparsed[:MAX_UNPARSED_SAMPLES]
            elif source.format == "smartctl_json":
                text = _read_table(source, analysis, report)
                if text.lstrip().startswith("smartctl "):
                    # a smartctl older than 7.0 asked for -j prints its banner and a usage error
                    report.format = "smartctl_text"
                    report.lines = text.count("\n")
                    analysis.smart.append(parse_smartctl_text(text, source.name))
                else:
                    analysis.smart.append(parse_smartctl_json(text, source.name))
            elif source.format == "smartctl_text":
                text = _read_table(source, analysis, report)
                report.lines = text.count("\n")
                analysis.smart.append(parse_smartctl_text(text, source.name))
        except InputError as exc:
            report.warnings.append(PartialRead(exc.one_line()))
        except (OSError, ValueError) as exc:
            if analysis.strict:
                raise
            report.warnings.append(PartialRead(f"{source.name}: {exc}"))


def _note_kernel_lines(report: SourceReport, kernel, report_date) -> None:
    from ..logs.coverage import kernel_span
    report.kernel_lines = kernel.count
    span = kernel_span(kernel, report_date)
    report.kernel_first, report.kernel_last = span.first, span.last
    report.kernel_first_uptime, report.kernel_last_uptime = span.first_uptime, span.last_uptime
    report.years_inferred = span.years_inferred


def read_logs(logs: list[Source], analysis: Analysis, jobs: int | None, keep_each: bool,
              chunk_size: int, segment_bytes: int = SEGMENT_MIN_BYTES) -> list:
    """The LogSourceResult of each log source, in order; a source that failed gives its exception.

    With several workers, sources are read by a pool of processes (forked after the grammars are
    built, so each starts ready), and a large plain file is cut into segments read at once
    (logsource.plan_segments); results are joined in the sources' order whatever order they finish in.
    """
    if not logs:
        return []
    # built once, before the collector is told to ignore them and before workers fork (they inherit
    # them); a small input loads only the grammars its lines need, which is most of its start-up
    total = sum(_size_of(source) for source in logs)
    parser, _ = default_parser(), default_prefilter()
    if total >= _EAGER_GRAMMARS_BYTES:
        parser.load_all()
    analysis.progress.stage("reading logs")
    analysis.progress.reading(total, len(logs))
    start_counting(analysis.progress)
    try:
        with _fewer_collections():
            return _read_logs(logs, analysis, jobs, keep_each, chunk_size, segment_bytes)
    finally:
        stop_counting()


# from this much log on, every grammar is built before reading: the workers share them
_EAGER_GRAMMARS_BYTES = 8 << 20


@contextlib.contextmanager
def _fewer_collections():
    """Reading a log allocates millions of short-lived dicts and tuples and makes almost no
    reference cycles: the cyclic collector's default pace costs it about a tenth of its time.
    What exists already (the grammars) is frozen out of its sight; workers inherit that."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(_GC_YOUNG_THRESHOLD, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


_GC_YOUNG_THRESHOLD = 50_000


def _read_logs(logs: list[Source], analysis: Analysis, jobs: int | None, keep_each: bool,
               chunk_size: int, segment_bytes: int) -> list:
    jobs = jobs or os.cpu_count() or 1
    options = dict(limits=analysis.limits, strict=analysis.strict, keep_each=keep_each, chunk_size=chunk_size)
    if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return _read_logs_here(logs, analysis, options)
    prefilter = default_prefilter()
    tasks: list[tuple[int, Source, Segment | None]] = []
    for index, source in enumerate(logs):
        segments = plan_segments(source.path, source.name, jobs, prefilter, analysis.limits, segment_bytes)
        tasks += [(index, source, segment) for segment in segments] if segments else [(index, source, None)]
    if len(tasks) <= 1:
        return _read_logs_here(logs, analysis, options)
    from concurrent.futures import ProcessPoolExecutor, wait
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=multiprocessing.get_context("fork"),
                               initializer=_ignore_interrupts)
    try:
        # the largest first, so one big file does not start last and keep the others waiting
        order = sorted(range(len(tasks)), key=lambda i: -_task_size(tasks[i]))
        futures = {i: pool.submit(_read_one_log, tasks[i][1], analysis.report_date, segment=tasks[i][2], **options)
                   for i in order}
        waiting = set(futures.values())
        while waiting:
            _, waiting = wait(waiting, timeout=_PROGRESS_POLL_SECONDS)
            poll_count()
            analysis.progress.sources_done(len(tasks) - len(waiting), len(tasks))
        done = [futures[i].result() for i in range(len(tasks))]
    except BaseException:
        for process in list((pool._processes or {}).values()):
            process.terminate()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    results = []
    for index, source in enumerate(logs):
        parts = [result for (task_index, _, _), result in zip(tasks, done) if task_index == index]
        if len(parts) == 1:
            results.append(parts[0])
        elif any(isinstance(part, BaseException) for part in parts) or any(part.capped for part in parts):
            # a damaged file or one that hits the events cap: read whole, as one reader would
            results.append(_read_one_log(source, analysis.report_date, **options))
        else:
            results.append(join_segments(source.name, parts, analysis.report_date, keep_each))
    return results


# How often the parent looks at what its workers read, for the progress display.
_PROGRESS_POLL_SECONDS = 0.2


def _read_logs_here(logs: list[Source], analysis: Analysis, options: dict) -> list:
    """Read the log sources one after the other in this process."""
    results = []
    for index, source in enumerate(logs):
        analysis.progress.source(source.name)
        results.append(_read_one_log(source, analysis.report_date, **options))
        analysis.progress.sources_done(index + 1, len(logs))
    return results


def _read_one_log(source: Source, report_date, limits: Limits, strict: bool, keep_each: bool, chunk_size: int,
                  segment: Segment | None = None):
    try:
        if segment is not None:
            return read_log_segment(source.path, source.name, segment, limits, keep_each=keep_each,
                                    chunk_size=chunk_size)
        return read_log_source(source.path, source.name, report_date, limits, keep_each=keep_each,
                               chunk_size=chunk_size)
    except InputError as exc:
        return exc
    except (OSError, ValueError) as exc:
        if strict:
            raise
        return exc


def _task_size(task: tuple) -> int:
    segment = task[2]
    return segment.stop - segment.start if segment is not None else _size_of(task[1])


def _ignore_interrupts() -> None:
    # Ctrl-C reaches the whole process group: the parent stops the workers and reports it once
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _size_of(source: Source) -> int:
    try:
        return source.path.stat().st_size
    except OSError:
        return 0


def _count_copies_once(analysis: Analysis) -> None:
    """The same kernel message in messages, the journal and dmesg is one event (diagdisk.logs.dedup)."""
    analysis.events, copies = deduplicate(analysis.events)
    for report in analysis.sources:
        found = copies.get((report.origin, report.name))
        if found:
            report.events -= found
            report.warnings.append(Note(f"{report.name}: {found} events are also in a log read before it "
                                        f"(same message, same time); they are counted once"))


def _read_table(source: Source, analysis: Analysis, report: SourceReport) -> str:
    return read_text_capped(source.path, source.name, analysis.limits.max_table_bytes, report.warnings)


# Each table parser adds what it read to the analysis and returns the lines its grammar did not
# accept, (line number, line), for the source's unparsed count.
def _parse_scsi_table(reader):
    def apply(analysis: Analysis, text: str, name: str) -> list:
        result = reader(text)
        analysis.topology.add_scsi_devices(result.records, name)
        return result.unparsed
    return apply


def _parse_md(analysis: Analysis, text: str, name: str) -> list:
    result = inventory.read_mdstat(text)
    for array in result.records:
        analysis.topology.add_md(array)
    return result.unparsed


def _parse_mdadm(analysis: Analysis, text: str, name: str) -> list:
    result = inventory.read_mdadm_detail(text)
    for array in result.records:
        analysis.topology.add_md(array)
    return result.unparsed


def _parse_sys_block(analysis: Analysis, text: str, name: str) -> list:
    """Each block device's sysfs link shows its whole path, and ties its H:C:T:L to its name."""
    from ..topology.paths import parse_sysfs_path
    result = inventory.read_sysfs_links(text)
    for device, target in result.records.items():
        chain = parse_sysfs_path(target)
        if chain is None:
            continue
        analysis.topology.paths.learn_chain(device, chain, f"{name}: {device}")
        if chain.hctl:
            analysis.topology.link(chain.hctl, device, name)
            analysis.topology.device(chain.hctl, device).sources.add(name)
    return result.unparsed


def _parse_by_id(analysis: Analysis, text: str, name: str) -> list:
    from ..topology.paths import parse_by_path
    single_by_path = "by-path" in name
    result = inventory.read_by_id(text, "by-path" if single_by_path else "by-id")
    if not single_by_path:
        analysis.topology.by_id.update(result.records)
        by_path = inventory.read_by_id(text, "by-path").records if "ls_-lanR" in name else {}
    else:
        by_path = result.records
    for device, names in by_path.items():
        for path_name in names:
            chain = parse_by_path(path_name)
            if chain is not None:
                analysis.topology.paths.learn_chain(device, chain, f"{name}: {path_name}")
    return result.unparsed


def _parse_multipath(analysis: Analysis, text: str, name: str) -> list:
    result = inventory.read_multipath(text)
    # sosreport stores both `multipath -l` and `multipath -v4 -ll`: keep one copy of each map
    known = {mp.name for mp in analysis.topology.multipath}
    analysis.topology.multipath.extend(mp for mp in result.records if mp.name not in known)
    for mp in result.records:
        for path in mp.paths:
            analysis.topology.link(path["hctl"], path["device"], name)
    return result.unparsed


_TABLE_PARSERS = {
    "proc_scsi": _parse_scsi_table(inventory.read_proc_scsi),
    "lsscsi": _parse_scsi_table(inventory.read_lsscsi),
    "lsblk": _parse_scsi_table(inventory.read_lsblk),
    "mdstat": _parse_md,
    "mdadm_detail": _parse_mdadm,
    "by_id": _parse_by_id,
    "sys_block": _parse_sys_block,
    "multipath": _parse_multipath,
}


def _build_topology(analysis: Analysis) -> None:
    topology = analysis.topology
    topology.learn_from_events(analysis.events, analysis.sequences)
    for event in analysis.events:
        topology.resolve(event)
    # a merged report ties its H:C:T:L to the disk its major:minor names: learn those links too
    topology.learn_from_events(analysis.events, analysis.sequences)
    for event in analysis.events:
        topology.resolve(event)
    for event in analysis.events:
        if event["kind"] in NON_EVENT_KINDS:
            continue
        name = event.get("device") or ""
        if event.get("hctl") or name.startswith(("sd", "hd", "vd")):
            # an NVMe namespace is listed under its controller below, not as a SCSI name
            device = topology.device(event.get("hctl"), None if name.startswith("nvme") else name or None)
            if event.get("majmin") and not event.get("partition") and device.majmin is None:
                device.majmin = event["majmin"]  # a message that named the whole disk by number
        elif event.get("nvme_ctrl"):
            device = topology.device(name=event["nvme_ctrl"])
            device.type = device.type or "nvme"
        elif event.get("ata_port"):
            topology.device(name=event["ata_port"])
    for event in analysis.events:
        topology.paths.learn_event(event)
    apply_md_events(analysis.events, topology, analysis.printouts)
    _attach_smart(analysis)
    for name, ids in topology.by_id.items():
        device = topology.find(name)
        if device is None:
            continue
        for ident in ids:
            if ident.startswith("wwn-") and not device.wwn:
                device.wwn = ident.removeprefix("wwn-")
            m = re.match(r"(?:ata|scsi-[0-9S]*|usb|nvme)-(.+)", ident)
            if m and not device.serial and not ident.startswith(("scsi-3", "nvme-eui")):
                device.serial = m.group(1).rsplit("_", 1)[-1]
    topology.attach_md_members()


def _attach_smart(analysis: Analysis) -> None:
    """Each device's SMART state comes from its best report (smart.best_report): sos stores several
    smartctl runs of one disk (-a text, -a JSON), and one that knows less never hides one that
    knows more; identity fields missing from it are taken from the others."""
    from ..topology.smart import best_report
    topology = analysis.topology
    per_device: dict[int, tuple] = {}
    for smart in analysis.smart:
        if smart.device:
            device = topology.device(name=smart.device)
            per_device.setdefault(id(device), (device, []))[1].append(smart)
    for device, reports in per_device.values():
        best = best_report(reports)
        device.smart = best.to_dict()
        for smart in [best, *(report for report in reports if report is not best)]:
            device.serial = device.serial or smart.serial
            device.wwn = device.wwn or smart.wwn
            device.model = device.model or smart.model
            device.revision = device.revision or smart.firmware
        if device.type is None:
            protocols = [report.protocol for report in [best, *reports] if report.protocol]
            device.type = "nvme" if protocols[:1] == ["nvme"] else "disk"
