"""Command line: `diagdisk analyze`, `events`, `decode`, `rules`, `collect`.

Heavy modules (pandas, lark, the grammars) are imported inside commands so `diagdisk --help`
stays fast. stdout carries only the report; messages go to stderr. Exit codes: see ExitCode.
"""

from __future__ import annotations

import sys

import click

from . import __version__
from .errors import DiagdiskError, ExitCode

SEVERITIES = ("info", "low", "medium", "high", "critical")


class LazyGroup(click.Group):
    """Subcommands that live in other modules, imported only when used."""

    lazy = {
        "decode": ("diagdisk.decode.cli", "decode"),
        "collect": ("diagdisk.collect.cli", "collect"),
        "rules": ("diagdisk.rules_cli", "rules"),
    }

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx, name):
        if name in self.lazy:
            import importlib
            module, attr = self.lazy[name]
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)


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


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "output_format", type=click.Choice(["text", "json", "html"]), default="text",
              show_default=True, help="Report format.")
@click.option("--fail-on", type=click.Choice(SEVERITIES), default=None,
              help="Exit 1 when a finding at or above this severity exists.")
@click.option("--rules", "rules_dirs", multiple=True, type=click.Path(file_okay=False, exists=True),
              help="Add the rules in this folder to the built-in ones (repeatable).")
@_output_options
@click.pass_context
def analyze(ctx, paths, output_format, fail_on, rules_dirs, output):
    """Analyze a sosreport, a bundle, log files or a folder of logs (`-` reads stdin)."""
    def run():
        from .analysis import analyze as run_analysis
        from .report.build import build_report
        from .rules import evaluate_rules, load_rules
        analysis = run_analysis(list(paths))
        rules = load_rules(extra_dirs=list(rules_dirs))
        findings, verdict = evaluate_rules(rules, analysis)
        report = build_report(analysis, findings, verdict)
        _emit(report, output_format, output, paths)
        if fail_on:
            threshold = SEVERITIES.index(fail_on)
            if any(SEVERITIES.index(f["severity"]) >= threshold for f in findings):
                return ExitCode.FINDINGS
        return ExitCode.OK
    ctx.exit(_guarded(ctx, run))


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "output_format", type=click.Choice(["csv", "jsonl"]), default="jsonl", show_default=True)
@_output_options
@click.pass_context
def events(ctx, paths, output_format, output):
    """Every event with its source file, line, time, identity and decoded fields."""
    def run():
        from .analysis import analyze as run_analysis
        from .eventtable import event_frame
        analysis = run_analysis(list(paths))
        frame = event_frame(analysis.events)
        if output_format == "csv":
            text = frame.to_csv(index=False)
        else:
            text = frame.to_json(orient="records", lines=True) if len(frame) else ""
        _write(text, output, paths)
        return ExitCode.OK
    ctx.exit(_guarded(ctx, run))


def _emit(report: dict, output_format: str, output: str | None, inputs) -> None:
    if output_format == "json":
        import json
        text = json.dumps(report, indent=2, default=str) + "\n"
    elif output_format == "html":
        from .report.html import render_html
        text = render_html(report)
    else:
        from .report.text import render_text
        text = render_text(report)
    _write(text, output, inputs)


def _write(text: str, output: str | None, inputs) -> None:
    if output in (None, "-"):
        sys.stdout.write(text)
        return
    from .safeio import atomic_write
    atomic_write(output, text, refuse=[p for p in inputs if p != "-"])
    click.echo(f"diagdisk: wrote {output}", err=True)


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
        if ctx.find_root().obj and ctx.find_root().obj.get("debug"):
            raise
        click.echo(f"diagdisk: internal error: {type(exc).__name__}: {exc} (rerun with --debug)", err=True)
        return int(ExitCode.BAD_INPUT)


if __name__ == "__main__":
    main()
