"""Measure diagdisk end to end against insights-core and grep on generated /var/log/messages.

    python benchmarks/run.py                      # 100M typical + 100M storm
    python benchmarks/run.py --sizes 1G           # the full run the targets are stated for
    python benchmarks/run.py --engines            # prefilter engines on the same files, in-process
    python benchmarks/run.py --engine python      # diagdisk with the other prefilter engine

diagdisk is the default install (`pip install .`: .venv made by quickstart.py, else this Python)
with the prefilter engine it picks by itself (hyperscan where its wheels exist); `--engine`
chooses one through DIAGDISK_PREFILTER. The engine used is printed with the figures.

For each (size, mix) the log is generated once (cached under benchmarks/.cache by size, ratio and
seed), then each tool runs in a fresh child process, timed by /usr/bin/time (wall clock and peak
RSS; resource.getrusage(RUSAGE_CHILDREN) in a wrapper process when /usr/bin/time is missing):

- diagdisk: `diagdisk analyze FILE --format json -o /dev/null` (.venv/bin/diagdisk, else
  `python -m diagdisk`); "n/a" while it does not run.
- insights-core: its Messages parser over the file's lines (context_wrap, as its own tests do, no
  collection-time filters), then one `get(keywords, check=any)` query. It lives in its own venv,
  benchmarks/.venv-insights, created on first use (`pip install insights-core`), never in the
  project's.
- grep: `LC_ALL=C grep -cE 'kw1|kw2|...' FILE` (byte locale: the fastest grep, so the strictest
  reference).

The keywords are the kernel-log grammars' prefilter literals (grammars/*.examples.yml `keywords:`)
plus DEFAULT_KEYWORDS for families no grammar names yet, the same list for every tool.
Timings are single runs on a warm page cache (the file was just written or read).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(1, str(ROOT))

import generate_log  # noqa: E402 - the generator sits beside this script

MIXES = {"typical": 0.01, "storm": 0.30}
INSIGHTS_VENV = BENCH_DIR / ".venv-insights"
CACHE_DIR = BENCH_DIR / ".cache"

# Literals for the storage families the generator writes; grammars that exist override their family.
DEFAULT_KEYWORDS: dict[str, list[str]] = {
    "scsi": ["FAILED Result:", "Sense Key", "Add. Sense:", "CDB:", "timing out command", "abort",
             "rejecting I/O", "Device offlined", "sas:"],
    "block": ["I/O error", "critical medium error", "critical target error"],
    "buffer": ["Buffer I/O error"],
    "ata": ["exception Emask", "failed command:", ": cmd ", " res ", "status: {", "error: {", "SError:",
            "hard resetting link"],
    "nvme": ["I/O Cmd(", "I/O Error (sct", "QID", "controller is down", "Removing after probe failure"],
    "md": ["md/raid1:", "md/raid10:", "md/raid:", "Disk failure on"],
    "multipath": ["Failing path", "failed path", "remaining active paths"],
    "fs": ["EXT4-fs error", "EXT4-fs warning", "XFS (", "metadata I/O error"],
}

INSIGHTS_SCRIPT = r"""
import json, sys
from insights.parsers.messages import Messages
from insights.tests import context_wrap
path, keywords = sys.argv[1], json.loads(sys.argv[2])
with open(path, encoding="utf-8", errors="surrogateescape") as handle:
    lines = handle.read().splitlines()
messages = Messages(context_wrap(lines, path="/var/log/messages"))
print(len(messages.get(keywords, check=any)))
"""

RUSAGE_WRAPPER = r"""
import json, resource, subprocess, sys, time
start = time.perf_counter()
completed = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE)
elapsed = time.perf_counter() - start
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
sys.stderr.write(json.dumps({"seconds": elapsed, "peak_kb": peak_kb}) + "\n")
sys.stdout.buffer.write(completed.stdout)
sys.exit(completed.returncode)
"""


def load_keywords() -> dict[str, list[str]]:
    keywords = {family: list(words) for family, words in DEFAULT_KEYWORDS.items()}
    try:
        import yaml
    except ImportError:
        return keywords
    for examples in sorted((ROOT / "grammars").glob("*.examples.yml")):
        document = yaml.safe_load(examples.read_text()) or {}
        if document.get("keywords"):
            keywords[examples.name.removesuffix(".examples.yml")] = [str(word) for word in document["keywords"]]
    return keywords


def log_file(size: int, mix: str, seed: int) -> Path:
    CACHE_DIR.mkdir(exist_ok=True)
    path = CACHE_DIR / f"messages-{size}-{mix}-{MIXES[mix]}-seed{seed}.log"
    if not path.exists():
        print(f"generating {path.name} ...", file=sys.stderr, flush=True)
        partial = path.with_suffix(".partial")
        with open(partial, "wb") as out:
            for batch in generate_log.generate(size, MIXES[mix], seed):
                out.write(batch)
        partial.rename(path)
    return path


def count_lines(path: Path) -> int:
    lines = 0
    with open(path, "rb") as handle:
        while block := handle.read(16 << 20):
            lines += block.count(b"\n")
    return lines


def measure(command: list[str], env: dict[str, str] | None = None) -> dict:
    """Run one command in a fresh child; wall seconds, CPU seconds (user + system, all its
    processes; the machine's other load barely changes it), peak RSS in MB, exit code, first
    stdout line."""
    time_binary = shutil.which("time", path="/usr/bin:/bin")
    cpu = None
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        if time_binary:
            wrapped = [time_binary, "-f", "%U %S %M", "-o", report.name, *command]
        else:
            wrapped = [sys.executable, "-c", RUSAGE_WRAPPER, *command]
        start = time.perf_counter()
        completed = subprocess.run(wrapped, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        seconds = time.perf_counter() - start
        if time_binary:
            fields = report.read().split()
            peak_kb = int(fields[-1]) if fields else 0
            cpu = float(fields[-3]) + float(fields[-2]) if len(fields) >= 3 else None
        else:
            last = completed.stderr.decode(errors="replace").strip().splitlines()[-1]
            peak_kb = json.loads(last)["peak_kb"]
    output = completed.stdout.decode(errors="replace").strip().splitlines()
    return {"seconds": seconds, "cpu": cpu, "peak_mb": peak_kb / 1024, "returncode": completed.returncode,
            "output": output[0] if output else "", "stderr": completed.stderr.decode(errors="replace")[-400:]}


def diagdisk_command() -> list[str]:
    script = ROOT / ".venv" / "bin" / "diagdisk"
    if script.exists():
        return [str(script)]
    python = ROOT / ".venv" / "bin" / "python"
    return [str(python if python.exists() else sys.executable), "-m", "diagdisk"]


def diagdisk_runs() -> bool:
    try:
        # an analysis of a small log first: the modules it imports are compiled before a timed run
        subprocess.run([*diagdisk_command(), "analyze", str(BENCH_DIR / "README.md"), "--format", "json",
                        "-o", os.devnull], capture_output=True, cwd=ROOT, timeout=120, env=diagdisk_env())
        return subprocess.run([*diagdisk_command(), "--help"], capture_output=True, cwd=ROOT, timeout=60,
                              env=diagdisk_env()).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def diagdisk_env(engine: str = "auto") -> dict[str, str]:
    env = dict(os.environ, DIAGDISK_PREFILTER=engine)
    # bytecode compiled and kept, as an install has it: else every run compiles the package again
    # (about 0.3 CPU seconds), which is start-up, not reading
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def diagdisk_engine(engine: str) -> str:
    """What `diagdisk --version` says of the prefilter engine it runs with."""
    try:
        answer = subprocess.run([*diagdisk_command(), "--version"], capture_output=True, text=True, cwd=ROOT,
                                timeout=60, env=diagdisk_env(engine))
    except (OSError, subprocess.TimeoutExpired):
        return "n/a"
    return next((line.split(": ", 1)[1] for line in answer.stdout.splitlines() if line.startswith("prefilter engine:")),
                "n/a")


def insights_python() -> Path | None:
    python = INSIGHTS_VENV / "bin" / "python"
    if not python.exists():
        print("creating benchmarks/.venv-insights (pip install insights-core) ...", file=sys.stderr, flush=True)
        try:
            subprocess.run([sys.executable, "-m", "venv", str(INSIGHTS_VENV)], check=True)
            subprocess.run([str(python), "-m", "pip", "install", "-q", "insights-core"], check=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"insights-core unavailable: {exc}", file=sys.stderr)
            return None
    return python


def startup_seconds(runs: int = 5) -> float | None:
    if not diagdisk_runs():
        return None
    return statistics.median(measure([*diagdisk_command(), "--help"])["seconds"] for _ in range(runs))


def benchmark(sizes: list[int], mixes: list[str], seed: int, with_insights: bool, engine: str = "auto") -> list[dict]:
    keywords = load_keywords()
    literals = sorted({word for words in keywords.values() for word in words})
    grep_pattern = "|".join(re.escape(word).replace("\\ ", " ") for word in literals)
    runnable = diagdisk_runs()
    insights = insights_python() if with_insights else None
    rows = []
    for size in sizes:
        for mix in mixes:
            path = log_file(size, mix, seed)
            megabytes = path.stat().st_size / 1e6
            lines = count_lines(path)
            tools = {
                "diagdisk": [*diagdisk_command(), "analyze", str(path), "--format", "json", "-o", "/dev/null"] if runnable else None,
                "insights-core": [str(insights), "-c", INSIGHTS_SCRIPT, str(path), json.dumps(literals)] if insights else None,
                "grep": ["grep", "-cE", grep_pattern, str(path)],
            }
            for tool, command in tools.items():
                row = {"tool": tool, "size": size, "mix": mix, "megabytes": megabytes, "lines": lines}
                if command is None:
                    row["result"] = None
                else:
                    env = dict(os.environ, LC_ALL="C") if tool == "grep" else \
                        diagdisk_env(engine) if tool == "diagdisk" else None
                    print(f"running {tool} on {path.name} ...", file=sys.stderr, flush=True)
                    result = measure(command, env)
                    ok = result["returncode"] in (0, 1) if tool != "insights-core" else result["returncode"] == 0
                    if not ok:
                        print(f"{tool} failed ({result['returncode']}): {result['stderr']}", file=sys.stderr)
                    row["result"] = result if ok else None
                rows.append(row)
    return rows


def human_size(size: int) -> str:
    for unit, factor in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def print_table(rows: list[dict], startup: float | None, engine: str = "n/a") -> None:
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.platform()}")
    try:
        print(f"load average (1, 5, 15 min) when done: {' '.join(f'{load:.1f}' for load in os.getloadavg())}")
    except OSError:
        pass
    print(f"diagdisk prefilter engine: {engine}")
    header = (f"{'tool':<14}{'size':>6} {'mix':<8}{'seconds':>9}{'MB/s':>9}{'CPU s':>8}{'lines/s':>12}"
              f"{'peak RSS MB':>13}  {'matches':>9}")
    print(header)
    print("-" * len(header))
    speed: dict[tuple[str, int, str], float] = {}
    for row in rows:
        result = row["result"]
        label = f"{row['tool']:<14}{human_size(row['size']):>6} {row['mix']:<8}"
        if result is None:
            print(f"{label}{'n/a':>9}")
            continue
        mb_per_s = row["megabytes"] / result["seconds"]
        speed[(row["tool"], row["size"], row["mix"])] = mb_per_s
        cpu = f"{result['cpu']:8.1f}" if result.get("cpu") is not None else f"{'n/a':>8}"
        print(f"{label}{result['seconds']:9.2f}{mb_per_s:9.1f}{cpu}{row['lines'] / result['seconds']:12,.0f}"
              f"{result['peak_mb']:13.0f}  {result['output'][:9]:>9}")
    print()
    for size, mix in dict.fromkeys((row["size"], row["mix"]) for row in rows):
        diagdisk = speed.get(("diagdisk", size, mix))
        insights = speed.get(("insights-core", size, mix))
        grep = speed.get(("grep", size, mix))
        over_insights = f"{diagdisk / insights:.1f}x" if diagdisk and insights else "n/a"
        grep_over = f"{grep / diagdisk:.1f}x" if diagdisk and grep else "n/a"
        print(f"{human_size(size):>6} {mix:<8} diagdisk/insights-core {over_insights:>7}   grep/diagdisk {grep_over:>7}")
    print(f"\ndiagdisk --help start-up: {f'{startup:.3f} s (median of 5)' if startup is not None else 'n/a'}")


# --- prefilter engine comparison (--engines) ---------------------------------------------------
# Each finder returns the (start, end) of every line holding a literal, for one chunk; the table
# also times diagdisk.prefilter itself, which adds the per-line family sets.

def _line_spans_from_hits(chunk: bytes, hit_ends: list[int]) -> list[tuple[int, int]]:
    spans, line_end = [], -1
    for hit in hit_ends:
        if hit <= line_end:
            continue
        start = chunk.rfind(b"\n", 0, hit) + 1
        line_end = chunk.find(b"\n", hit)
        line_end = len(chunk) if line_end < 0 else line_end
        spans.append((start, line_end))
    return spans


def _search_loop_finder(compiled):
    def find_lines(chunk: bytes) -> list[tuple[int, int]]:
        spans, position, size = [], 0, len(chunk)
        while position < size and (match := compiled.search(chunk, position)):
            start = chunk.rfind(b"\n", 0, match.start()) + 1
            end = chunk.find(b"\n", match.start())
            end = size if end < 0 else end
            spans.append((start, end))
            position = end + 1
        return spans
    return find_lines


def engine_finders(literals: list[bytes]) -> dict:
    alternation = b"|".join(re.escape(literal) for literal in sorted(literals, key=len, reverse=True))
    finders = {"re alternation": lambda: _search_loop_finder(re.compile(alternation))}

    def google_re2():
        import re2
        return _search_loop_finder(re2.compile(alternation))

    def hyperscan_raw():
        import hyperscan
        database = hyperscan.Database()
        database.compile(expressions=literals, ids=list(range(len(literals))), elements=len(literals), flags=0, literal=True)

        def find_lines(chunk):
            ends = []
            database.scan(chunk, match_event_handler=lambda _id, _start, end, _flags, _context: ends.append(end))
            ends.sort()
            return _line_spans_from_hits(chunk, [end - 1 for end in ends])
        return find_lines

    def pyahocorasick():
        import ahocorasick
        automaton = ahocorasick.Automaton()
        for literal in literals:
            automaton.add_word(literal.decode("latin-1"), len(literal))
        automaton.make_automaton()
        return lambda chunk: _line_spans_from_hits(chunk, [end for end, _ in automaton.iter(chunk.decode("latin-1"))])

    def bytes_find():
        def find_lines(chunk):
            hits = []
            for literal in literals:
                position = chunk.find(literal)
                while position >= 0:
                    hits.append(position)
                    position = chunk.find(literal, position + 1)
            hits.sort()
            return _line_spans_from_hits(chunk, hits)
        return find_lines

    finders.update({"google-re2": google_re2, "hyperscan": hyperscan_raw, "pyahocorasick": pyahocorasick,
                    "bytes.find per keyword": bytes_find})
    return finders


def compare_engines(sizes: list[int], mixes: list[str], seed: int, chunk_size: int) -> None:
    from diagdisk.inputs.chunks import iter_chunks
    from diagdisk.logs.prefilter import Prefilter

    keywords = load_keywords()
    literals = sorted({word.encode() for words in keywords.values() for word in words})
    print(f"{len(literals)} literals in {len(keywords)} families, {chunk_size >> 20} MiB chunks, in memory (no I/O), "
          "MB per CPU second")
    for size in sizes:
        for mix in mixes:
            path = log_file(size, mix, seed)
            chunks = [chunk for chunk, _ in iter_chunks(path, chunk_size)]
            megabytes = sum(map(len, chunks)) / 1e6
            reference = None
            candidates: dict = dict(engine_finders(literals))
            for engine in ("hyperscan", "python"):
                candidates[f"diagdisk.logs.prefilter[{engine}]"] = (
                    lambda engine=engine: (lambda prefilter: (lambda chunk: [(s, e) for s, e, _ in prefilter.candidate_lines(chunk)]))(
                        Prefilter(keywords, engine=engine)))
            for name, build in candidates.items():
                try:
                    find_lines = build()
                except Exception as exc:  # an engine that is not installed, or refuses the literals
                    print(f"{human_size(size):>6} {mix:<8} {name:<30} n/a ({exc.__class__.__name__}: {exc})")
                    continue
                # CPU time of this process: on a shared machine, what the engine costs, not the neighbours
                start = time.process_time()
                found = [find_lines(chunk) for chunk in chunks]
                seconds = time.process_time() - start
                reference = reference if reference is not None else found
                agrees = "same lines" if found == reference else "DIFFERENT LINES"
                print(f"{human_size(size):>6} {mix:<8} {name:<30} {megabytes / seconds:8.1f} MB/s  "
                      f"{sum(map(len, found)):>9} lines  {agrees}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100M", help="comma-separated sizes (default 100M; the targets are for 1G)")
    parser.add_argument("--mixes", default="typical,storm", help=f"comma-separated, from {', '.join(MIXES)}")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-insights", action="store_true", help="skip insights-core")
    parser.add_argument("--engines", action="store_true", help="compare prefilter engines instead of tools")
    parser.add_argument("--chunk-size", type=generate_log.parse_size, default=16 << 20, help="for --engines")
    parser.add_argument("--engine", choices=("auto", "hyperscan", "python"), default="auto",
                        help="diagdisk's prefilter engine (default: the one the install picks by itself)")
    args = parser.parse_args(argv)
    sizes = [generate_log.parse_size(size) for size in args.sizes.split(",")]
    mixes = args.mixes.split(",")
    unknown = [mix for mix in mixes if mix not in MIXES]
    if unknown:
        parser.error(f"unknown mix {unknown[0]!r}; choose from {', '.join(MIXES)}")
    if args.engines:
        compare_engines(sizes, mixes, args.seed, args.chunk_size)
        return 0
    engine = diagdisk_engine(args.engine)
    rows = benchmark(sizes, mixes, args.seed, with_insights=not args.no_insights, engine=args.engine)
    print_table(rows, startup_seconds(), engine)
    return 0


if __name__ == "__main__":
    sys.exit(main())
