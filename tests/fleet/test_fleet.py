"""diagdisk fleet: the same results as each input analysed alone, on a real Dask LocalCluster or
serially, whatever the order and the number of workers; resumable; one bad input never stops it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import require_fleet_extra

from diagdisk import __version__
from diagdisk.cli.main import main
from diagdisk.errors import ExitCode

pytestmark = pytest.mark.usefixtures("fleet_extra")


@pytest.fixture(scope="session")
def fleet_extra():
    require_fleet_extra()


@pytest.fixture(scope="module")
def cluster():
    """A real dask.distributed LocalCluster: 2 worker processes, loopback only."""
    require_fleet_extra()
    import dask
    from distributed import Client, LocalCluster
    dask.config.set({"distributed.scheduler.allowed-failures": 1})
    local = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                         dashboard_address="127.0.0.1:0")
    client = Client(local)
    yield client
    client.close()
    local.close()


class SharedClusterExecutor:
    """The DaskExecutor on the module's cluster, which outlives each run."""

    def __init__(self, client):
        from diagdisk.fleet.run import DaskExecutor
        self.inner = DaskExecutor(client=client)

    def run(self, tasks):
        return self.inner.run(tasks)

    def close(self):
        pass


def run(paths, out, executor=None, **options):
    from diagdisk.fleet.run import FleetOptions, Progress, run_fleet
    return run_fleet([str(p) for p in paths], out, FleetOptions(**options), executor_factory=executor,
                     progress=Progress(0, enabled=False))


def tables(out: Path):
    import pandas as pd
    return pd.read_parquet(out / "fleet.parquet"), pd.read_parquet(out / "suspects.parquet")


def fleet_paths(root: Path) -> list[Path]:
    return [root / "uploads", root / "unpacked", root / "logserver"]


@pytest.fixture(scope="module")
def serial(fleet_inputs, tmp_path_factory):
    out = tmp_path_factory.mktemp("serial")
    summary = run(fleet_paths(fleet_inputs), out)
    return out, summary


def test_serial_run_analyses_every_input_and_records_the_bad_ones(serial, fleet_inputs):
    out, summary = serial
    fleet, suspects = tables(out)
    # 7 archives (2 bad) + 3 folders + 2 hosts of the log server
    assert summary.total == len(fleet) == 12
    assert (summary.analysed, summary.failed, summary.skipped) == (10, 2, 0)
    failed = fleet[fleet.outcome == "failed"].set_index("input")
    assert sorted(Path(p).name for p in failed.index) == ["sosreport-broken-2024-03-01-zzzzz.tar.gz",
                                                          "sosreport-notatar-2024-03-01-yyyyy.tar.xz"]
    assert all(reason and "\n" not in reason for reason in failed.failure_reason)
    assert "not a tar archive" in failed.failure_reason[str(fleet_inputs / "uploads/sosreport-notatar-2024-03-01-yyyyy.tar.xz")]
    hosts = set(fleet[fleet.outcome == "analysed"].host)
    assert {"pgdb02", "ws-build7", "app-web4", "store01", "db-sas01", "backup03", "web1", "web2"} <= hosts
    # the two nightly bundles of store01: two rows, one content hash, one report
    store = fleet[fleet.host == "store01"]
    assert len(store) == 2 and store.content_hash.nunique() == 1
    assert summary.notes and "README.txt" in summary.notes[0]
    assert set(suspects.input) <= set(fleet.input)


def test_each_report_is_what_analyze_gives_for_that_input_alone(serial):
    out, _ = serial
    fleet, _ = tables(out)
    # inputs that are one path (not a log server's folder split by host)
    analysed = fleet[(fleet.outcome == "analysed") & fleet.input.map(lambda p: Path(p).exists())]
    assert len(analysed) == 8
    for row in analysed.itertuples():
        fleet_report = json.loads((out / row.report_file).read_text())
        result = CliRunner().invoke(main, ["analyze", row.input, "--format", "json", "-j", "1"])
        (alone,) = json.loads(result.stdout)["reports"]
        fleet_report.pop("generated"), alone.pop("generated")
        # inputs of one content (a bundle copied under two names) share the report of the first
        same_content = sorted(fleet.input[fleet.content_hash == row.content_hash])
        assert fleet_report.pop("input") == same_content[0]
        assert alone.pop("input") == row.input
        assert fleet_report == alone, row.input
        assert row.verdict == alone["verdict"]["status"]
        assert Path(row.report_file).name.startswith(f"{row.host}_{str(row.report_date)[:10]}_{row.content_hash[:12]}")


def test_a_local_cluster_gives_the_serial_tables(serial, fleet_inputs, cluster, tmp_path):
    import pandas.testing
    out = tmp_path / "dask"
    summary = run(fleet_paths(fleet_inputs), out, executor=lambda: SharedClusterExecutor(cluster))
    assert (summary.analysed, summary.failed) == (10, 2)
    for mine, theirs in zip(tables(out), tables(serial[0])):
        pandas.testing.assert_frame_equal(mine, theirs)
    for report in (serial[0] / "reports").glob("*.json"):
        expected = json.loads(report.read_text())
        got = json.loads((out / "reports" / report.name).read_text())
        expected.pop("generated"), got.pop("generated")
        assert got == expected


def test_other_order_and_one_worker_give_the_same_tables(serial, fleet_inputs, tmp_path):
    import pandas.testing

    from diagdisk.fleet.run import DaskExecutor
    out = tmp_path / "reordered"
    uploads = sorted((p for p in (fleet_inputs / "uploads").iterdir() if p.suffix != ".txt"), reverse=True)
    paths = [fleet_inputs / "logserver", *sorted((fleet_inputs / "unpacked").iterdir(), reverse=True), *uploads]
    summary = run(paths, out, executor=lambda: DaskExecutor(workers=1))
    assert summary.total == 12
    mine, theirs = tables(out), tables(serial[0])
    for a, b in zip(mine, theirs):
        pandas.testing.assert_frame_equal(a, b)


def test_a_second_run_skips_what_was_analysed_and_force_does_it_again(fleet_inputs, tmp_path):
    import pandas.testing
    out = tmp_path / "resume"
    half = sorted((fleet_inputs / "unpacked").iterdir())[:2]
    first = run(half, out)
    assert (first.analysed, first.skipped) == (2, 0)
    # a run stopped after two inputs continues: those two are skipped, the rest analysed
    second = run([fleet_inputs / "unpacked"], out)
    assert (second.analysed, second.skipped) == (1, 2)
    before = tables(out)
    third = run([fleet_inputs / "unpacked"], out)
    assert (third.analysed, third.skipped) == (0, 3)
    for a, b in zip(tables(out), before):
        pandas.testing.assert_frame_equal(a, b)
    forced = run([fleet_inputs / "unpacked"], out, force=True)
    assert (forced.analysed, forced.skipped) == (3, 0)
    # a state file of another diagdisk version does not count
    state = next((out / "state").glob("*.json"))
    data = json.loads(state.read_text())
    data["diagdisk_version"] = "0.0.0-other"
    state.write_text(json.dumps(data))
    again = run([fleet_inputs / "unpacked"], out)
    assert (again.analysed, again.skipped) == (1, 2)


def test_html_writes_each_report_page_and_since_leaves_out_older_inputs(fleet_inputs, tmp_path):
    out = tmp_path / "html"
    summary = run([fleet_inputs / "unpacked"], out, html=True, since="2024-04-01")
    fleet, _ = tables(out)
    # db-sas01 (2024-03-20) is before; backup03 (2024-06) and the undated seed004 (the files' time) are kept
    assert summary.excluded == 1
    excluded = fleet[fleet.outcome == "excluded"]
    assert list(excluded.host) == ["db-sas01"] and excluded.report_file.isna().all()
    for row in fleet[fleet.outcome == "analysed"].itertuples():
        assert (out / row.report_file).with_suffix(".html").exists()


def test_per_input_memory_limit_fails_those_inputs_and_the_run_goes_on(fleet_inputs, tmp_path):
    out = tmp_path / "tiny-memory"
    summary = run([fleet_inputs / "unpacked"], out, memory_bytes=48 << 20)
    fleet, _ = tables(out)
    assert summary.failed == 3 and (fleet.outcome == "failed").all()
    assert all(("memory" in reason or "died" in reason) for reason in fleet.failure_reason)
    assert (out / "fleet.html").exists()


def test_tables_are_rewritten_every_n_inputs(fleet_inputs, tmp_path, monkeypatch):
    from diagdisk.fleet import run as run_module
    written = []
    real = run_module.write_tables
    monkeypatch.setattr(run_module, "write_tables", lambda out, rows, suspects: (written.append(len(rows)),
                                                                               real(out, rows, suspects)))
    run([fleet_inputs / "unpacked", fleet_inputs / "logserver"], tmp_path / "checkpoints", checkpoint_every=2)
    assert written == [2, 4, 5]


def test_the_fleet_command_writes_everything_and_exits_3_when_inputs_failed(fleet_inputs, tmp_path):
    out = tmp_path / "cli"
    result = CliRunner().invoke(main, ["fleet", str(fleet_inputs / "uploads"), "-o", str(out), "--workers", "2"])
    assert result.exit_code == ExitCode.PARTIAL, result.stderr
    assert "7 inputs: 5 analysed, 0 already analysed, 2 failed" in result.stderr
    assert {p.name for p in out.iterdir()} == {"fleet.csv", "fleet.parquet", "suspects.parquet", "cohorts.parquet",
                                               "fleet.html", "reports", "state"}
    import pandas as pd
    csv = pd.read_csv(out / "fleet.csv")
    assert len(csv) == 7 and set(csv.diagdisk_version) == {__version__}


def test_the_fleet_refuses_to_write_into_an_input(fleet_inputs):
    result = CliRunner().invoke(main, ["fleet", str(fleet_inputs / "unpacked"), "-o", str(fleet_inputs / "unpacked" / "out")])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "refusing to write inside the input folder" in result.stderr
    assert not (fleet_inputs / "unpacked" / "out").exists()


def test_docs_describe_every_column():
    from diagdisk.fleet.cohorts import COHORT_FIELDS
    from diagdisk.fleet.tables import COHORT_COLUMNS, FLEET_COLUMNS, SUSPECT_COLUMNS
    doc = (Path(__file__).resolve().parents[2] / "docs" / "fleet.md").read_text()
    for name, _, _ in FLEET_COLUMNS + SUSPECT_COLUMNS + COHORT_COLUMNS:
        assert f"`{name}`" in doc, name
    assert [name for name, _, _ in COHORT_COLUMNS] == COHORT_FIELDS
    assert "`events_<kind>`" in doc


def test_a_worker_that_dies_is_replaced_and_its_input_tried_once_more_then_failed(tmp_path):
    """The input blocks its worker (hashing a pipe nobody writes); that worker is killed, Dask gives
    the input to a worker once more, that one is killed too: the input fails, the run does not."""
    require_fleet_extra()
    import signal
    import time

    import dask
    from distributed import Client, LocalCluster

    from diagdisk.fleet.run import DaskExecutor
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    dask.config.set({"distributed.scheduler.allowed-failures": 1})
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as local, Client(local) as client:
        executor = DaskExecutor(client=client)
        spec = [{"path": str(fifo), "kind": "file", "files": None, "identity": None}]
        results = executor.run([(0, (spec, {"timeout": 600}, frozenset(), False))])
        killed = []

        def kill_the_worker_running_it():
            deadline = time.monotonic() + 120
            while len(killed) < 2 and time.monotonic() < deadline:
                busy = [address for address, keys in client.processing().items() if keys]
                if busy:
                    pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
                    if pid not in killed:
                        time.sleep(0.5)  # let it start the task
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                time.sleep(0.2)

        import threading
        killer = threading.Thread(target=kill_the_worker_running_it, daemon=True)
        killer.start()
        index, result = next(results)
        results.close()
        killer.join(timeout=30)
    assert (index, result["status"]) == (0, "failed")
    assert result["reason"] in ("its worker died twice while analysing it (see the worker logs)",
                                "its workers died while analysing it (see the worker logs)")
    # Dask counts a death whenever a worker holding the task dies, also while the killed one's
    # nanny restarts it under load, so the second death need not be one of ours
    assert 1 <= len(killed) <= 2
