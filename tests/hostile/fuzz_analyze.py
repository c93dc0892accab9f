"""Corpus-seeded fuzzing of `diagdisk analyze`: mutated sosreports in, invariants checked.

Each case starts from a real tree (samples/ and the tests/corpus cases), changes it the way damage
and strangers change sosreports (bytes, lines, numbers, names, links, special files, compression),
packs it as a folder or a tar archive (plain, gzip, xz, bzip2; sometimes cut or corrupted), runs
`diagdisk --debug analyze -o ...` in-process and checks what must always hold:

* no exception escapes (``--debug`` lets unexpected ones through, so a crash is never mistaken
  for a clean "bad input" exit);
* the exit code is one of the documented ones, and exit 2 is one line naming the problem;
* the report exists exactly when the run succeeded, whole (it parses), and says ``complete``
  exactly when the exit code is not 3;
* nothing is written outside the output path, the private temporary folders are gone, and the
  input is unchanged.

The test suite runs it for a bounded time (tests/hostile/test_hostile_fuzz.py). For a longer run,
from the repository root:

    python tests/hostile/fuzz_analyze.py --seconds 600 --save tests/hostile/regressions

A failing case is saved as a replayable fixture (an archive, or a folder packed as
``*.folder.tar``) whose name carries the seed.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import hashlib
import io
import json
import lzma
import os
import random
import re
import shutil
import sys
import tarfile
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from click.testing import CliRunner  # noqa: E402

from diagdisk.cli.main import main  # noqa: E402
from diagdisk.errors import ExitCode  # noqa: E402

DOCUMENTED_EXIT_CODES = {ExitCode.OK, ExitCode.FINDINGS, ExitCode.BAD_INPUT, ExitCode.PARTIAL,
                         ExitCode.INCONCLUSIVE}
ABSURD_NUMBERS = [b"0", b"-1", str(2**32).encode(), str(2**64).encode(), str(2**64 + 1).encode(), str(2**80).encode(),
                  b"9" * 30, b"9" * 5000, b"0x" + b"f" * 24]
SOSREPORT_PATHS = ["var/log/messages", "var/log/messages-20240101", "sos_commands/kernel/dmesg", "proc/scsi/scsi",
                   "proc/mdstat", "sos_commands/scsi/lsscsi", "sos_commands/block/lsblk_-O_-P",
                   "sos_commands/ata/smartctl_-a_.dev.sda", "smartctl/sda.json", "date", "hostname", "uname",
                   "sos_commands/md/mdadm_-D_.dev.md0", "sos_commands/multipath/multipath_-ll"]
CONTAINERS = ["folder", "tar", "tar.gz", "tar.xz", "tar.bz2"]
COMPRESSORS = {"tar": lambda data: data, "tar.gz": gzip.compress, "tar.xz": lzma.compress, "tar.bz2": bz2.compress}


@dataclass
class Member:
    path: str
    kind: str = "file"  # file, dir, symlink, hardlink, fifo, chr
    data: bytes = b""
    target: str = ""


@dataclass
class FuzzCase:
    seed: int
    members: list[Member]
    container: str
    top: str
    damage: str = "none"
    steps: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"seed{self.seed}"


def seed_trees(repo: Path = REPO) -> list[Path]:
    samples = sorted(p for p in (repo / "samples").iterdir() if (p / "expected.json").exists())
    corpus = sorted(p / "input" if (p / "input").is_dir() else p
                    for p in (repo / "tests/corpus").iterdir() if (p / "expected.json").exists())
    return samples + corpus


def load_tree(root: Path) -> list[Member]:
    members = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.name in ("expected.json", "SOURCE.md", "SOURCES.md"):
            continue
        if path.is_symlink():
            members.append(Member(relative, "symlink", target=os.readlink(path)))
        elif path.is_file():
            members.append(Member(relative, "file", path.read_bytes()))
    return members


class Mutator:
    """Builds fuzz cases from seed trees; every choice comes from one seeded random generator."""

    def __init__(self, trees: list[list[Member]]):
        self.trees = trees

    def case(self, seed: int) -> FuzzCase:
        rng = random.Random(seed)
        members = [Member(m.path, m.kind, m.data, m.target) for m in rng.choice(self.trees)]
        case = FuzzCase(seed, members, rng.choice(CONTAINERS), rng.choice(["sosreport-db1-2024", ""]))
        for _ in range(rng.randint(1, 5)):
            step = rng.choice(self.steps)
            case.steps.append(step.__name__.removeprefix("_"))
            step(self, rng, case)
        if case.container != "folder" and rng.random() < 0.25:
            case.damage = rng.choice(["truncate", "corrupt"])
            case.steps.append(f"archive {case.damage}")
        return case

    # -- content ----------------------------------------------------------------------------------

    @staticmethod
    def _pick_file(rng: random.Random, case: FuzzCase) -> Member | None:
        files = [m for m in case.members if m.kind == "file"]
        return rng.choice(files) if files else None

    def _flip_bytes(self, rng, case):
        member = self._pick_file(rng, case)
        if member and member.data:
            data = bytearray(member.data)
            for _ in range(rng.randint(1, 20)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            member.data = bytes(data)

    def _cut_file(self, rng, case):
        member = self._pick_file(rng, case)
        if member:
            member.data = member.data[: rng.randint(0, len(member.data))]

    def _shuffle_lines(self, rng, case):
        member = self._pick_file(rng, case)
        if member:
            lines = member.data.splitlines(keepends=True)
            rng.shuffle(lines)
            member.data = b"".join(lines)

    def _duplicate_lines(self, rng, case):
        member = self._pick_file(rng, case)
        if member:
            lines = member.data.splitlines(keepends=True)
            if lines:
                member.data = b"".join(line * rng.choice([1, 1, 2, 50]) for line in lines)

    def _cut_lines_mid_field(self, rng, case):
        member = self._pick_file(rng, case)
        if member:
            member.data = b"".join(line[: rng.randint(0, len(line))] + b"\n" if rng.random() < 0.3 else line
                                   for line in member.data.splitlines(keepends=True))

    def _absurd_numbers(self, rng, case, member=None):
        member = member or self._pick_file(rng, case)
        if member:
            member.data = re.sub(rb"\d+", lambda m: rng.choice(ABSURD_NUMBERS) if rng.random() < 0.2 else m.group(),
                                 member.data)

    def _odd_bytes(self, rng, case):
        member = self._pick_file(rng, case)
        if member:
            odd = rng.choice([b"\x00" * rng.randint(1, 3000), b"h\xf4te-caf\xe9", b"\r\n", b"\xff\xfe",
                              bytes(rng.randrange(256) for _ in range(200))])
            where = rng.randint(0, len(member.data))
            member.data = member.data[:where] + odd + member.data[where:]

    def _long_line(self, rng, case):
        member = self._pick_file(rng, case)
        if member:
            where = rng.randint(0, len(member.data))
            member.data = member.data[:where] + b"A" * rng.choice([70_000, 300_000]) + member.data[where:]

    def _splice_files(self, rng, case):
        first, second = self._pick_file(rng, case), self._pick_file(rng, case)
        if first and second:
            first.data = first.data[: rng.randint(0, len(first.data))] + second.data[rng.randint(0, len(second.data)):]

    def _empty_file(self, rng, case):
        member = self._pick_file(rng, case)
        if member:
            member.data = b""

    def _binary_file(self, rng, case):
        member = self._pick_file(rng, case)
        if member:
            member.data = bytes(rng.randrange(256) for _ in range(rng.randint(1, 20_000)))

    def _compress_rotation(self, rng, case):
        member = self._pick_file(rng, case)
        if member:
            packed = rng.choice([gzip.compress, lzma.compress, bz2.compress])(member.data)
            if rng.random() < 0.4:
                packed = packed[: rng.randint(0, len(packed))]
            case.members.append(Member(rng.choice(["var/log/messages-20231231", "var/log/messages.1.gz",
                                                   "var/log/kern.log.2.gz"]), "file", packed))

    def _odd_times(self, rng, case):
        member = self._pick_file(rng, case)
        if member:
            odd = rng.choice([b"Feb 30", b"Dec 31", b"Jan  1", b"99:99:99", b"0000-00-00", b"+99:99", b"[Sat Feb 31 25:61:61 0000]",
                              b"[99999999999999999999.9]", b"9999-12-31T23:59:59"])
            member.data = re.sub(rb"[A-Z][a-z]{2} +\d{1,2}|\d\d:\d\d:\d\d|\d{4}-\d\d-\d\d|[+-]\d\d:\d\d|\[[^\]]*\d\]",
                                 lambda m: odd if rng.random() < 0.3 else m.group(), member.data)

    def _add_smartctl(self, rng, case):
        """A real smartctl output (most trees carry none), damaged half the time."""
        fixtures = sorted((REPO / "tests/topology/smart/fixtures").iterdir())
        fixture = rng.choice([f for f in fixtures if f.suffix == ".json" or "smartctl" in f.name])
        path = "smartctl/sdb.json" if fixture.suffix == ".json" else "sos_commands/ata/smartctl_-x_.dev.sdb"
        case.members.append(Member(path, "file", fixture.read_bytes()))
        if rng.random() < 0.5:
            (self._json_types if fixture.suffix == ".json" else self._absurd_numbers)(rng, case, case.members[-1])

    def _json_types(self, rng, case, member=None):
        documents = [m for m in case.members if m.kind == "file" and m.data.lstrip().startswith(b"{")]
        if member is None and not documents:
            return
        member = member or rng.choice(documents)
        try:
            document = json.loads(member.data)
        except ValueError:
            return
        for _ in range(rng.randint(1, 4)):
            node = document
            while isinstance(node, (dict, list)) and node:
                key = rng.choice(sorted(node) if isinstance(node, dict) else range(len(node)))
                if not isinstance(node[key], (dict, list)) or rng.random() < 0.2:
                    node[key] = rng.choice([None, True, -1, 2**80, 1.5, "", "many", [], {}, [None], {"x": []}])
                    break
                node = node[key]
        member.data = json.dumps(document).encode()

    # -- names and kinds --------------------------------------------------------------------------

    def _rename(self, rng, case):
        member = self._pick_file(rng, case)
        if member:
            member.path = rng.choice(SOSREPORT_PATHS)

    def _hostile_name(self, rng, case):
        name = rng.choice(["../escape", "../../etc/cron.d/x", "/etc/passwd", "var/log/../../../up",
                           "./var/./log/messages", "var//log//messages", "a" * 300, "sp ace/\u00e9\u2603"])
        case.members.append(Member(name, "file", b"Jan  1 00:00:00 db1 kernel: sd 0:0:0:0: [sda] hostile\n"))

    def _hostile_link(self, rng, case):
        path = rng.choice(SOSREPORT_PATHS)
        target = rng.choice(["/etc/passwd", "../../../../etc/shadow", ".", "..", path, "var", "nowhere",
                             "var/log/messages", "sos_commands"])
        case.members = [m for m in case.members if m.path != path]
        case.members.append(Member(path, rng.choice(["symlink", "hardlink"]), target=target))

    def _special_file(self, rng, case):
        case.members.append(Member(rng.choice(SOSREPORT_PATHS), rng.choice(["fifo", "chr"])))

    def _duplicate_member(self, rng, case):
        member = self._pick_file(rng, case)
        if member:
            case.members.append(Member(member.path, "file", member.data[::-1]))

    def _nested_archive(self, rng, case):
        inner = io.BytesIO()
        with tarfile.open(fileobj=inner, mode="w:gz") as tar:
            for member in case.members[:5]:
                if member.kind == "file":
                    info = tarfile.TarInfo(member.path)
                    info.size = len(member.data)
                    tar.addfile(info, io.BytesIO(member.data))
        if rng.random() < 0.5:
            case.members = []
        case.members.append(Member("sosreport-inner.tar.gz", "file", inner.getvalue()))

    def _many_rotations(self, rng, case):
        line = b"Jan  1 00:00:01 db1 kernel: sd 0:0:1:0: [sdb] tag#1 Sense Key : Medium Error [current]\n"
        for index in range(rng.randint(50, 400)):
            case.members.append(Member(f"var/log/messages-{20200101 + index}", "file", line))

    steps = [_flip_bytes, _cut_file, _shuffle_lines, _duplicate_lines, _cut_lines_mid_field, _absurd_numbers,
             _odd_bytes, _long_line, _splice_files, _empty_file, _binary_file, _compress_rotation, _odd_times,
             _json_types, _add_smartctl, _rename,
             _hostile_name, _hostile_link, _special_file, _duplicate_member, _nested_archive, _many_rotations]


# -- packing -------------------------------------------------------------------------------------


def pack_tar(case: FuzzCase) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for member in case.members:
            name = member.path if member.path.startswith(("/", "..")) or not case.top else f"{case.top}/{member.path}"
            info = tarfile.TarInfo(name)
            if member.kind == "file":
                info.size = len(member.data)
                tar.addfile(info, io.BytesIO(member.data))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE,
                         "fifo": tarfile.FIFOTYPE, "chr": tarfile.CHRTYPE}[member.kind]
            info.linkname = member.target if member.kind == "symlink" or not case.top else f"{case.top}/{member.target}"
            tar.addfile(info)
    return buffer.getvalue()


def materialize(case: FuzzCase, where: Path) -> Path:
    """Write the case under ``where``; returns the path to give to `diagdisk analyze`."""
    if case.container == "folder":
        root = where / (case.top or "input")
        root.mkdir(parents=True)
        for member in case.members:
            target = (root / member.path.lstrip("/"))
            if not target.resolve().is_relative_to(root.resolve()) or len(target.name) > 255:
                continue  # a folder cannot hold what only an archive can name
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists() or target.is_symlink():
                if target.is_dir() and not target.is_symlink():
                    continue
                target.unlink()
            if member.kind == "file":
                target.write_bytes(member.data)
            elif member.kind == "symlink":
                target.symlink_to(member.target)
            elif member.kind == "hardlink":
                source = root / member.target
                if source.is_file() and not source.is_symlink():
                    os.link(source, target)
            elif member.kind == "fifo":
                os.mkfifo(target)
        return root
    data = COMPRESSORS[case.container](pack_tar(case))
    if case.damage == "truncate":
        data = data[: random.Random(case.seed).randint(0, len(data))]
    elif case.damage == "corrupt" and data:
        rng = random.Random(case.seed)
        damaged = bytearray(data)
        start = rng.randrange(len(damaged))
        damaged[start : start + 64] = bytes(rng.randrange(256) for _ in range(64))
        data = bytes(damaged)
    archive = where / f"sosreport.{case.container}"
    archive.write_bytes(data)
    return archive


def save_fixture(case: FuzzCase, input_path: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if input_path.is_dir():
        fixture = folder / f"{case.name}.folder.tar"
        with tarfile.open(fixture, "w") as tar:
            tar.add(input_path, arcname=input_path.name)
    else:
        fixture = folder / f"{case.name}.{case.container}"
        shutil.copyfile(input_path, fixture)
    return fixture


# -- checking ------------------------------------------------------------------------------------


def _fingerprint(path: Path) -> dict[str, str]:
    paths = [path] if not path.is_dir() else sorted(path.rglob("*"))
    prints = {}
    for item in paths:
        if item.is_symlink():
            prints[str(item)] = "-> " + os.readlink(item)
        elif item.is_file():
            prints[str(item)] = hashlib.sha256(item.read_bytes()).hexdigest()
        else:
            prints[str(item)] = "special" if not item.is_dir() else "dir"
    return prints


_SEVERITIES = ("info", "low", "medium", "high", "critical")


def _has_finding_at(document: dict, fail_on: str) -> bool:
    return any(_SEVERITIES.index(f["severity"]) >= _SEVERITIES.index(fail_on) for f in document["findings"])


def check_run(input_path: Path, sandbox: Path, output_format: str = "json",
              fail_on: str | None = None) -> tuple[int | None, list[str]]:
    """Run `diagdisk --debug analyze` on ``input_path``: its exit code (None for a crash) and the
    problems found (none when everything that must hold holds)."""
    scratch = sandbox / "tmp"
    out = sandbox / "out"
    scratch.mkdir(exist_ok=True)
    out.mkdir(exist_ok=True)
    report = out / f"report.{output_format}"
    before = _fingerprint(input_path)
    outside_before = {p for p in sandbox.rglob("*") if not p.is_relative_to(out) and not p.is_relative_to(scratch)}
    saved_tempdir = tempfile.tempdir
    tempfile.tempdir = str(scratch)
    try:
        args = ["--debug", "analyze", str(input_path), "--format", output_format, "-o", str(report)]
        result = CliRunner().invoke(main, args + (["--fail-on", fail_on] if fail_on else []))
    finally:
        tempfile.tempdir = saved_tempdir
    problems = []
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        problems.append("crash: " + "".join(traceback.format_exception(result.exception)).strip())
        return None, problems
    code = result.exit_code
    stderr = result.stderr.strip().splitlines()
    if code not in DOCUMENTED_EXIT_CODES:
        problems.append(f"undocumented exit code {code}")
    if code == ExitCode.BAD_INPUT:
        if len(stderr) != 1 or not stderr[0].startswith("diagdisk: error: "):
            problems.append(f"exit 2 without one error line: {result.stderr!r}")
        if report.exists():
            problems.append("a report was written by a failed run")
    elif report.exists():
        text = report.read_text()
        if output_format == "json":
            (document,) = json.loads(text)["reports"]
            expected = {ExitCode.OK: True, ExitCode.PARTIAL: False}.get(code, document.get("complete"))
            if document.get("complete") is not expected:
                problems.append(f"exit {code} but complete={document.get('complete')}")
            if (code == ExitCode.INCONCLUSIVE) != (fail_on is not None and not _has_finding_at(document, fail_on)
                                                   and document["verdict"]["status"] == "inconclusive"):
                problems.append(f"exit {code} with --fail-on {fail_on} and verdict {document['verdict']['status']}")
        elif output_format == "html" and not text.rstrip().endswith("</html>"):
            problems.append("html report not whole")
    else:
        problems.append(f"exit {code} and no report")
    if "Traceback" in result.output:
        problems.append("a traceback was printed")
    if "internal error" in result.output:
        problems.append("an internal error was reported")
    if any(scratch.iterdir()):
        problems.append(f"temporary files left: {sorted(p.name for p in scratch.iterdir())}")
    if [p.name for p in out.iterdir()] not in ([], [report.name]):
        problems.append(f"unexpected files in the output folder: {sorted(p.name for p in out.iterdir())}")
    outside_after = {p for p in sandbox.rglob("*") if not p.is_relative_to(out) and not p.is_relative_to(scratch)}
    if outside_after != outside_before:
        problems.append(f"written outside the output path: {sorted(map(str, outside_after ^ outside_before))}")
    if _fingerprint(input_path) != before:
        problems.append("the input changed")
    return code, problems


def run_case(case: FuzzCase, workdir: Path) -> tuple[int | None, list[str], Path]:
    sandbox = workdir / case.name
    sandbox.mkdir()
    (sandbox / "in").mkdir()
    input_path = materialize(case, sandbox / "in")
    rng = random.Random(case.seed)
    code, problems = check_run(input_path, sandbox, rng.choice(["json", "json", "json", "text", "html"]),
                               rng.choice([None, None, "high"]))
    return code, problems, input_path


def fuzz(seconds: float, first_seed: int, workdir: Path, save: Path | None = None,
         on_case=None) -> list[tuple[FuzzCase, list[str], Path | None]]:
    """Run cases from ``first_seed`` on for about ``seconds``; the failing ones with their problems."""
    mutator = Mutator([load_tree(tree) for tree in seed_trees()])
    failures = []
    deadline = time.monotonic() + seconds
    seed = first_seed
    while time.monotonic() < deadline:
        case = mutator.case(seed)
        code, problems, input_path = run_case(case, workdir)
        if on_case:
            on_case(case, code, problems)
        if problems:
            fixture = save_fixture(case, input_path, save) if save else None
            failures.append((case, problems, fixture))
        shutil.rmtree(workdir / case.name, ignore_errors=True)
        seed += 1
    return failures


def main_cli(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=None, help="first seed (default: random)")
    parser.add_argument("--save", type=Path, default=None, help="save failing inputs here as fixtures")
    args = parser.parse_args(argv)
    first_seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    exit_codes: Counter = Counter()

    def progress(case: FuzzCase, code: int | None, problems: list[str]) -> None:
        exit_codes[code] += 1
        if problems:
            print(f"FAIL {case.name} ({', '.join(case.steps)}, {case.container}):\n  " + "\n  ".join(problems),
                  flush=True)

    with tempfile.TemporaryDirectory(prefix="diagdisk-fuzz-") as workdir:
        failures = fuzz(args.seconds, first_seed, Path(workdir), args.save, progress)
    print(f"{sum(exit_codes.values())} cases from seed {first_seed}, {len(failures)} failing; exit codes "
          f"{dict(sorted(exit_codes.items(), key=str))}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main_cli())
