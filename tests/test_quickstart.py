"""The quick start's test command ends with pytest's closing line ("N passed in ..."), which is what
CI and a newcomer read; and the README says how to run diagdisk once the quick start is done."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import quickstart

ROOT = Path(__file__).resolve().parents[1]


def test_the_test_command_ends_with_pytest_s_summary_line(tmp_path, monkeypatch):
    calls = []
    with monkeypatch.context() as patched:
        patched.setattr(quickstart, "install", lambda: None)
        patched.setattr(quickstart.subprocess, "run", lambda argv, **kw: calls.append(argv) or
                        subprocess.CompletedProcess(argv, 0))
        assert quickstart.main(["test"]) == 0
    (argv,) = calls
    assert argv[1:3] == ["-m", "pytest"]
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert True\n")
    # the same options, with the project's own configuration (its addopts), on a one-test folder
    done = subprocess.run([sys.executable, *argv[1:], "-c", str(ROOT / "pyproject.toml"), "-p", "no:cacheprovider",
                           str(tmp_path)], capture_output=True, text=True, cwd=tmp_path)
    assert re.fullmatch(r"1 passed in [\d.]+s", done.stdout.strip().splitlines()[-1]), done.stdout


def test_the_readme_says_how_to_run_diagdisk_after_the_quick_start_and_lists_the_extras():
    readme = (ROOT / "README.md").read_text()
    start = readme.index("## Quick start")
    section = readme[start:readme.index("\n## ", start + 1)]
    assert "source .venv/bin/activate" in section and "pipx install ." in section
    for extra in re.findall(r"^(\w+) = \[", (ROOT / "pyproject.toml").read_text().split("[project.optional-dependencies]")[1]
                            .split("\n[")[0], re.M):
        assert f"`{extra}`" in readme, f"the README does not list the extra {extra}"


def test_the_install_says_what_it_is_doing(tmp_path, monkeypatch, capsys):
    venv = tmp_path / ".venv"
    monkeypatch.setattr(quickstart, "VENV", venv)
    monkeypatch.setattr(quickstart, "PYTHON", venv / "bin" / "python")
    monkeypatch.setattr(quickstart, "ROOT", tmp_path)
    (tmp_path / "pyproject.toml").write_text("")
    monkeypatch.setattr(quickstart, "_has_pip", lambda: False)
    monkeypatch.setattr(quickstart, "_make_venv", lambda: venv.mkdir())
    ran = []
    monkeypatch.setattr(quickstart.subprocess, "run", lambda argv, **kw: ran.append(argv) or
                        subprocess.CompletedProcess(argv, 0))
    quickstart.install()
    said = capsys.readouterr().err.splitlines()
    assert said == ["quickstart: making the virtual environment .venv", "quickstart: updating pip",
                    f"quickstart: installing diagdisk and its extras ({quickstart.EXTRAS}: matplotlib, hyperscan, "
                    "pytest, dask, pyarrow...)", "quickstart: installed; the next runs start at once"]
    assert len(ran) == 2   # pip itself, then diagdisk: each announced before it runs
