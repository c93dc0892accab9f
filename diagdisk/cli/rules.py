"""`diagdisk rules list|test|check`."""

from __future__ import annotations

from pathlib import Path

import click

from ..safetext import escape_control
from .main import debug_option

_EXIT_CODES = """\b
Exit codes:
  0    the rules are valid (test: every example behaves)
  1    test: an example did not behave
  2    a rule file is malformed (one line names the file, line and field)
  70   internal error"""


@click.group(epilog="""\b
Examples:
  diagdisk rules list                        id, severity, part to replace, title
  diagdisk rules list --rules my-rules/      the built-in rules and those of my-rules/
  diagdisk rules check my-rules/*.yml        fields, modifiers, ids
  diagdisk rules test                        every rule's match / no_match examples
  diagdisk analyze sosreport/ --rules my-rules/

""" + _EXIT_CODES)
@debug_option
def rules():
    """List, check and test the rules (built-in and --rules folders). docs/rules.md says how to
    write one."""


@rules.command("list", epilog="\b\nExamples:\n  diagdisk rules list\n  diagdisk rules list --rules my-rules/\n\n"
               + _EXIT_CODES)
@click.option("--rules", "rules_dirs", multiple=True, type=click.Path(file_okay=False, exists=True),
              help="Also list the rules in this folder (repeatable).")
@debug_option
def list_rules(rules_dirs):
    """Show every rule: id, severity, FRU and title."""
    from ..diagnosis.engine import load_rules
    for rule in _load_or_exit(lambda: load_rules(extra_dirs=list(rules_dirs))):
        click.echo(escape_control(f"{rule.id}  {rule.severity:<8}  {rule.fru:<10}  {rule.title}"))


def _load(files) -> list:
    """The named rule files, or every built-in rule; a malformed file exits 2 with one line."""
    from ..diagnosis.engine import load_rules
    return _load_or_exit(lambda: load_rules(only=[Path(f) for f in files] or None))


def _load_or_exit(load) -> list:
    from ..errors import DiagdiskError, ExitCode
    try:
        return load()
    except DiagdiskError as exc:
        click.echo(escape_control(f"diagdisk: error: {exc}"), err=True)
        raise SystemExit(int(ExitCode.BAD_INPUT))


@rules.command("check", epilog="\b\nExamples:\n  diagdisk rules check\n  diagdisk rules check my-rules/*.yml\n\n"
               + _EXIT_CODES)
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@debug_option
def check_rules(files):
    """Validate rule files (fields, modifiers, ids)."""
    click.echo(f"{len(_load(files))} rules ok")


@rules.command("test", epilog="\b\nExamples:\n  diagdisk rules test\n  diagdisk rules test my-rules/DD900_mine.yml\n\n"
               + _EXIT_CODES)
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@debug_option
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
            click.echo(escape_control(f"  {problem}"))
    raise SystemExit(1 if failures else 0)


@rules.command("fit", epilog="""\b
Examples:
  diagdisk rules fit tests/corpus samples                    fit, print the tune score before and after
  diagdisk rules fit tests/corpus samples -o rules/model/inference.yml

Only cases whose expected.json has meta.split "tune" (or no meta) are read: a corpus's check part
stays unseen. docs/inference.md explains the model and its numbers.

""" + _EXIT_CODES)
@click.argument("corpora", nargs=-1, required=True, type=click.Path(file_okay=False, exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write the fitted weights to this file (default: only print the scores).")
@click.option("--start", type=click.Path(dir_okay=False, exists=True), default=None,
              help="Starting weights (default: rules/model/inference-start.yml, the expert values).")
@click.option("--rounds", type=click.IntRange(1, 20), default=4, show_default=True,
              help="Rounds of the coordinate search (each halves its step).")
@debug_option
def fit_weights(corpora, output, start, rounds):
    """Fit the inference's weights on the tune part of labelled corpora (tests/corpus layout)."""
    from ..diagnosis import fit
    from ..diagnosis.inference import read_weights, weights_file
    from ..errors import DiagdiskError, ExitCode
    try:
        start_weights = read_weights(Path(start) if start else weights_file().with_name("inference-start.yml"))
        cases = [case for corpus in corpora for case in fit.load_cases(Path(corpus), "tune")]
    except DiagdiskError as exc:
        click.echo(escape_control(f"diagdisk: error: {exc}"), err=True)
        raise SystemExit(int(ExitCode.BAD_INPUT))
    if not cases:
        click.echo("diagdisk: error: no tune case (a folder with input/ and expected.json) in "
                   + escape_control(", ".join(corpora)), err=True)
        raise SystemExit(int(ExitCode.BAD_INPUT))
    before = fit.score(cases, start_weights)
    weights = fit.fit(cases, start_weights, rounds=rounds, log=lambda line: click.echo(line, err=True))
    after = fit.score(cases, weights)
    click.echo(f"tune cases: {len(cases)}; the expert's reading first: {before['right']} before, {after['right']} after")
    if output:
        fit.write_weights(Path(output), weights, cases, before, after)
        click.echo(escape_control(f"wrote {output}"))
