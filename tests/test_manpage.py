"""docs/diagdisk.1 is the man page docs/make_manpage.py makes from the command line's own help: in
sync with every command, subcommand and option, and well-formed troff."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import click
import pytest

from diagdisk.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "diagdisk.1"


def _maker():
    spec = importlib.util.spec_from_file_location("make_manpage", ROOT / "docs" / "make_manpage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_man_page_is_what_the_help_says():
    assert PAGE.read_text(encoding="utf-8") == _maker().render(), \
        "docs/diagdisk.1 is out of date: run python docs/make_manpage.py"


def test_the_man_page_names_every_command_and_option():
    page = PAGE.read_text(encoding="utf-8")

    def walk(command: click.Command, path: list[str], parent: click.Context | None):
        ctx = click.Context(command, info_name=path[-1], parent=parent)
        assert f".SS {' '.join(path)}" in page or len(path) == 1
        for param in command.get_params(ctx):
            if isinstance(param, click.Option):
                for name in param.opts:
                    assert name.replace("-", "\\-") in page, (path, name)
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                walk(command.get_command(ctx, name), [*path, name], ctx)

    walk(main, ["diagdisk"], None)
    assert "_DIAGDISK_COMPLETE=bash_source" in page   # shell completion is documented


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
def test_the_man_page_is_well_formed_troff():
    result = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(PAGE)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stderr == "", result.stderr
