"""``diagdisk collect``: gather everything that helps a disk-failure diagnosis into one bundle."""

from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path

import click

from diagdisk.cli.main import debug_option, echo_error
from diagdisk.cli.progress import CollectProgress
from diagdisk.collect.bundle import collect_bundle, default_folder
from diagdisk.collect.items import ROOT_ADDS, Context, read_hostname
from diagdisk.errors import DiagdiskError

def parse_since(value: str, now: datetime) -> datetime:
    """A --since value in the grammar of every time option (diagnosis.window): 30d, 12h, 90m before
    `now`, or a time as the logs write it; one without a zone is this host's local time."""
    from diagdisk.diagnosis.window import WindowError, parse_time_spec
    try:
        spec = parse_time_spec(value)
        moment = spec.start(now)
    except WindowError as exc:
        raise click.BadParameter(str(exc)) from None
    if spec.zone is None and spec.epoch is None and spec.ago is None:
        moment = moment.replace(tzinfo=None).astimezone()   # the live host's logs are in its local time
    return moment


@click.command("collect", epilog="""\b
Examples:
  sudo diagdisk collect                      bundle in ./diagdisk-HOST-DATE.tar.gz
  sudo diagdisk collect --analyze            bundle, then the report on it
  sudo diagdisk collect --since 7d -o /tmp/db1.tar.gz
  diagdisk collect --analyze                 without root: less data, and the report says what is missing
  diagdisk analyze diagdisk-db1-20240302-180717.tar.gz     a bundle from another host

\b
Exit codes:
  0    bundle written (items that failed are in its manifest.json)
  2    the bundle cannot be written where asked, or bad usage
  70   internal error
  130  interrupted
  With --analyze, the exit codes of `diagdisk analyze` once the bundle is written.""")
@click.option("-o", "--output", type=click.Path(dir_okay=True, path_type=Path), help="Bundle file (default diagdisk-HOSTNAME-DATE.tar.gz in the current folder).")
@click.option("--since", default="30d", show_default=True, metavar="TIME",
              help="How far back to collect logs: a span before now (30d, 12h, 90m) or a time as the logs write "
                   "it (2024-03-02, 'Mar 2 18:07', @EPOCH), as every --since takes.")
@click.option("--timeout", default=30.0, show_default=True, type=click.FloatRange(min=0.1), help="Seconds each external command may run before its process group is killed.")
@click.option("--deadline", default=300.0, show_default=True, type=click.FloatRange(min=1), help="Seconds for the whole collection; items not started by then are skipped.")
@click.option("--root", type=click.Path(exists=True, file_okay=False, path_type=Path), help="Read /proc, /sys, /dev/disk and /var/log under this recorded tree; commands run only from --bin-dir.")
@click.option("--bin-dir", type=click.Path(exists=True, file_okay=False, path_type=Path), help="Folder searched first for commands (recorded or fake binaries); with --root, the only one.")
@click.option("--self-test", type=click.Choice(["short"]), default=None, help="Also START a short SMART self-test on every drive (off by default; results show in the next collection).")
@click.option("--perf-seconds", default=10, show_default=True, type=click.IntRange(min=0, max=600), help="Seconds iostat samples the disks for (0: not run); /proc/diskstats is also read twice a few seconds apart.")
@click.option("--analyze", is_flag=True, help="Analyze the bundle once it is written.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display and no notes on stderr.")
@debug_option
@click.pass_context
def collect(ctx: click.Context, output, since, timeout, deadline, root, bin_dir, self_test, perf_seconds, analyze,
            quiet) -> None:
    """Collect SMART data, kernel logs and storage topology into one .tar.gz bundle.

    Read-only and bounded: every command has a timeout, the whole run has a deadline, and a
    missing, denied, failed or timed-out item is recorded in manifest.json instead of stopping
    the run. Works without root too, with less data.
    """
    now = datetime.now().astimezone()
    root = (root or Path("/")).resolve()
    live = root == Path("/")
    if bin_dir is not None:
        search_path = str(bin_dir.resolve()) if not live else os.pathsep.join([str(bin_dir.resolve()), os.environ.get("PATH", os.defpath)])
    else:
        search_path = None
    privileged = os.geteuid() == 0
    progress = CollectProgress(quiet)
    context = Context(
        root=root,
        since=parse_since(since, now),
        timeout=timeout,
        deadline=time.monotonic() + deadline,
        search_path=search_path,
        run_commands=live or bin_dir is not None,
        privileged=privileged,
        self_test=self_test,
        progress=progress,
        perf_seconds=perf_seconds,
        sample_counters=live,
    )
    hostname = read_hostname(context)
    folder = default_folder(hostname, now)
    output = output or Path(f"{folder}.tar.gz")
    if live and not privileged and not quiet:
        echo_error(f"diagdisk: {ROOT_ADDS}")
    try:
        result = collect_bundle(context, output, folder, hostname)
    except DiagdiskError as error:
        progress.close()
        echo_error(f"diagdisk: error: {error.one_line()}")
        ctx.exit(int(error.exit_code))
    except BaseException:
        progress.close()
        raise
    progress.close()
    problems = [r for r in result.manifest["items"] if r["status"] != "ok"]
    if not quiet:
        echo_error(f"diagdisk: wrote {result.output} ({len(result.manifest['items'])} items, "
                   f"{len(problems)} skipped or failed: see its manifest.json)")
    if analyze:
        # Imported here: the analyzer pulls in the grammars and the rule engine, which collect does not need.
        from diagdisk.cli.main import analyze as analyze_command

        ctx.invoke(analyze_command, paths=(str(result.output),), quiet=quiet)

