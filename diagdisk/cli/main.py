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


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and the prefilter engine that runs (hyperscan or python), then exit.")
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
@_output_options
@_limit_options
@click.pass_context
def analyze(ctx, paths, output_format, fail_on, rules_dirs, output, max_file_size, max_total_size, max_events, jobs):
    """Analyze a sosreport, a bundle, log files or a folder of logs (`-` reads stdin)."""
    def run():
        _check_output(output, paths)
        from ..diagnosis.analysis import analyze as run_analysis
        from ..report.build import build_report
        from ..diagnosis.engine import evaluate_rules, load_rules
        analysis = run_analysis(list(paths), limits=_limits(max_file_size, max_total_size, max_events),
                                strict=_debug(ctx), jobs=jobs)
        rules = load_rules(extra_dirs=list(rules_dirs))
        findings, verdict = evaluate_rules(rules, analysis)
        report = build_report(analysis, findings, verdict)
        _emit(report, output_format, output, paths)
        if not analysis.complete:
            click.echo("diagdisk: warning: part of the input could not be read; the report's warnings say "
                       "which", err=True)
        if fail_on:
            threshold = SEVERITIES.index(fail_on)
            if any(SEVERITIES.index(f["severity"]) >= threshold for f in findings):
                return ExitCode.FINDINGS
        return ExitCode.OK if analysis.complete else ExitCode.PARTIAL
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
        from ..diagnosis.analysis import analyze as run_analysis
        from ..diagnosis.eventtable import event_frame
        analysis = run_analysis(list(paths), limits=_limits(max_file_size, max_total_size, max_events),
                                strict=_debug(ctx), keep_each=True, jobs=jobs)
        frame = event_frame(analysis.events)
        if output_format == "csv":
            text = frame.to_csv(index=False)
        else:
            text = frame.to_json(orient="records", lines=True) if len(frame) else ""
        _write(text, output, paths)
        _echo_warnings(analysis.warnings + [w for source in analysis.sources for w in source.warnings])
        return ExitCode.OK if analysis.complete else ExitCode.PARTIAL
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
