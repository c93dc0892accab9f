"""One time grammar for every time option: analyze and events --since/--until, collect --since
and fleet --since take the same forms (as the logs write times, @EPOCH, or a span such as 30d)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from diagdisk.cli.collect import parse_since
from diagdisk.cli.fleet import _since as fleet_since
from diagdisk.cli.main import main

DEMO = Path(__file__).resolve().parents[2] / "samples" / "demo-sosreport"   # report date Mar 20 10:05:12 2024 UTC
FORMS = ["2024-03-16", "2024-03-16 00:00", "2024-03-16T00:00:00+00:00", "Mar 16", "Mar 16 00:00:00",
         "Sat Mar 16 00:00:00 2024", "@1710547200", "30d", "12h", "90m", "2w"]


@pytest.mark.parametrize("form", FORMS)
def test_every_time_option_takes_every_form(form):
    now = datetime(2024, 3, 20, 10, 5, 12, tzinfo=timezone.utc)
    assert isinstance(parse_since(form, now), datetime)
    assert datetime.fromisoformat(fleet_since(form))
    result = CliRunner().invoke(main, ["analyze", str(DEMO), "--since", form, "--brief"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("bad", ["yesterday", "2024-13-01", "Mar 32", "25:00", "30x"])
def test_every_time_option_refuses_the_same_non_times(bad):
    now = datetime(2024, 3, 20, tzinfo=timezone.utc)
    with pytest.raises(click.BadParameter):
        parse_since(bad, now)
    with pytest.raises(click.BadParameter):
        fleet_since(bad)
    assert CliRunner().invoke(main, ["analyze", str(DEMO), "--since", bad]).exit_code == 2


def test_a_span_counts_back_from_the_report_date_for_an_input_and_from_now_when_collecting():
    def window(since: str) -> dict:
        result = CliRunner().invoke(main, ["analyze", str(DEMO), "--since", since, "--format", "json"])
        return json.loads(result.stdout)["reports"][0]["coverage"]["window"]
    assert window("4d")["since"] == "2024-03-16T10:05:12+00:00"
    assert window("90m")["since"] == "2024-03-20T08:35:12+00:00"
    now = datetime(2026, 11, 21, 12, 0, tzinfo=timezone.utc)
    assert parse_since("2w", now) == datetime(2026, 11, 7, 12, 0, tzinfo=timezone.utc)
    assert parse_since("@1710547200", now) == datetime(2024, 3, 16, tzinfo=timezone.utc)
    assert parse_since("Mar 16 2024", now) == datetime(2024, 3, 16).astimezone()   # the live host's local time
    assert fleet_since("2024-03-16 08:00") == "2024-03-16T08:00:00"
