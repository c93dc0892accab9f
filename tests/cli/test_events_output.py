"""`diagdisk events` JSON Lines a tool and a person can read: '/' as itself, times to the microsecond
a log stamp carries, and a --format option that says what each format is."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from diagdisk.cli.main import main

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "md-raid1-degraded-sdb"


def test_events_json_lines_write_slashes_plainly_and_times_to_the_microsecond():
    result = CliRunner().invoke(main, ["events", str(SAMPLE)])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines and "\\/" not in result.stdout
    records = [json.loads(line) for line in lines]
    assert records[0]["source"] == "sos_commands/kernel/dmesg"
    for line, record in zip(lines, records):
        shown = re.search(r'"t":(-?[0-9.e+-]+)', line).group(1)
        assert len(shown.partition(".")[2]) <= 6, shown
        assert abs(record["t"] - round(record["t"], 6)) < 1e-9
    # the uptimes dmesg printed, exactly: [1883997.596310] is 1883997.59631
    assert any(record["t"] == 1883997.59631 for record in records)
    assert all(isinstance(record["line"], int) for record in records)


def test_events_format_option_says_what_each_format_is():
    help_text = CliRunner().invoke(main, ["events", "--help"]).output
    option = help_text[help_text.index("--format"):help_text.index("--since")]
    assert "JSON Lines" in option and "csv" in option and "header" in option
