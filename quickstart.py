#!/usr/bin/env python3
"""The quick start, on a machine with nothing but Python 3.11 or newer.

    python3 quickstart.py demo    # analyze samples/demo-sosreport: summary, then report.html
    python3 quickstart.py test    # the whole test suite (what CI runs)

Each command first makes `.venv` beside this file and installs diagdisk into it, as `pip install .`
does (HTML report and compiled prefilter included), with the test tools and the fleet extra
(again only when pyproject.toml changed). Debian's python3 comes without
ensurepip (it is in the python3-venv package); the virtualenv is then made without pip and pip is
fetched from PyPI, where the other packages come from too. The Makefile's targets call this.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PYTHON = VENV / "bin" / "python"
EXTRAS = ".[test,fleet]"


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("demo", "test"):
        print("usage: python3 quickstart.py demo|test", file=sys.stderr)
        return 2
    if sys.version_info < (3, 11):
        print(f"quickstart: diagdisk needs Python 3.11 or newer, this is {sys.version.split()[0]}", file=sys.stderr)
        return 2
    install()
    if argv[0] == "demo":
        diagdisk = str(VENV / "bin" / "diagdisk")
        sample = str(ROOT / "samples" / "demo-sosreport")
        subprocess.run([diagdisk, "analyze", sample], check=False)
        return subprocess.run([diagdisk, "analyze", sample, "--format", "html", "-o", str(ROOT / "report.html")]).returncode
    # pyproject.toml already asks for -q; a second -q would drop the closing "N passed" line
    return subprocess.run([str(PYTHON), "-m", "pytest"], cwd=ROOT).returncode


def install() -> None:
    stamp = VENV / ".installed"
    pyproject = ROOT / "pyproject.toml"
    if stamp.exists() and stamp.stat().st_mtime >= pyproject.stat().st_mtime and PYTHON.exists():
        return
    # the first run takes a minute or so, most of it pip's: say what is happening, stage by stage
    if not _has_pip():
        say(f"making the virtual environment {VENV.relative_to(ROOT)}")
        _make_venv()
    pip = [str(PYTHON), "-m", "pip", "install", "-q"]
    say("updating pip")
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    say(f"installing diagdisk and its extras ({EXTRAS}: matplotlib, hyperscan, pytest, dask, pyarrow...)")
    subprocess.run([*pip, "-e", EXTRAS], cwd=ROOT, check=True)
    stamp.touch()
    say("installed; the next runs start at once")


def say(what: str) -> None:
    print(f"quickstart: {what}", file=sys.stderr, flush=True)


def _has_pip() -> bool:
    return PYTHON.exists() and subprocess.run([str(PYTHON), "-m", "pip", "--version"],
                                              capture_output=True).returncode == 0


def _make_venv() -> None:
    try:
        venv.create(VENV, with_pip=True, clear=True)
        if _has_pip():
            return
    except (subprocess.CalledProcessError, SystemExit, OSError):
        pass  # no ensurepip: Debian's python3 without python3-venv
    print("quickstart: this Python has no ensurepip; making .venv without pip and fetching pip from PyPI",
          file=sys.stderr)
    venv.create(VENV, with_pip=False, clear=True)
    _bootstrap_pip()


def _bootstrap_pip() -> None:
    """Install pip into .venv from its wheel on PyPI (a wheel runs as `python wheel/pip`)."""
    index = "https://pypi.org/pypi/pip/json"
    with urllib.request.urlopen(index, timeout=60) as answer:
        release = json.load(answer)
    wheel = next(f for f in release["urls"] if f["packagetype"] == "bdist_wheel")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / wheel["filename"]
        # a mirror may give the file's address relative to the index page
        with urllib.request.urlopen(urllib.parse.urljoin(index, wheel["url"]), timeout=120) as answer:
            path.write_bytes(answer.read())
        subprocess.run([str(PYTHON), f"{path}/pip", "install", "-q", str(path)], check=True,
                       env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
