"""A fleet run: plan the inputs, have Dask workers analyse them (or this process, serially), write
each report as it arrives, the tables every N inputs and at the end, and the fleet page.

Resumable and idempotent: each analysed input leaves a state file under DIR/state/ named after its
content hash, holding its table rows and the diagdisk version that made them. An input whose hash
has a state file of this version is skipped (unless force), its rows taken from there; so a run
stopped halfway continues where it stopped, and a second run over the same inputs analyses nothing.
Failed inputs leave no state: the next run tries them again.

The cohorts across hosts (diagdisk.fleet.cohorts: cohorts.parquet, each row's fleet_pattern) are
computed at the end from every input's rows, whether analysed now or taken from its state.

One input never stops the run: its failure (bad input, a time or memory limit, a crash of its
analysis process, the death of its worker twice) is a row with a one-line reason.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from ..errors import DiagdiskError, InputError
from ..inputs.safeio import atomic_write, check_not_input, describe_os_error
from .cohorts import compute_cohorts
from .job import spec_of
from .plan import FleetInput, plan_fleet
from .tables import write_cohorts, write_tables

STATE_FOLDER = "state"
REPORTS_FOLDER = "reports"
# what a state file holds; a state of another format is analysed again (format 2: the holdings
# the cohorts are made of)
STATE_FORMAT = 2


@dataclass
class FleetOptions:
    html: bool = False
    since: str | None = None           # ISO date: inputs whose report date is earlier are left out
    force: bool = False
    limits: dict = field(default_factory=dict)   # diagdisk.inputs.limits.Limits fields
    timeout: float = 600.0             # seconds one input may take
    memory_bytes: int = 4 << 30        # address space of one input's analysis process (0: no cap)
    checkpoint_every: int = 100        # tables rewritten after this many inputs
    rules_dirs: list[str] = field(default_factory=list)
    inventory: str | None = None       # hosts.csv: a host column and one column per cohort kind


@dataclass
class FleetSummary:
    total: int = 0
    analysed: int = 0
    skipped: int = 0
    failed: int = 0
    excluded: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    flagged: list[str] = field(default_factory=list)    # flagged cohorts, one line each, most certain first
    patterns: list[str] = field(default_factory=list)   # patterns across hosts, one line each
    rising: list[str] = field(default_factory=list)     # cohorts whose weekly failures rise


class SerialExecutor:
    """This process analyses the inputs one after the other (through the same isolated analysis
    process a worker uses): the reference the Dask runs are compared with."""

    def run(self, tasks: list[tuple]) -> Iterator[tuple[int, dict]]:
        from .task import analyse_input
        for index, args in tasks:
            yield index, analyse_input(*args)

    def close(self) -> None:
        from .isolate import close_this_threads_analyser
        close_this_threads_analyser()


class DaskExecutor:
    """Inputs as tasks of a dask.distributed cluster: a LocalCluster of ``workers`` processes on
    loopback, or the cluster whose scheduler is at ``scheduler``."""

    def __init__(self, workers: int | None = None, scheduler: str | None = None, client=None):
        import logging

        import dask
        from distributed import Client, LocalCluster
        self._cluster = None
        if client is not None:
            self.client = client
        elif scheduler:
            try:
                self.client = Client(scheduler, timeout="20s")
            except OSError as exc:
                raise InputError(f"cannot reach the Dask scheduler: {exc}", scheduler) from None
        else:
            # a worker that dies is replaced and its input given to another once; a second death
            # fails the input (KilledWorker), never the run
            dask.config.set({"distributed.scheduler.allowed-failures": 1})
            self._cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                         processes=True, host="127.0.0.1", dashboard_address="127.0.0.1:0",
                                         silence_logs=logging.ERROR)
            self.client = Client(self._cluster)

    def run(self, tasks: list[tuple]) -> Iterator[tuple[int, dict]]:
        from distributed import as_completed

        from .task import analyse_input
        if not tasks:
            return
        # the done set travels once to each worker, not once per task
        done = tasks[0][1][2]
        [shared] = self.client.scatter([done], broadcast=True, hash=False)  # a list: scatter this one object
        futures = {}
        for index, (specs, request, _, force) in tasks:
            future = self.client.submit(analyse_input, specs, request, shared, force, pure=False,
                                        key=f"diagdisk-fleet-{index}-{os.getpid()}-{time.monotonic_ns()}")
            futures[future] = index
        try:
            for future in as_completed(futures):
                index = futures[future]
                try:
                    result = future.result()
                except Exception as exc:  # noqa: BLE001 - KilledWorker, a lost connection: this input's failure
                    result = {"status": "failed", "reason": _task_failure(exc), "hash": None}
                future.release()
                yield index, result
        finally:
            unfinished = [future for future in futures if not future.done()]
            if unfinished and self.client.status == "running":  # stopped early (Ctrl-C): drop the rest
                self.client.cancel(unfinished)

    def close(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def _task_failure(exc: BaseException) -> str:
    name = type(exc).__name__
    if name == "KilledWorker":
        return "its worker died twice while analysing it (see the worker logs)"
    if "Cancelled" in name:
        # nothing here cancels a running input: the scheduler forgot it because the workers
        # holding it and the scattered done set died
        return "its workers died while analysing it (see the worker logs)"
    return f"the task failed: {name}: {exc}"


class Progress:
    """Inputs done/total, failures, rate and ETA on one stderr line, redrawn; only on a terminal."""

    def __init__(self, total: int, stream=None, enabled: bool | None = None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total = total
        self.started = time.monotonic()
        self._last = 0.0

    def update(self, done: int, failed: int, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.5:
            return
        self._last = now
        elapsed = max(now - self.started, 1e-6)
        rate = done / elapsed * 60
        eta = (self.total - done) / (done / elapsed) if done else None
        eta_text = time.strftime("%H:%M:%S", time.gmtime(eta)) if eta is not None else "--:--:--"
        self.stream.write(f"\rfleet: {done}/{self.total} inputs, {failed} failed, {rate:.1f}/min, ETA {eta_text} ")
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def run_fleet(paths: list[str], out: str | Path, options: FleetOptions | None = None,
              executor_factory: Callable[[], object] | None = None, progress: Progress | None = None) -> FleetSummary:
    """Analyse every input under ``paths`` into ``out``; see the module docstring."""
    options = options or FleetOptions()
    started = time.monotonic()
    out = Path(out)
    absolute = [path if path == "-" else os.path.abspath(path) for path in paths]
    planned, notes = plan_fleet(absolute)
    from .cohorts import read_inventory
    inventory = read_inventory(options.inventory) if options.inventory else {}
    summary = FleetSummary(total=len(planned), notes=notes)
    check_not_input(out, [path for path in absolute if path != "-"])
    for folder in (out, out / STATE_FOLDER, out / REPORTS_FOLDER):
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot make the folder: {describe_os_error(exc)}", str(folder)) from None
    states = _load_states(out / STATE_FOLDER)
    done = frozenset(states)
    request = {"limits": options.limits, "since": options.since, "timeout": options.timeout,
               "memory_bytes": options.memory_bytes, "rules_dirs": list(options.rules_dirs)}
    tasks = [(index, ([spec_of(found) for found in item.inputs], request, done, options.force))
             for index, item in enumerate(planned)]
    rows: dict[int, dict] = {}
    suspects: dict[int, list[dict]] = {}
    holdings: dict[int, dict] = {}
    progress = progress or Progress(len(planned))
    executor = (executor_factory or SerialExecutor)()
    completed = 0
    try:
        for index, result in executor.run(tasks):
            item = planned[index]
            row, item_suspects, holds = _record(out, item, result, states, options, summary)
            rows[index], suspects[index], holdings[index] = row, item_suspects, holds
            completed += 1
            progress.update(completed, summary.failed)
            if completed % max(options.checkpoint_every, 1) == 0:
                write_tables(out, list(rows.values()), [s for group in suspects.values() for s in group])
    finally:
        executor.close()
        progress.update(completed, summary.failed, force=True)
        progress.finish()
        cohorts = None
        try:
            cohorts = compute_cohorts([(rows[i], suspects[i], holdings[i]) for i in rows], inventory)
        finally:
            patterns = cohorts.row_patterns if cohorts else {}
            for row in rows.values():
                row["fleet_pattern"] = patterns.get(row["input"])
            write_tables(out, list(rows.values()), [s for group in suspects.values() for s in group])
    write_cohorts(out, cohorts.cohorts)
    _summarise_cohorts(cohorts, summary)
    if options.html:
        _link_patterns_in_pages(out, list(rows.values()), cohorts)
    from .page import render_fleet_page
    atomic_write(out / "fleet.html", render_fleet_page(list(rows.values()), list(holdings.values()), summary,
                                                       cohorts, html_reports=options.html))
    summary.seconds = time.monotonic() - started
    return summary


def _link_patterns_in_pages(out: Path, rows: list[dict], cohorts) -> None:
    """Each affected host's page says what the fleet adds to its verdict and links the pattern in
    fleet.html (its JSON report stays what `analyze` gives)."""
    from ..report.html import render_html
    from .page import across_hosts_line
    for row in rows:
        if not row.get("fleet_pattern") or not row.get("report_file"):
            continue
        try:
            report = json.loads((out / row["report_file"]).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        anchor = cohorts.row_pattern_ids.get(row.get("input"), "patterns")
        atomic_write((out / row["report_file"]).with_suffix(".html"),
                     render_html(report, {"text": across_hosts_line(row), "link": f"../fleet.html#{anchor}"}))


def _summarise_cohorts(cohorts, summary: FleetSummary) -> None:
    from .cohorts import kind_label
    for cohort in cohorts.flagged():
        summary.flagged.append(
            f"{kind_label(cohort['kind'])} {cohort['value']}: {cohort['failing_hosts']} of {cohort['hosts']} hosts "
            f"failing ({cohort['rate']:.0%}, 95% {cohort['rate_low']:.0%}-{cohort['rate_high']:.0%}; fleet "
            f"{cohort['base_rate']:.1%}; q={cohort['q_value']:.2g})")
    summary.patterns = [pattern["text"] for pattern in cohorts.patterns]
    summary.rising = [f"{kind_label(c['kind'])} {c['value']}: weekly new failures rising (p={c['trend_p_value']:.2g})"
                      for c in cohorts.rising()]


def _load_states(folder: Path) -> dict[str, dict]:
    """State files of this diagdisk version and format, by content hash; others are analysed again."""
    states = {}
    for path in sorted(folder.glob("*.json")):
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a damaged state file: the input is analysed again
        if isinstance(state, dict) and state.get("diagdisk_version") == __version__ and state.get("content_hash") \
                and state.get("state_format") == STATE_FORMAT:
            states[state["content_hash"]] = state
    return states


def _record(out: Path, item: FleetInput, result: dict, states: dict, options: FleetOptions,
            summary: FleetSummary) -> tuple[dict, list[dict], dict]:
    """Write what one input's result gives (report files, state) and return its rows."""
    digest = result.get("hash")
    status = result.get("status")
    if status == "skipped" and digest in states:
        summary.skipped += 1
        state = states[digest]
        if options.html and state.get("report_file"):
            _ensure_html(out, state)
        return _rows_from_state(item, state)
    if status == "ok":
        summary.analysed += 1
        report = result["report"]
        stem = report_stem(result["host"], result["row"].get("report_date"), digest)
        report_file = f"{REPORTS_FOLDER}/{stem}.json"
        # inputs of one content share one report; it names the first of them, whatever order they end in
        writer = states.get(digest, {}).get("_written_for")
        if writer is None or item.key < writer:
            atomic_write(out / report_file, json.dumps(report, indent=2, default=str) + "\n")
            if options.html:
                from ..report.html import render_html
                atomic_write(out / REPORTS_FOLDER / f"{stem}.html", render_html(report))
            writer = item.key
        state = {"diagdisk_version": __version__, "state_format": STATE_FORMAT, "content_hash": digest,
                 "outcome": "analysed",
                 "report_file": report_file, "row": result["row"], "suspects": result["suspects"],
                 "holds": result.get("holds") or {}}
        atomic_write(out / STATE_FOLDER / f"{digest}.json", json.dumps(state, default=str) + "\n")
        states[digest] = dict(state, _written_for=writer)
        return _rows_from_state(item, state)
    if status == "excluded":
        summary.excluded += 1
        state = {"diagdisk_version": __version__, "state_format": STATE_FORMAT, "content_hash": digest,
                 "outcome": "excluded",
                 "report_file": None, "row": {"host": result.get("host"), "failure_reason": result.get("reason")},
                 "suspects": [], "holds": {}}
        if options.since is None:  # only a --since run excludes; nothing to remember otherwise
            return _rows_from_state(item, state)
        atomic_write(out / STATE_FOLDER / f"{digest}.json", json.dumps(state) + "\n")
        states[digest] = state
        return _rows_from_state(item, state)
    summary.failed += 1
    reason = result.get("reason") or "no result"
    row = {"host": _guess_host(item), "input": item.key, "content_hash": digest, "outcome": "failed",
           "failure_reason": " ".join(str(reason).split())[:500], "diagdisk_version": __version__}
    return row, [], {}


def _rows_from_state(item: FleetInput, state: dict) -> tuple[dict, list[dict], dict]:
    row = dict(state.get("row") or {})
    row.update(input=item.key, content_hash=state["content_hash"], outcome=state.get("outcome", "analysed"),
               report_file=state.get("report_file"), diagdisk_version=state["diagdisk_version"])
    if row["outcome"] == "excluded":
        row["failure_reason"] = row.get("failure_reason")
    suspects = [dict(s, input=item.key, content_hash=state["content_hash"], report_date=row.get("report_date"))
                for s in state.get("suspects") or []]
    return row, suspects, state.get("holds") or {}


def _ensure_html(out: Path, state: dict) -> None:
    html_path = out / Path(state["report_file"]).with_suffix(".html")
    if html_path.exists():
        return
    try:
        report = json.loads((out / state["report_file"]).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    from ..report.html import render_html
    atomic_write(html_path, render_html(report))


def _guess_host(item: FleetInput) -> str:
    found = item.inputs[0]
    if found.identity:
        return found.identity.name
    return Path(found.path).name


def report_stem(host: str | None, report_date: str | None, digest: str) -> str:
    """<host>_<YYYY-MM-DD>_<first 12 hex of the content hash>: two bundles of one host on one day
    stay apart, and the same input always gets the same name."""
    return f"{_safe(host or 'unknown')}_{(report_date or 'undated')[:10]}_{digest[:12]}"


def _safe(text: str) -> str:
    import re
    return (re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "host")[:100]


def check_fleet_extra(html: bool = False) -> None:
    """One line saying what to install when the fleet extra (or, for --html, the html one) is missing."""
    missing = []
    if html:
        try:
            __import__("matplotlib")
        except ImportError:
            raise DiagdiskError("--html needs matplotlib (the HTML reports' charts): "
                                "pip install 'diagdisk[fleet,html]'") from None
    for module in ("distributed", "pyarrow"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        raise DiagdiskError(f"the fleet needs {' and '.join(missing)}: pip install 'diagdisk[fleet]'")
