"""Identical content is read once whatever its path or container: a case folder holding the
customer's sosreport archive and the folder unpacked from it (the usual layout) gives the counts of
one copy, lists each source once and says, in a note, which input was not read again."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from diagdisk.cli.main import main
from diagdisk.errors import ExitCode
from diagdisk.inputs.opener import OpenedInput
from diagdisk.inputs.sameness import drop_copies

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"


def case_folder(tmp_path: Path, sample: str, name: str) -> tuple[Path, Path, Path]:
    """A case folder: the sample unpacked as `name/` and the archive `name.tar.xz` beside it."""
    case = tmp_path / "case"
    case.mkdir()
    unpacked = case / name
    shutil.copytree(SAMPLES / sample, unpacked, ignore=shutil.ignore_patterns("expected.json"))
    archive = case / f"{name}.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        tar.add(unpacked, arcname=name)
    return case, unpacked, archive


def analyze_json(*paths) -> tuple[dict, str, int]:
    result = CliRunner().invoke(main, ["analyze", *map(str, paths), "--format", "json"])
    assert result.exit_code in (ExitCode.OK, ExitCode.PARTIAL), result.output
    return json.loads(result.stdout)["reports"][0], result.stderr, result.exit_code


def _counts(report: dict) -> dict:
    return {(f["rule"], f["suspect"]["device"]): f["count"] for f in report["findings"]}


@pytest.fixture(scope="module")
def demo_alone() -> dict:
    return analyze_json(SAMPLES / "demo-sosreport")[0]


def test_an_archive_beside_its_unpacked_folder_is_counted_once(tmp_path, demo_alone):
    case, unpacked, archive = case_folder(tmp_path, "demo-sosreport", "sosreport-pgdb02-2024-03-19-abcdef")
    report, stderr, code = analyze_json(case)
    assert code == ExitCode.OK
    assert _counts(report) == _counts(demo_alone)
    assert _counts(report)[("DD101", "sdc")] == 3          # three medium errors, not six
    assert report["event_summary"] == demo_alone["event_summary"]
    paths = [source["path"] for source in report["sources"]]
    assert len(paths) == len(set(paths)) == len(demo_alone["sources"])
    assert report["complete"] is True
    (note,) = report["notes"]
    assert note.startswith(f"{archive}: not read: the same content as {unpacked}")
    assert f"diagdisk: note: {note}" in stderr
    assert "warning" not in stderr
    assert not any(str(archive) in w for w in report["warnings"])


def test_the_order_they_are_named_in_does_not_matter(tmp_path, demo_alone):
    _, unpacked, archive = case_folder(tmp_path, "demo-sosreport", "sosreport-pgdb02-2024-03-19-abcdef")
    report, _, _ = analyze_json(archive, unpacked)
    assert _counts(report) == _counts(demo_alone)
    (note,) = report["notes"]
    assert note.startswith(f"{unpacked}: not read: the same content as {archive}")


def test_the_healthy_sample_stays_healthy_in_that_layout(tmp_path):
    case, _, _ = case_folder(tmp_path, "benign-noise-healthy", "sosreport-laptop-2024-03-04-abcdef")
    report, _, _ = analyze_json(case)
    assert report["verdict"]["status"] == "healthy", report["verdict"]
    assert report["findings"] == analyze_json(SAMPLES / "benign-noise-healthy")[0]["findings"]


def test_a_log_pasted_beside_its_sosreport_under_another_name_is_read_once(tmp_path, demo_alone):
    case = tmp_path / "case"
    shutil.copytree(SAMPLES / "demo-sosreport", case / "sosreport-pgdb02",
                    ignore=shutil.ignore_patterns("expected.json"))
    pasted = case / "from-the-customer.log"
    shutil.copy(case / "sosreport-pgdb02/var/log/messages", pasted)
    report, _, _ = analyze_json(case)
    assert _counts(report) == _counts(demo_alone)
    (note,) = report["notes"]
    assert note.startswith(f"{pasted}: not read: the same content as {case / 'sosreport-pgdb02'}")


def test_text_report_lists_the_note(tmp_path):
    case, _, archive = case_folder(tmp_path, "demo-sosreport", "sosreport-pgdb02-2024-03-19-abcdef")
    result = CliRunner().invoke(main, ["analyze", str(case)])
    assert result.exit_code == ExitCode.OK
    assert "  - medium errors reported by the disk (x3)" in result.stdout
    assert f"  note: {archive}: not read: the same content as" in result.stdout


# -- which files are the same ---------------------------------------------------------------------


def _opened(root: Path, files: dict[str, str]) -> OpenedInput:
    listed = []
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        listed.append((path, name))
    return OpenedInput(kind="folder", root=root, files=listed)


def test_a_file_named_for_what_it_is_about_is_the_same_only_under_the_same_name(tmp_path):
    first = _opened(tmp_path / "a", {"sys/block/sda/queue/scheduler": "[mq-deadline] none\n",
                                     "var/log/messages": "Mar  2 18:07:17 db1 kernel: sd 2:0:1:0: [sdb] x\n"})
    second = _opened(tmp_path / "b", {"sys/block/sdb/queue/scheduler": "[mq-deadline] none\n",
                                      "pasted.txt": "Mar  2 18:07:17 db1 kernel: sd 2:0:1:0: [sdb] x\n"})
    kept, copies = drop_copies([("a", first), ("b", second)])
    assert [path for path, _ in kept] == ["a", "b"]
    assert [name for _, name in second.files] == ["sys/block/sdb/queue/scheduler"]   # sdb's own setting stays
    (copy,) = copies
    assert (copy.path, copy.of, copy.files, copy.whole) == ("b", ["a"], 1, False)


def test_copies_inside_one_input_are_left_to_the_input(tmp_path):
    only = _opened(tmp_path / "a", {"var/log/messages": "same\n", "var/log/messages.1": "same\n"})
    other = _opened(tmp_path / "b", {"var/log/syslog": "other\n"})
    kept, copies = drop_copies([("a", only), ("b", other)])
    assert copies == [] and len(only.files) == 2 and len(kept) == 2
