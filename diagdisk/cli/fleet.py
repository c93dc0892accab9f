"""``diagdisk fleet``: every sosreport and bundle under the paths, analysed on a Dask cluster."""

from __future__ import annotations

from datetime import datetime, timezone

import click

from ..errors import ExitCode
from .main import _Size, _guarded


def _since(value: str | None) -> str | None:
    """--since in the grammar of every time option (diagnosis.window), as the naive ISO time the
    fleet table's report dates are compared with; a span counts back from now."""
    if value is None:
        return None
    from ..diagnosis.window import WindowError, parse_time_spec
    try:
        moment = parse_time_spec(value).start(datetime.now(timezone.utc))
    except WindowError as exc:
        raise click.BadParameter(str(exc)) from None
    return moment.astimezone(timezone.utc).replace(tzinfo=None).isoformat()


@click.command("fleet")
@click.argument("paths", nargs=-1, required=True)
@click.option("-o", "--output", "out", required=True, type=click.Path(file_okay=False),
              help="Folder for the reports, the tables and fleet.html (made if missing; a later run continues there).")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Worker processes of the local Dask cluster (default: one per CPU).")
@click.option("--scheduler", default=None, metavar="tcp://HOST:8786",
              help="Use the Dask cluster of this scheduler instead of a local one (its workers need "
                   "`pip install diagdisk[fleet]` and the inputs at the same paths).")
@click.option("--html", is_flag=True, help="Also write each input's HTML report.")
@click.option("--since", default=None, metavar="TIME",
              help="Leave out inputs whose report date is before TIME: 2026-11-01, 'Nov 1 08:00', @EPOCH or a span "
                   "before now (30d), as every --since takes.")
@click.option("--force", is_flag=True, help="Analyse again inputs already analysed by this diagdisk version.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=600.0, show_default=True,
              help="Seconds one input may take; then it is stopped and recorded failed.")
@click.option("--max-memory", type=_Size(), default="4G", show_default=True,
              help="Address space one input's analysis may use; past it the input is recorded failed.")
@click.option("--max-file-size", type=_Size(), default="4G", show_default=True,
              help="Most bytes read from one file (an archive member, a decompressed log).")
@click.option("--max-total-size", type=_Size(), default="8G", show_default=True,
              help="Most bytes extracted from one archive.")
@click.option("--max-events", type=click.IntRange(min=1), default=5_000_000, show_default=True,
              help="Most distinct events held for one log.")
@click.option("--checkpoint", type=click.IntRange(min=1), default=100, show_default=True,
              help="Rewrite the tables after this many inputs (a stopped run keeps them).")
@click.option("--rules", "rules_dirs", multiple=True, type=click.Path(file_okay=False, exists=True),
              help="Add the rules in this folder to the built-in ones (repeatable).")
@click.option("--inventory", type=click.Path(dir_okay=False), default=None, metavar="HOSTS.CSV",
              help="A CSV with a `host` column and any others (rack, site, purchase batch): each column's "
                   "values are cohorts too.")
@click.pass_context
def fleet(ctx, paths, out, workers, scheduler, html, since, force, timeout, max_memory, max_file_size,
          max_total_size, max_events, checkpoint, rules_dirs, inventory):
    """Analyse every sosreport, bundle and host's logs under PATHS (globs too), in parallel.

    Writes under OUT: reports/<host>_<date>_<hash>.json (and .html with --html), fleet.parquet,
    fleet.csv, suspects.parquet, cohorts.parquet (docs/fleet.md) and fleet.html, whose first section
    is the patterns across hosts: drive and controller firmware, driver and kernel, enclosure and
    inventory cohorts failing above the fleet's rate. Inputs already analysed (same
    content, same diagdisk version) are skipped unless --force; an input that cannot be analysed
    is a row with its reason and never stops the run.

    \b
    Examples:
      diagdisk fleet /srv/sosreports/ -o fleet-out/
      diagdisk fleet '/srv/bundles/*/diagdisk-*.tar.gz' -o out --workers 8 --since 2026-11-01
      diagdisk fleet /shared/cases -o /shared/out --scheduler tcp://10.0.0.5:8786 --html
      diagdisk fleet /srv/sosreports/ -o fleet-out/ --inventory hosts.csv

    Exit codes: 0 every input analysed, 3 some inputs failed (fleet.html and the tables say why),
    2 bad usage or the fleet extra missing, 130 interrupted (a later run continues).
    """
    def run():
        from ..fleet.run import check_fleet_extra
        check_fleet_extra(html=html)
        from ..fleet.run import DaskExecutor, FleetOptions, run_fleet
        options = FleetOptions(html=html, since=_since(since), force=force, timeout=timeout, memory_bytes=max_memory,
                               checkpoint_every=checkpoint, rules_dirs=list(rules_dirs), inventory=inventory,
                               limits={"max_file_bytes": max_file_size, "max_total_bytes": max_total_size,
                                       "max_events": max_events})
        summary = run_fleet(list(paths), out, options,
                            executor_factory=lambda: DaskExecutor(workers=workers, scheduler=scheduler))
        from ..safetext import escape_control
        # what no single report shows comes first
        for line in summary.flagged[:20]:
            click.echo(f"diagdisk: flagged cohort: {escape_control(line)}", err=True)
        for line in summary.patterns[:20]:
            click.echo(f"diagdisk: pattern across hosts: {escape_control(line)}", err=True)
        for line in summary.rising[:20]:
            click.echo(f"diagdisk: rising: {escape_control(line)}", err=True)
        for note in summary.notes[:20]:
            click.echo(f"diagdisk: note: {note}", err=True)
        click.echo(f"diagdisk: {summary.total} inputs: {summary.analysed} analysed, {summary.skipped} already "
                   f"analysed, {summary.failed} failed" + (f", {summary.excluded} before --since" if summary.excluded else "")
                   + f" in {summary.seconds:.1f} s; wrote {out}/fleet.html", err=True)
        return ExitCode.PARTIAL if summary.failed else ExitCode.OK
    ctx.exit(_guarded(ctx, run))



