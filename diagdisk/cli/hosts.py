"""`analyze` and `events` over inputs of several hosts: one analysis, one verdict, one report per host.

The paths are searched and grouped by host first (diagdisk.inputs.discovery); each group is
analysed on its own, so no host's devices, events or report year leak into another's report.
Several hosts give several reports: text blocks one after the other, a JSON list, or with
`-o DIR/` one file per host (and an index page for HTML). A single report file cannot hold
several hosts: asking for one is refused in one line that names the hosts found (exit 2).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..safetext import escape_control
from ..errors import DiagdiskError, ExitCode
from ..inputs.limits import Limits

MAX_HOSTS_NAMED = 8


class SeveralHosts(DiagdiskError):
    """The inputs hold several hosts but one report (a file, or HTML on stdout) was asked for."""

    exit_code = ExitCode.BAD_INPUT


@dataclass
class HostAnalysis:
    label: str
    paths: list[str]
    analysis: object


def output_folder(output: str | None) -> Path | None:
    """The folder `-o` names: an existing folder, or a path written with a trailing slash."""
    if output in (None, "-"):
        return None
    if output.endswith(("/", os.sep)) or os.path.isdir(output):
        return Path(output)
    return None


def refuse_single_report(labels: list[str], why: str) -> SeveralHosts:
    named = ", ".join(labels[:MAX_HOSTS_NAMED]) + (f" and {len(labels) - MAX_HOSTS_NAMED} more"
                                                   if len(labels) > MAX_HOSTS_NAMED else "")
    return SeveralHosts(f"the inputs hold {len(labels)} hosts ({named}); {why} holds one host's report: "
                        f"name a folder (-o DIR/) for one report per host, or name one host's inputs")


@contextlib.contextmanager
def analyze_each_host(paths: list[str], limits: Limits, strict: bool, jobs: int | None, keep_each: bool = False,
                      single_report: str | None = None, progress=None) -> Iterator[Iterator[HostAnalysis]]:
    """Find and group the inputs, then yield an iterator of each host's analysis (made as it is
    asked for). ``single_report`` (what was asked, e.g. "the file report.html") refuses several hosts
    before any analysis. Notes about files not taken go to stderr."""
    import click

    from ..diagnosis.analysis import analyze_opened
    from ..inputs.discovery import discover_hosts
    groups, notes, stack = discover_hosts(paths, limits)
    with stack:
        for note in notes:
            click.echo(f"diagdisk: note: {note}", err=True)
        labels = unique_labels([group.label for group in groups])
        if len(groups) > 1 and single_report:
            raise refuse_single_report(labels, single_report)
        total_inputs = sum(len(group.opened) for group in groups)

        def each() -> Iterator[HostAnalysis]:
            for label, group in zip(labels, groups):
                analysis = analyze_opened(group.opened, limits=limits, strict=strict, jobs=jobs, keep_each=keep_each,
                                          single_input=total_inputs == 1, progress=progress, notes=group.notes)
                yield HostAnalysis(label=label, paths=group.paths, analysis=analysis)
        yield each()


def unique_labels(labels: list[str]) -> list[str]:
    """Host labels made unique (two unidentified sosreports may share a folder name)."""
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        unique.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return unique


_UNSAFE_IN_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def file_stem(label: str) -> str:
    """A host label as a file name: nothing that could leave the folder or hide."""
    stem = _UNSAFE_IN_NAME.sub("_", label).strip("._") or "host"
    return stem[:100]


def text_blocks(reports: list[dict], labels: list[str], *, brief: bool = False, color: bool = False,
                width: int | None = None) -> str:
    """One block per host, each opened by its host; the report itself starts with its verdict."""
    from ..report.text import render_text
    blocks = []
    for label, report in zip(labels, reports):
        # the host, then the report, whose first line is its verdict
        blocks.append(f"=== {escape_control(label)}: " + render_text(report, brief=brief, color=color, width=width))
    # --brief: one verdict line a host, as `grep` and `sort` want them; whole reports apart
    return "".join(blocks) if brief else "\n".join(blocks)


def write_per_host(folder: Path, reports: list[dict], labels: list[str], output_format: str, inputs: list[str]) -> list[Path]:
    """One report file per host under ``folder`` (made if missing), plus index.html for HTML."""
    import json

    from ..inputs.safeio import atomic_write, check_not_input
    check_not_input(folder, inputs)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        from ..inputs.safeio import describe_os_error
        raise DiagdiskError(f"cannot make the folder: {describe_os_error(exc)}", str(folder)) from None
    suffix = {"json": ".json", "html": ".html", "text": ".txt"}[output_format]
    stems = unique_labels([file_stem(label) for label in labels])
    written = []
    for stem, report in zip(stems, reports):
        stem = file_stem(stem)
        if output_format == "json":
            text = json.dumps(report, indent=2, default=str) + "\n"
        elif output_format == "html":
            from ..report.html import render_html
            text = render_html(report)
        else:
            from ..report.text import render_text
            text = render_text(report)
        path = folder / f"{stem}{suffix}"
        atomic_write(path, text, refuse=inputs)
        written.append(path)
    if output_format == "html":
        from ..report.hosts_index import render_index
        path = folder / "index.html"
        atomic_write(path, render_index(reports, labels, [p.name for p in written]), refuse=inputs)
        written.append(path)
    return written
