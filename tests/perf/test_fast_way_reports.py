"""The fast way through a log (line plans, and the short way to the records for the lines they read)
gives the same whole report as the general way (framing and grammars on every line), on every
sample, every tune case of the corpus and every hostile input kept in tests/hostile/regressions.

What is compared is the report as `diagdisk analyze --format json` writes it, less the time it was
made: verdict, findings, devices, evidence lines, counts, times and warnings. Check cases of the
corpus are left out: only the scoring code reads them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import diagdisk.logs.source as log_source
from diagdisk.diagnosis.analysis import analyze
from diagdisk.errors import DiagdiskError
from diagdisk.logs.reader import LogReader
from diagdisk.report.build import build_report

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
SAMPLES = ROOT / "samples"
REGRESSIONS = ROOT / "tests" / "hostile" / "regressions"
# when the report was made: the only field two runs on the same input may differ in
_MADE_AT = ("generated",)


def _tune_cases():
    for case in sorted(CORPUS.iterdir()):
        expected = case / "expected.json"
        if expected.is_file() and (json.loads(expected.read_text()).get("meta") or {}).get("split", "tune") == "tune":
            yield pytest.param(case / "input", id=f"corpus:{case.name}")


def _inputs():
    yield from _tune_cases()
    for sample in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        yield pytest.param(sample, id=f"sample:{sample.name}")
    for archive in sorted(REGRESSIONS.glob("*.tar*")):
        yield pytest.param(archive, id=f"hostile:{archive.name}")


class _Readers:
    """LogReader as the analysis makes it, with the fast way on or off, keeping each one made."""

    def __init__(self, use_plans: bool):
        self.made: list[LogReader] = []
        readers = self

        class Reader(LogReader):
            def __init__(self, *args, **kwargs):
                kwargs["use_plans"] = use_plans
                super().__init__(*args, **kwargs)
                readers.made.append(self)

        self.reader_class = Reader


def _report(path: Path, use_plans: bool, monkeypatch) -> tuple[dict | str, list[LogReader]]:
    """The JSON report on `path` (or the error it gives), and the readers that read its logs."""
    readers = _Readers(use_plans)
    with monkeypatch.context() as patch:
        patch.setattr(log_source, "LogReader", readers.reader_class)
        try:
            report = build_report(analyze([str(path)]))
        except DiagdiskError as error:
            return f"{type(error).__name__}: {error}", readers.made
    report = json.loads(json.dumps(report, default=str))  # as written: tuples as lists, times as text
    for name in _MADE_AT:
        report.pop(name, None)
    return report, readers.made


@pytest.mark.parametrize("path", list(_inputs()))
def test_the_fast_way_gives_the_report_the_general_way_gives(path, monkeypatch):
    fast, _ = _report(path, True, monkeypatch)
    general, readers = _report(path, False, monkeypatch)
    assert all(reader.plan_hits == 0 for reader in readers)
    assert fast == general


def test_the_fast_way_is_taken_where_lines_repeat(monkeypatch):
    # the controller resets sample repeats its lines with other numbers: plans read the repeats
    _, readers = _report(SAMPLES / "controller-wide-resets-mpt2sas-host0", True, monkeypatch)
    assert sum(reader.plan_hits for reader in readers) > 0
