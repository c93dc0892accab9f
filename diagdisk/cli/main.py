"""Command line: `diagdisk analyze`, `events`, `decode`, `rules`, `collect`.

Heavy modules (the grammars, the rule engine, jinja2, matplotlib, pandas, tqdm) are imported
inside the commands that use them, so `diagdisk --help` and `decode` start fast. stdout carries
only the report; messages go to stderr, one line each, escaped (safetext). Exit codes: ExitCode.
"""

from __future__ import annotations

import os
import sys

import click

from .. import __version__
from ..errors import DiagdiskError, ExitCode
from ..safetext import escape_control

SEVERITIES = ("info", "low", "medium", "high", "critical")
# Verdict statuses that --fail-on takes as "not healthy" when no finding reaches its threshold.
NOT_HEALTHY_WITHOUT_FINDINGS = {"inconclusive": ExitCode.INCONCLUSIVE}

EXIT_CODES_HELP = """\b
Exit codes:
  0    analyzed; with --fail-on, nothing at or above it and a verdict
  1    --fail-on: a finding at or above that severity
  2    bad input or usage (one line on stderr says what)
  3    analyzed, but part of the input could not be read (the report says which)
  4    --fail-on: no finding at or above it, but the verdict is inconclusive
       (no kernel log line was read, or none in the --since/--until window)
  70   internal error (a bug: rerun with --debug and report it)
  130  interrupted"""


def echo_error(message: str) -> None:
    """One line on stderr, with whatever came from the input escaped."""
    click.echo(escape_control(message), err=True)


def _set_debug(ctx, param, value):
    if value:
        root = ctx.find_root()
        root.obj = root.obj or {}
        root.obj["debug"] = True
    return value


def debug_option(func):
    """--debug, accepted after a subcommand too (`diagdisk analyze X --debug`)."""
    return click.option("--debug", is_flag=True, expose_value=False, is_eager=True, callback=_set_debug,
                        help="Show Python tracebacks for unexpected errors.")(func)


class LazyGroup(click.Group):
    """Subcommands that live in other modules, imported only when used."""

    lazy = {
        "decode": ("diagdisk.cli.decode", "decode"),
        "collect": ("diagdisk.cli.collect", "collect"),
        "fleet": ("diagdisk.cli.fleet", "fleet"),
        "rules": ("diagdisk.cli.rules", "rules"),
    }

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx, name):
        if name in self.lazy:
            import importlib
            module, attr = self.lazy[name]
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)

    def invoke(self, ctx):
        # Ctrl-C outside a guarded command (while a subcommand is imported, say) still exits 130
        # with one line, not click's "Aborted!" and exit 1; an unexpected error in any command is
        # one line and exit 70, its traceback only with --debug.
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            echo_error("diagdisk: interrupted")
            ctx.exit(int(ExitCode.INTERRUPTED))
        except BrokenPipeError:
            _stdout_gone()  # `diagdisk rules list | head`: the reader has what it wanted
            ctx.exit(int(ExitCode.OK))
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort, SystemExit):
            raise
        except DiagdiskError as exc:
            echo_error(f"diagdisk: error: {exc.one_line()}")
            ctx.exit(int(exc.exit_code))
        except Exception as exc:
            if _debug(ctx):
                raise
            echo_error(f"diagdisk: internal error: {type(exc).__name__}: {exc} (rerun with --debug)")
            ctx.exit(int(ExitCode.INTERNAL))


def _print_version(ctx, _param, value):
    if not value or ctx.resilient_parsing:
        return
    from ..logs.prefilter import engine_description
    click.echo(f"diagdisk, version {__version__}")
    try:
        click.echo(f"prefilter engine: {engine_description()}")
    except DiagdiskError as exc:
        click.echo(f"diagdisk: {exc}", err=True)
        ctx.exit(int(ExitCode.BAD_INPUT))
    ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="""\b
Examples:
  diagdisk analyze sosreport-db1-2024.tar.xz      verdict first, then the evidence
  diagdisk analyze /var/log/messages* --format json
  diagdisk analyze sosreport/ --format html -o incident.html
  diagdisk analyze sosreport/ --since "Mar 2 18:00" --until "Mar 2 19:00"
  diagdisk events sosreport/ --format csv          every event, with file:line
  diagdisk decode sense 70 00 03 00 00 00 00 0a 00 00 00 00 11 00
  sudo diagdisk collect --analyze                  live host -> bundle -> report

""" + EXIT_CODES_HELP)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and the prefilter engine that runs (hyperscan or python), then exit.")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for unexpected errors (also after a command).")
@click.pass_context
def main(ctx, debug):
    """Find the disk, cable, controller or path to replace, with evidence.

    Reads sosreports (folders or .tar.xz/.gz/.bz2), diagdisk collect bundles, /var/log/messages
    and its rotations, dmesg, journal text, /proc/scsi/scsi, mdstat, lsscsi, lsblk and smartctl
    output. `diagdisk COMMAND --help` shows each command's options and examples.
    """
    ctx.obj = ctx.obj or {}
    ctx.obj["debug"] = ctx.obj.get("debug") or debug


def _output_options(func):
    func = click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
                        help="Write the report to FILE (atomically) instead of stdout.")(func)
    return func


def _report_output_option(func):
    return click.option("-o", "--output", type=click.Path(), default=None,
                        help="Write the report to FILE (atomically) instead of stdout; to a folder (DIR/ or an "
                             "existing one): one report per host, named after it.")(func)


class _Size(click.ParamType):
    name = "SIZE"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        from ..inputs.limits import parse_size
        try:
            return parse_size(value)
        except DiagdiskError as exc:
            self.fail(str(exc), param, ctx)


class _Time(click.ParamType):
    """A --since/--until value, written as the logs write times (diagnosis.window)."""

    name = "TIME"

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value
        from ..diagnosis.window import WindowError, parse_time_spec
        try:
            return parse_time_spec(value)
        except WindowError as exc:
            self.fail(str(exc), param, ctx)


def _limit_options(func):
    """Caps on what is read from untrusted input; a cap that cuts something leaves a warning."""
    func = click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
                        help="Worker processes reading logs (default: one per CPU); a large log is "
                             "read in segments at once. Never changes the result.")(func)
    func = click.option("--max-events", type=click.IntRange(min=1), default=5_000_000, show_default=True,
                        help="Most distinct events held for one log (each with its count); reading it "
                             "stops there.")(func)
    func = click.option("--max-total-size", type=_Size(), default="8G", show_default=True,
                        help="Most bytes extracted from one archive or read from stdin.")(func)
    func = click.option("--max-file-size", type=_Size(), default="4G", show_default=True,
                        help="Most bytes read from one file (an archive member, a decompressed log).")(func)
    return func


def _window_options(func):
    func = click.option("--until", type=_Time(), default=None,
                        help="Leave out events after TIME (all of the day, minute or second it names).")(func)
    func = click.option("--since", type=_Time(), default=None,
                        help="Leave out events before TIME: 2024-03-02, '2024-03-02 18:07', "
                             "'Mar 2 18:07:17', 'Sat Mar 2 18:07:17 2024', @EPOCH, or a span before the "
                             "report date: 30d, 12h, 90m.")(func)
    return func


def _quiet_option(func):
    return click.option("--quiet", "-q", is_flag=True,
                        help="No progress display and no notes on stderr (errors and warnings still).")(func)


def _limits(max_file_size: int, max_total_size: int, max_events: int):
    from ..inputs.limits import Limits
    return Limits(max_file_bytes=max_file_size, max_total_bytes=max_total_size, max_events=max_events)


@main.command(epilog="""\b
Examples:
  diagdisk analyze sosreport-db1-2024.tar.xz
  diagdisk analyze sosreport-db1-2024.tar.xz --brief          the verdict line only
  diagdisk analyze /var/log/messages* --format json -o report.json
  diagdisk analyze sosreport/ --format html -o incident.html
  diagdisk analyze sosreport/ --since "Mar 2 18:00" --until "Mar 2 19:00"
  dmesg | diagdisk analyze -
  diagdisk analyze sosreport/ --fail-on high && echo "nothing to replace"

""" + EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "output_format", type=click.Choice(["text", "json", "html"]), default="text",
              show_default=True, help="Report format.")
@click.option("--brief", is_flag=True, help="Print only the verdict line (text format).")
@click.option("--color", "color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colour the verdict and severities: auto on a terminal unless NO_COLOR is set.")
@click.option("--fail-on", type=click.Choice(SEVERITIES), default=None,
              help="Exit 1 when a finding at or above this severity exists, 4 when the verdict is "
                   "inconclusive.")
@click.option("--rules", "rules_dirs", multiple=True, type=click.Path(file_okay=False, exists=True),
              help="Add the rules in this folder to the built-in ones (repeatable).")
@_window_options
@_report_output_option
@_limit_options
@_quiet_option
@debug_option
@click.pass_context
def analyze(ctx, paths, output_format, brief, color, fail_on, rules_dirs, since, until, output, max_file_size,
            max_total_size, max_events, jobs, quiet):
    """Analyze a sosreport, a bundle, log files or a folder of logs (`-` reads stdin).

    The text report starts with the verdict: FAILURE, DEGRADED, SUSPECT, UNEXPLAINED (errors no
    rule explains), INCONCLUSIVE (too little evidence for any verdict: no kernel log line was read)
    or HEALTHY, the part to replace and why; then what was read (coverage), the findings with their
    evidence lines, devices, events. Inputs are grouped by host first (hostname, uname, manifest,
    archive name, syslog headers): several hosts give one report each (text blocks, the JSON
    object's `reports` list, or one file per host with -o DIR/, plus index.html for HTML); one
    report file (-o FILE, HTML on stdout) for several hosts is refused with exit 2, naming the
    hosts found.
    """
    if brief and output_format != "text":
        raise click.UsageError("--brief prints the verdict line of the text report; leave out --format")

    def run():
        from .hosts import output_folder, text_blocks, write_per_host
        from .progress import make_progress
        folder = output_folder(output)
        _check_output(str(folder) if folder is not None else output, paths)
        single = (f"the file {output}" if output not in (None, "-") and folder is None
                  else "an HTML page on stdout" if output_format == "html" and folder is None else None)
        progress = make_progress(quiet)
        try:
            labels, reports, findings, complete = _host_reports(
                ctx, paths, rules_dirs, since, until, progress, _limits(max_file_size, max_total_size, max_events),
                jobs, single)
            progress.stage("writing the report")
            use_color = _use_color(color, output)
            text = None
            if folder is not None:
                written = write_per_host(folder, reports, labels, output_format, list(paths))
            elif output_format == "json":
                text = _reports_json(reports)
            elif len(reports) == 1:
                text = _render(reports[0], output_format, brief=brief, color=use_color)
            else:
                text = text_blocks(reports, labels, brief=brief, color=use_color, width=_terminal_width())
        finally:
            progress.close()
        if text is not None:
            _write(text, output, paths, quiet)
        elif not quiet:
            for path in written:
                echo_error(f"diagdisk: wrote {path}")
        if not complete:
            echo_error("diagdisk: warning: part of the input could not be read; the report's warnings say which")
        if fail_on:
            threshold = SEVERITIES.index(fail_on)
            if any(SEVERITIES.index(f["severity"]) >= threshold for f in findings):
                return ExitCode.FINDINGS
            for report in reports:
                status = report["verdict"]["status"]
                if status in NOT_HEALTHY_WITHOUT_FINDINGS:
                    return NOT_HEALTHY_WITHOUT_FINDINGS[status]
        return ExitCode.OK if complete else ExitCode.PARTIAL
    ctx.exit(_guarded(ctx, run))


def _host_reports(ctx, paths, rules_dirs, since, until, progress, limits, jobs, single_report):
    """Each host's report: its inputs read, cut to the window, its rules and performance rules run."""
    from .hosts import analyze_each_host
    from ..diagnosis.engine import evaluate_rules, load_rules
    from ..report.build import build_report
    rules = load_rules(extra_dirs=list(rules_dirs))
    labels, reports, findings, complete = [], [], [], True
    with analyze_each_host(list(paths), limits, _debug(ctx), jobs, single_report=single_report,
                           progress=progress) as hosts:
        for host in hosts:
            analysis = host.analysis
            if since or until:
                from ..diagnosis.window import cut_to_window, resolve_window
                cut_to_window(analysis, resolve_window(since, until, analysis.report_date))
            progress.stage("running the rules")
            host_findings, verdict = evaluate_rules(rules, analysis)
            performance, report_findings = [], host_findings
            if analysis.performance is not None:  # the performance rules need pandas: imported only then
                from ..diagnosis.coverage import assess_coverage
                from ..diagnosis.perf import evaluate_performance_rules
                from ..diagnosis.perfverdict import performance_finding_entries, weigh_performance
                performance = evaluate_performance_rules(rules, analysis.performance, host_findings,
                                                         analysis.topology)
                # the verdict is final once the performance findings are weighed with it
                verdict = weigh_performance(verdict, performance, analysis.performance, assess_coverage(analysis))
                report_findings = host_findings + performance_finding_entries(performance)
            labels.append(host.label)
            reports.append(build_report(analysis, report_findings, verdict, performance))
            findings += host_findings + performance
            complete = complete and analysis.complete
    return labels, reports, findings, complete


@main.command(epilog="""\b
Examples:
  diagdisk events sosreport/                         JSON Lines, one event a line
  diagdisk events /var/log/messages --format csv -o events.csv
  diagdisk events sosreport/ --since 2024-03-02 --until 2024-03-03

\b
Exit codes:
  0    listed
  2    bad input or usage
  3    listed, but part of the input could not be read (warnings on stderr)
  70   internal error
  130  interrupted""")
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "output_format", type=click.Choice(["csv", "jsonl"]), default="jsonl", show_default=True,
              help="jsonl: JSON Lines, one event an object (jq, pandas.read_json(lines=True)); csv: one event a "
                   "row, with a header, control characters escaped.")
@_window_options
@_output_options
@_limit_options
@_quiet_option
@debug_option
@click.pass_context
def events(ctx, paths, output_format, since, until, output, max_file_size, max_total_size, max_events, jobs, quiet):
    """Every event with its source file, line, time, identity and decoded fields.

    Each event is written as soon as it is read, and none is kept: memory stays flat however long
    the log, and a reader that stops (`| head`) ends the run. Logs are read one after the other.
    """
    def run():
        _check_output(output, paths)
        from .progress import make_progress
        # events written to the terminal are the progress: a progress line would break into them
        progress = make_progress(quiet or (output in (None, "-") and _stdout_is_terminal()))
        warnings: list[str] = []
        try:
            if output in (None, "-"):
                complete = _list_events(paths, output_format, since, until, sys.stdout, progress, warnings,
                                        _limits(max_file_size, max_total_size, max_events), _debug(ctx))
            else:
                from ..inputs.safeio import atomic_writer
                with atomic_writer(output, refuse=[p for p in paths if p != "-"]) as handle:
                    complete = _list_events(paths, output_format, since, until, handle, progress, warnings,
                                            _limits(max_file_size, max_total_size, max_events), _debug(ctx))
        except BrokenPipeError:
            progress.close()
            _stdout_gone()   # `| head`: the reader has what it wanted; reading stops here
            return ExitCode.OK
        finally:
            progress.close()
        if output not in (None, "-") and not quiet:
            echo_error(f"diagdisk: wrote {output}")
        _echo_warnings(warnings)
        return ExitCode.OK if complete else ExitCode.PARTIAL
    ctx.exit(_guarded(ctx, run))


def _list_events(paths, output_format, since, until, stream, progress, warnings, limits, strict) -> bool:
    """Write every event of every host to `stream` as it is read; whether all input was read."""
    import click

    from ..diagnosis.eventstream import COLUMNS, prepare_listing, stream_host
    from ..inputs.discovery import discover_hosts
    from ..progress import start_counting, stop_counting
    from .hosts import unique_labels
    groups, notes, stack = discover_hosts(list(paths), limits)
    complete = True
    with stack:
        for note in notes:
            click.echo(f"diagdisk: note: {note}", err=True)
        labels = unique_labels([group.label for group in groups])
        several = len(groups) > 1
        columns = COLUMNS + (("host",) if several else ())
        write = _event_writer(output_format, columns, stream)
        total_inputs = sum(len(group.opened) for group in groups)
        for label, group in zip(labels, groups):
            analysis, logs = prepare_listing(group.opened, limits, strict, total_inputs == 1, progress, group.notes)
            window = (None, None)
            if since or until:
                from ..diagnosis.window import resolve_window
                bounds = resolve_window(since, until, analysis.report_date)
                window = (bounds.since.timestamp() if bounds.since else None,
                          bounds.until.timestamp() if bounds.until else None)
            progress.stage("reading logs")
            progress.reading(sum(_file_size(source.path) for source in logs), len(logs))
            start_counting(progress)
            try:
                stream_host(analysis, logs, (lambda row, label=label: write({**row, "host": label}))
                            if several else write, window)
            finally:
                stop_counting()
            warnings += analysis.warnings + [w for source in analysis.sources for w in source.warnings]
            complete = complete and analysis.complete
    return complete


def _stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _file_size(path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _event_writer(output_format: str, columns: tuple, stream):
    """A function writing one event row to `stream` at once: a JSON object a line (the fields the
    event has, the leading ones always), or a CSV row under a header of every column. Text from the
    input is escaped in CSV (read in terminals); JSON escapes control characters itself."""
    import json

    from ..diagnosis.eventstream import LEAD_COLUMNS
    if output_format == "csv":
        import csv
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(columns)

        def write_csv(row: dict) -> None:
            writer.writerow(["" if (value := row.get(name)) is None
                             else escape_control(value) if isinstance(value, str) else value for name in columns])
            stream.flush()
        return write_csv

    def write_json(row: dict) -> None:
        shown = {name: row.get(name) for name in columns if name in LEAD_COLUMNS or row.get(name) is not None}
        stream.write(json.dumps(shown, separators=(",", ":"), default=str) + "\n")
        stream.flush()
    return write_json


REPORTS_SCHEMA = "diagdisk.reports/1"


def _reports_json(reports: list[dict]) -> str:
    """`--format json`: one shape however many hosts the input holds, an object whose `reports`
    lists one report a host (docs/report.md)."""
    import json
    return json.dumps({"schema": REPORTS_SCHEMA, "reports": reports}, indent=2, default=str) + "\n"


def _render(report: dict, output_format: str, *, brief: bool = False, color: bool = False) -> str:
    if output_format == "json":
        import json
        return json.dumps(report, indent=2, default=str) + "\n"
    if output_format == "html":
        from ..report.html import render_html
        return render_html(report)
    from ..report.text import render_text
    return render_text(report, color=color, brief=brief, width=_terminal_width())


def _use_color(choice: str, output: str | None) -> bool:
    """--color always/never as said; auto: on a terminal, unless NO_COLOR is set (no-color.org)
    or the terminal is dumb."""
    if choice != "auto":
        return choice == "always"
    if output not in (None, "-") or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _terminal_width() -> int | None:
    try:
        if sys.stdout.isatty():
            import shutil
            return min(shutil.get_terminal_size().columns, 120)
    except (AttributeError, ValueError, OSError):
        pass
    return None


MAX_WARNINGS_ON_STDERR = 20


def _echo_warnings(warnings: list[str]) -> None:
    """An event listing has no report to carry the warnings: they go to stderr."""
    for warning in warnings[:MAX_WARNINGS_ON_STDERR]:
        echo_error(f"diagdisk: warning: {warning}")
    if len(warnings) > MAX_WARNINGS_ON_STDERR:
        echo_error(f"diagdisk: warning: ... and {len(warnings) - MAX_WARNINGS_ON_STDERR} more")


def _check_output(output: str | None, inputs) -> None:
    """Refuse a destination that is an input before spending time on the analysis."""
    if output not in (None, "-"):
        from ..inputs.safeio import check_not_input
        check_not_input(output, [p for p in inputs if p != "-"])


def _write(text: str, output: str | None, inputs, quiet: bool = False) -> None:
    if output in (None, "-"):
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            _stdout_gone()  # `| head`: the reader stopped; the exit code still tells the outcome
        return
    from ..inputs.safeio import atomic_write
    atomic_write(output, text, refuse=[p for p in inputs if p != "-"])
    if not quiet:
        echo_error(f"diagdisk: wrote {output}")


def _stdout_gone() -> None:
    """stdout's reader went away: send what is left to /dev/null, so that Python's flush at exit
    raises nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):
        pass


def _debug(ctx) -> bool:
    root = ctx.find_root()
    return bool(root.obj and root.obj.get("debug"))


def _guarded(ctx, run) -> int:
    try:
        return int(run())
    except DiagdiskError as exc:
        echo_error(f"diagdisk: error: {exc.one_line()}")
        return int(exc.exit_code)
    except KeyboardInterrupt:
        echo_error("diagdisk: interrupted")
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # an unexpected failure: one line, traceback only with --debug
        if _debug(ctx):
            raise
        echo_error(f"diagdisk: internal error: {type(exc).__name__}: {exc} (rerun with --debug)")
        return int(ExitCode.INTERNAL)


if __name__ == "__main__":
    main()
