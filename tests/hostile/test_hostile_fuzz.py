"""The corpus-seeded fuzz of `diagdisk analyze`, for a bounded time, and the replay of every input
that once broke it (tests/hostile/regressions/).

DIAGDISK_FUZZ_SECONDS sets the time budget (default 20; 0 skips the fuzz run), DIAGDISK_FUZZ_SEED
the first seed (default 1, so a run is reproducible: the same seeds in the same order).
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from fuzz_analyze import check_run, fuzz

REGRESSIONS = Path(__file__).parent / "regressions"
EXPECTED = json.loads((REGRESSIONS / "expected.json").read_text())
FIXTURES = sorted(p for p in REGRESSIONS.iterdir() if p.name not in ("README.md", "expected.json"))


def test_fuzz_analyze_over_mutated_sosreports(tmp_path):
    seconds = float(os.environ.get("DIAGDISK_FUZZ_SECONDS", "20"))
    if seconds <= 0:
        pytest.skip("DIAGDISK_FUZZ_SECONDS=0")
    first_seed = int(os.environ.get("DIAGDISK_FUZZ_SEED", "1"))
    (tmp_path / "cases").mkdir()
    failures = fuzz(seconds, first_seed, tmp_path / "cases", save=tmp_path / "failing")
    assert not failures, "\n\n".join(
        f"{case.name} ({', '.join(case.steps)}; {case.container}), input saved as {fixture}:\n  "
        + "\n  ".join(problems) for case, problems, fixture in failures
    ) + "\n\nFix the bug, then copy the input into tests/hostile/regressions/ (see its README)."


def test_every_regression_fixture_is_documented():
    assert sorted(EXPECTED) == sorted(p.name for p in FIXTURES)
    assert all(entry.get("why") for entry in EXPECTED.values())


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_regression_fixture_replays_cleanly(fixture, tmp_path):
    sandbox = tmp_path / "sandbox"
    (sandbox / "in").mkdir(parents=True)
    if fixture.name.endswith(".folder.tar"):
        with tarfile.open(fixture) as tar:
            tar.extractall(sandbox / "in", filter="tar")
        (input_path,) = (sandbox / "in").iterdir()
    else:
        input_path = sandbox / "in" / fixture.name
        shutil.copyfile(fixture, input_path)
    code, problems = check_run(input_path, sandbox)
    assert problems == []
    assert code == EXPECTED[fixture.name]["exit_code"], EXPECTED[fixture.name]["why"]
