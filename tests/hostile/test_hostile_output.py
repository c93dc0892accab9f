"""Writing a report: never over the input, never half-written."""

from __future__ import annotations

import pytest

from diagdisk.errors import InputError
from diagdisk.inputs.safeio import atomic_write, atomic_writer


def leftovers(folder):
    return sorted(path.name for path in folder.iterdir() if path.name.endswith(".tmp"))


def test_atomic_write_replaces_the_destination(tmp_path):
    report = tmp_path / "report.json"
    report.write_text("old")
    atomic_write(report, '{"schema": "diagdisk.report/1"}')
    assert report.read_text() == '{"schema": "diagdisk.report/1"}'
    atomic_write(report, b"\x00binary")
    assert report.read_bytes() == b"\x00binary"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("alias", ["same", "hardlink", "symlink", "dotted"])
def test_refuses_to_overwrite_the_input(tmp_path, alias):
    source = tmp_path / "sosreport.tar.xz"
    source.write_bytes(b"original")
    destination = {
        "same": source,
        "hardlink": tmp_path / "hard",
        "symlink": tmp_path / "soft",
        "dotted": tmp_path / "." / "sosreport.tar.xz",
    }[alias]
    if alias == "hardlink":
        destination.hardlink_to(source)
    if alias == "symlink":
        destination.symlink_to(source)
    with pytest.raises(InputError) as caught:
        atomic_write(destination, "report", refuse=[source])
    assert "refusing to overwrite the input" in caught.value.one_line()
    assert source.read_bytes() == b"original"
    assert leftovers(tmp_path) == []


def test_refuses_to_write_inside_an_input_folder(tmp_path):
    sosreport = tmp_path / "sosreport-db1"
    sosreport.mkdir()
    with pytest.raises(InputError, match="refusing to write inside the input folder"):
        atomic_write(sosreport / "report.html", "x", refuse=[sosreport])
    assert list(sosreport.iterdir()) == []


@pytest.mark.parametrize("failure", [RuntimeError("renderer crashed"), KeyboardInterrupt()])
def test_failed_writer_leaves_no_partial_report(tmp_path, failure):
    report = tmp_path / "report.html"
    report.write_text("previous complete report")
    with pytest.raises(type(failure)):
        with atomic_writer(report) as handle:
            handle.write("<html>half of it")
            raise failure
    assert report.read_text() == "previous complete report"
    assert leftovers(tmp_path) == []
    fresh = tmp_path / "fresh.json"
    with pytest.raises(RuntimeError):
        with atomic_writer(fresh) as handle:
            handle.write("{")
            raise RuntimeError
    assert not fresh.exists()


def test_unwritable_destinations_are_one_line_input_errors(tmp_path):
    with pytest.raises(InputError) as caught:
        atomic_write(tmp_path / "missing-folder" / "report.json", "x")
    assert caught.value.one_line() == f"{tmp_path / 'missing-folder' / 'report.json'}: cannot write: no such file or directory"
    with pytest.raises(InputError, match="is a directory"):
        atomic_write(tmp_path, "x")


def test_new_report_gets_ordinary_permissions(tmp_path):
    report = tmp_path / "report.txt"
    atomic_write(report, "x")
    assert report.stat().st_mode & 0o600 == 0o600
