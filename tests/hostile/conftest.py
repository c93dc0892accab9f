"""Fixtures for the hostile-input tests."""

from __future__ import annotations

import tempfile

import pytest


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A private TMPDIR, so a test can see that the extraction folder is created there and removed."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder
