"""The HTML banner of a report with performance data alone names the performance verdict, not
"No verdict", and its coverage says that no kernel log was given."""

from __future__ import annotations

from click.testing import CliRunner

from diagdisk.cli.main import main

from diagnosis.test_performance_verdict import slow_member_files
from html_dom import parse


def test_the_html_banner_says_slow_member(tmp_path):
    result = CliRunner().invoke(main, ["analyze", *map(str, slow_member_files(tmp_path)), "--format", "html"])
    assert result.exit_code == 0, result.output
    page = parse(result.stdout)
    assert page.by_id("verdict-title").words() == "Slow member"
    assert page.by_id("verdict-summary").words().startswith("sdc ")
    assert "No kernel log was given." in page.by_id("coverage-kernel").words()
