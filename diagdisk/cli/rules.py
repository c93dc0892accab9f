"""`diagdisk rules list|test|check`."""

from __future__ import annotations

from pathlib import Path

import click


@click.group()
def rules():
    """List, check and test the rules (built-in and --rules folders)."""


@rules.command("list")
@click.option("--rules", "rules_dirs", multiple=True, type=click.Path(file_okay=False, exists=True))
def list_rules(rules_dirs):
    """Show every rule: id, severity, FRU and title."""
    from ..diagnosis.engine import load_rules
    for rule in load_rules(extra_dirs=list(rules_dirs)):
        click.echo(f"{rule.id}  {rule.severity:<8}  {rule.fru:<10}  {rule.title}")


def _load(files) -> list:
    """The named rule files, or every built-in rule; a malformed file exits 2 with one line."""
    from ..errors import DiagdiskError, ExitCode
    from ..diagnosis.engine import load_rules
    try:
        return load_rules(only=[Path(f) for f in files] or None)
    except DiagdiskError as exc:
        click.echo(f"diagdisk: error: {exc}", err=True)
        raise SystemExit(int(ExitCode.BAD_INPUT))


@rules.command("check")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
def check_rules(files):
    """Validate rule files (fields, modifiers, ids)."""
    click.echo(f"{len(_load(files))} rules ok")


@rules.command("test")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
def test_rules(files):
    """Run the rules' own match / no_match examples."""
    from ..diagnosis.examples import run_rule_examples
    loaded = _load(files)
    failures = 0
    for rule in loaded:
        problems = run_rule_examples(rule)
        failures += bool(problems)
        click.echo(f"{rule.id}: {'ok' if not problems else 'FAILED'}")
        for problem in problems:
            click.echo(f"  {problem}")
    raise SystemExit(1 if failures else 0)
