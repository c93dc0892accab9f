"""Command line: `diagdisk analyze`, `events`, `decode`, `rules`, `collect`.

Heavy modules (pandas, lark, the grammars) are imported inside commands so `diagdisk --help`
stays fast. stdout carries only the report; messages go to stderr. Exit codes: see ExitCode.
"""

from __future__ import annotations

import sys

import click

from .. import __version__
from ..errors import DiagdiskError, ExitCode

SEVERITIES = ("info", "low", "medium", "high", "critical")


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
        # with one line, not click's "Aborted!" and exit 1.
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("diagdisk: interrupted", err=True)
            ctx.exit(int(ExitCode.INTERRUPTED))


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="diagdisk")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for unexpected errors.")
@click.pass_context
def main(ctx, debug):
    """Find the disk, cable, controller or path to replace, with evidence.

    Reads sosreports (folders or .tar.xz/.gz/.bz2), /var/log/messages and its rotations, dmesg,
    journal text, /proc/scsi/scsi, mdstat, lsscsi, lsblk and smartctl output.
    """
    ctx.obj = {"debug": debug}


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


def _limits(max_file_size: int, max_total_size: int, max_events: int):
    from ..inputs.limits import Limits
    return Limits(max_file_bytes=max_file_size, max_total_bytes=max_total_size, max_events=max_events)


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "output_format", type=click.Choice(["text", "json", "html"]), default="text",
              show_default=True, help="Report format.")
@click.option("--fail-on", type=click.Choice(SEVERITIES), default=None,
              help="Exit 1 when a finding at or above this severity exists.")
@click.option("--rules", "rules_dirs", multiple=True, type=click.Path(file_okay=False, exists=True),
              help="Add the rules in this folder to the built-in ones (repeatable).")
@_report_output_option
@_limit_options
@click.pass_context
def analyze(ctx, paths, output_format, fail_on, rules_dirs, output, max_file_size, max_total_size, max_events, jobs):
    """Analyze a sosreport, a bundle, log files or a folder of logs (`-` reads stdin).

    Inputs are grouped by host first (hostname, uname, manifest, archive name, syslog headers):
    several hosts give one report each (text blocks, a JSON list, or one file per host with
    -o DIR/, plus index.html for HTML). One report file (-o FILE, HTML on stdout) for several
    hosts is refused with exit 2, naming the hosts found.
    """
    def run():
        from .hosts import analyze_each_host, output_folder, text_blocks, write_per_host
        folder = output_folder(output)
        _check_output(str(folder) if folder is not None else output, paths)
        from ..report.build import build_report
        from ..diagnosis.engine import evaluate_rules, load_rules
        rules = load_rules(extra_dirs=list(rules_dirs))
        single = (f"the file {output}" if output not in (None, "-") and folder is None
                  else "an HTML page on stdout" if output_format == "html" and folder is None else None)
        from ..diagnosis.perf import evaluate_performance_rules
        labels, reports, findings, performance_findings, complete = [], [], [], [], True
        with analyze_each_host(list(paths), _limits(max_file_size, max_total_size, max_events), _debug(ctx),
                               jobs, single_report=single) as hosts:
            for host in hosts:
                host_findings, verdict = evaluate_rules(rules, host.analysis)
                host_performance = evaluate_performance_rules(rules, host.analysis.performance, host_findings,
                                                              host.analysis.topology)
                labels.append(host.label)
                reports.append(build_report(host.analysis, host_findings, verdict, host_performance))
                findings += host_findings
                performance_findings += host_performance
                complete = complete and host.analysis.complete
        if folder is not None:
            for path in write_per_host(folder, reports, labels, output_format, list(paths)):
                click.echo(f"diagdisk: wrote {path}", err=True)
        elif len(reports) == 1:
            _emit(reports[0], output_format, output, paths)
        elif output_format == "json":
            import json
            _write(json.dumps(reports, indent=2, default=str) + "\n", output, paths)
        else:
            _write(text_blocks(reports, labels), output, paths)
        if not complete:
            click.echo("diagdisk: warning: part of the input could not be read; the report's warnings say "
                       "which", err=True)
        if fail_on:
            threshold = SEVERITIES.index(fail_on)
            if any(SEVERITIES.index(f["severity"]) >= threshold for f in findings + performance_findings):
                return ExitCode.FINDINGS
        return ExitCode.OK if complete else ExitCode.PARTIAL
    ctx.exit(_guarded(ctx, run))


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "output_format", type=click.Choice(["csv", "jsonl"]), default="jsonl", show_default=True)
@_output_options
@_limit_options
@click.pass_context
def events(ctx, paths, output_format, output, max_file_size, max_total_size, max_events, jobs):
    """Every event with its source file, line, time, identity and decoded fields."""
    def run():
        _check_output(output, paths)
        from .hosts import analyze_each_host
        from ..diagnosis.eventtable import event_frame
        frames, warnings, complete = [], [], True
        with analyze_each_host(list(paths), _limits(max_file_size, max_total_size, max_events), _debug(ctx),
                               jobs, keep_each=True) as hosts:
            for host in hosts:
                analysis = host.analysis
                frames.append((host.label, event_frame(analysis.events)))
                warnings += analysis.warnings + [w for source in analysis.sources for w in source.warnings]
                complete = complete and analysis.complete
        if len(frames) == 1:
            frame = frames[0][1]
        else:
            import pandas
            # several hosts in one listing: each event says whose it is
            frame = pandas.concat([f.assign(host=label) for label, f in frames], ignore_index=True)
        if output_format == "csv":
            text = frame.to_csv(index=False)
        else:
            text = frame.to_json(orient="records", lines=True) if len(frame) else ""
        _write(text, output, paths)
        _echo_warnings(warnings)
        return ExitCode.OK if complete else ExitCode.PARTIAL
    ctx.exit(_guarded(ctx, run))


def _emit(report: dict, output_format: str, output: str | None, inputs) -> None:
    if output_format == "json":
        import json
        text = json.dumps(report, indent=2, default=str) + "\n"
    elif output_format == "html":
        from ..report.html import render_html
        text = render_html(report)
    else:
        from ..report.text import render_text
        text = render_text(report)
    _write(text, output, inputs)


MAX_WARNINGS_ON_STDERR = 20


def _echo_warnings(warnings: list[str]) -> None:
    """An event listing has no report to carry the warnings: they go to stderr."""
    for warning in warnings[:MAX_WARNINGS_ON_STDERR]:
        click.echo(f"diagdisk: warning: {warning}", err=True)
    if len(warnings) > MAX_WARNINGS_ON_STDERR:
        click.echo(f"diagdisk: warning: ... and {len(warnings) - MAX_WARNINGS_ON_STDERR} more", err=True)


def _check_output(output: str | None, inputs) -> None:
    """Refuse a destination that is an input before spending time on the analysis."""
    if output not in (None, "-"):
        from ..inputs.safeio import check_not_input
        check_not_input(output, [p for p in inputs if p != "-"])


def _write(text: str, output: str | None, inputs) -> None:
    if output in (None, "-"):
        sys.stdout.write(text)
        return
    from ..inputs.safeio import atomic_write
    atomic_write(output, text, refuse=[p for p in inputs if p != "-"])
    click.echo(f"diagdisk: wrote {output}", err=True)


def _debug(ctx) -> bool:
    root = ctx.find_root()
    return bool(root.obj and root.obj.get("debug"))


def _guarded(ctx, run) -> int:
    try:
        return int(run())
    except DiagdiskError as exc:
        click.echo(f"diagdisk: error: {exc.one_line()}", err=True)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("diagdisk: interrupted", err=True)
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # an unexpected failure: one line, traceback only with --debug
        if _debug(ctx):
            raise
        click.echo(f"diagdisk: internal error: {type(exc).__name__}: {exc} (rerun with --debug)", err=True)
        return int(ExitCode.BAD_INPUT)


if __name__ == "__main__":
    main()
