"""The same kernel message in messages, the journal and dmesg is counted once (diagdisk/dedup.py)."""

from diagdisk.diagnosis.analysis import analyze
from diagdisk.report.build import build_report
from diagdisk.diagnosis.engine import evaluate_rules, load_rules

SENSE = "sd 2:0:1:0: [sdb] tag#{tag} Sense Key : Medium Error [current]"


def _tree(tmp_path, files: dict[str, str]):
    root = tmp_path / "sosreport"
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    (root / "date").write_text("Sat Mar  2 20:00:00 UTC 2024\n")
    return root


def _sense_count(root) -> tuple[int, dict]:
    analysis = analyze([str(root)], jobs=1)
    report = build_report(analysis, *evaluate_rules(load_rules(), analysis))
    rows = [r for r in report["event_summary"] if r["kind"] == "sense"]
    return sum(r["count"] for r in rows), {s["path"]: s for s in report["sources"]}


def _syslog(times: list[str]) -> str:
    return "".join(f"Mar  2 {t} db1 kernel: {SENSE.format(tag=i)}\n" for i, t in enumerate(times))


def test_dmesg_with_wall_clock_and_messages_count_each_error_once(tmp_path):
    times = ["18:07:17", "18:07:19", "18:09:00"]
    dmesg = "".join(f"[Sat Mar  2 {t} 2024] {SENSE.format(tag=i)}\n" for i, t in enumerate(times))
    root = _tree(tmp_path, {"var/log/messages": _syslog(times), "sos_commands/kernel/dmesg_-T": dmesg})
    count, sources = _sense_count(root)
    assert count == 3
    assert sources["sos_commands/kernel/dmesg_-T"]["events"] == 0
    # nothing is wrong with the input: a note, not a warning
    assert any("counted once" in n for n in sources["sos_commands/kernel/dmesg_-T"]["notes"])
    assert not any("counted once" in w for w in sources["sos_commands/kernel/dmesg_-T"]["warnings"])
    assert sources["var/log/messages"]["events"] == 3


def test_dmesg_with_uptime_is_placed_in_time_by_what_it_shares(tmp_path):
    # boot at 18:00:00: uptime 437 s is 18:07:17
    times = ["18:07:17", "18:07:19", "18:09:00", "18:12:30"]
    uptimes = [437.25, 439.5, 540.0, 750.1]
    dmesg = "".join(f"[{u:12.6f}] {SENSE.format(tag=i)}\n" for i, u in enumerate(uptimes))
    other = "".join(f"[{u:12.6f}] sd 2:0:2:0: [sdc] tag#9 Sense Key : Hardware Error [current]\n" for u in (600.0, 601.0))
    syslog_other = "Mar  2 18:10:00 db1 kernel: sd 2:0:2:0: [sdc] tag#9 Sense Key : Hardware Error [current]\n" \
                   "Mar  2 18:10:01 db1 kernel: sd 2:0:2:0: [sdc] tag#9 Sense Key : Hardware Error [current]\n"
    root = _tree(tmp_path, {"var/log/messages": _syslog(times) + syslog_other, "sos_commands/kernel/dmesg": dmesg + other})
    count, sources = _sense_count(root)
    assert count == 4 + 2


def test_two_errors_in_one_second_stay_two_when_dmesg_holds_one(tmp_path):
    root = _tree(tmp_path, {
        "var/log/messages": _syslog(["18:07:17", "18:07:17"]),
        "sos_commands/kernel/dmesg_-T": f"[Sat Mar  2 18:07:17 2024] {SENSE.format(tag=0)}\n"})
    assert _sense_count(root)[0] == 2


def test_what_only_dmesg_saw_still_counts(tmp_path):
    # syslog stopped at 18:07:19; dmesg goes on (a full /var, a hung rsyslog)
    dmesg = "".join(f"[Sat Mar  2 {t} 2024] {SENSE.format(tag=i)}\n"
                    for i, t in enumerate(["18:07:17", "18:07:19", "19:30:00", "19:31:00"]))
    root = _tree(tmp_path, {"var/log/messages": _syslog(["18:07:17", "18:07:19"]),
                            "sos_commands/kernel/dmesg_-T": dmesg})
    assert _sense_count(root)[0] == 4


def test_a_journal_beside_messages_counts_once(tmp_path):
    journal = "".join(f"2024-03-02T{t}+0000 db1 kernel: {SENSE.format(tag=i)}\n"
                      for i, t in enumerate(["18:07:17", "18:07:19"]))
    root = _tree(tmp_path, {"var/log/messages": _syslog(["18:07:17", "18:07:19"]),
                            "sos_commands/logs/journalctl_--no-pager": journal})
    assert _sense_count(root)[0] == 2


def test_rotations_of_one_log_are_never_copies_of_each_other(tmp_path):
    root = _tree(tmp_path, {"var/log/messages": _syslog(["18:07:17"]), "var/log/messages-20240301": _syslog(["18:07:17"])})
    assert _sense_count(root)[0] == 2


def test_the_boot_prints_of_the_journal_beside_the_whole_one_count_once(tmp_path):
    journal = "".join(f"2024-03-02T{t}+0000 db1 kernel: {SENSE.format(tag=i)}\n"
                      for i, t in enumerate(["18:07:17", "18:07:19"]))
    root = _tree(tmp_path, {"sos_commands/logs/journalctl_--no-pager": journal,
                            "sos_commands/logs/journalctl_--no-pager_--boot": journal,
                            "sos_commands/logs/journalctl_--no-pager_--boot_-1": journal.splitlines(True)[0]})
    count, sources = _sense_count(root)
    assert count == 2
    assert sources["sos_commands/logs/journalctl_--no-pager"]["events"] == 2
