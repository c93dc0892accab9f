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
  diagdisk rules check my-rules/             fields, modifiers, ids (none a built-in rule's)
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
    listed = _load_or_exit(lambda: load_rules(extra_dirs=list(rules_dirs)))
    click.echo(f"{'id':<6}  {'severity':<8}  {'fru':<10}  title")
    for rule in listed:
        click.echo(escape_control(f"{rule.id:<6}  {rule.severity:<8}  {rule.fru:<10}  {rule.title}"))


def _rule_files(paths) -> list[Path]:
    """The rule files named, a folder standing for every *.yml under it (as --rules reads it)."""
    from ..diagnosis.engine import rules_dir
    tables = (rules_dir() / "model").resolve()   # the path model's tables, not rules
    files = []
    for path in map(Path, paths):
        files += sorted(p for p in path.rglob("*.yml") if not p.resolve().is_relative_to(tables)) \
            if path.is_dir() else [path]
    return files


def _load(paths, against_built_ins: bool = False) -> list:
    """The rules of the named files and folders, or every built-in rule; a malformed file exits 2
    with one line. `against_built_ins`: an id a built-in rule has is refused, as `analyze --rules`
    refuses it."""
    from ..diagnosis.engine import load_rules, rules_dir
    from ..errors import DiagdiskError
    files = _rule_files(paths)
    if paths and not files:
        raise SystemExit(_error(f"{', '.join(paths)}: no rule file (*.yml) in it"))
    if not files:
        return _load_or_exit(load_rules)
    named = _load_or_exit(lambda: load_rules(only=files))
    if against_built_ins:
        built_in_root = rules_dir().resolve()
        own = {path.resolve() for path in files}
        try:
            built_ins = [r for r in load_rules() if r.path.resolve() not in own]
        except DiagdiskError:
            built_ins = []
        taken = {rule.id: rule.path for rule in built_ins}
        for rule in named:
            if rule.id in taken and not rule.path.resolve().is_relative_to(built_in_root):
                raise SystemExit(_error(f"{rule.path}: rule id {rule.id} is the built-in rule {taken[rule.id].name}'s; "
                                        f"give the rule an id of its own (DD9xx are left for local rules)"))
    return named


def _error(message: str) -> int:
    from ..errors import ExitCode
    click.echo(escape_control(f"diagdisk: error: {message}"), err=True)
    return int(ExitCode.BAD_INPUT)


def _load_or_exit(load) -> list:
    from ..errors import DiagdiskError, ExitCode
    try:
        return load()
    except DiagdiskError as exc:
        click.echo(escape_control(f"diagdisk: error: {exc}"), err=True)
        raise SystemExit(int(ExitCode.BAD_INPUT))


@rules.command("check", epilog="\b\nExamples:\n  diagdisk rules check\n  diagdisk rules check my-rules/\n  diagdisk rules check my-rules/*.yml\n\n"
               + _EXIT_CODES)
@click.argument("files", nargs=-1, type=click.Path(exists=True))
@debug_option
def check_rules(files):
    """Validate rule files or folders of them (fields, modifiers, ids, and no id a built-in rule has)."""
    click.echo(f"{len(_load(files, against_built_ins=True))} rules ok")


@rules.command("test", epilog="\b\nExamples:\n  diagdisk rules test\n  diagdisk rules test my-rules/DD900_mine.yml\n\n"
               + _EXIT_CODES)
@click.argument("files", nargs=-1, type=click.Path(exists=True))
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
    import dataclasses

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
    temperature, held_out = fit.calibrate(cases, start_weights, log=lambda line: click.echo(line, err=True))
    weights = dataclasses.replace(weights, temperature=temperature)
    after = fit.score(cases, weights)
    click.echo(f"tune cases: {len(cases)}; the expert's reading first: {before['right']} before, {after['right']} after "
               f"(in sample); {held_out['held_out_right']} of {held_out['held_out_cases']} held out in 5 folds; "
               f"temperature {temperature:.1f}")
    if output:
        fit.write_weights(Path(output), weights, cases, before, after, held_out)
        click.echo(escape_control(f"wrote {output}"))
