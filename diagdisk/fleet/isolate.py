"""Per-input limits on a worker: each input is analysed in a child process of the worker, which
can be given a memory cap (RLIMIT_AS), timed out and killed, and restarted when it dies.

A Dask task runs in a thread of its worker, where nothing can stop Python code that runs too long
or grows too large; and a crash in one input must not take the worker, and the other inputs it
holds, with it. The child is started once per worker thread and kept (the imports and grammars
are paid once), and speaks one JSON line per request and per answer on its own pipes.

An input whose child dies is given to a fresh child once more; when that dies too, the input is
recorded failed. An input that runs past the time limit is failed at once (running it again
would only take as long).

Run as `python -m diagdisk.fleet.isolate MEMORY_BYTES` it is the child.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time

_READ_CHUNK = 1 << 20
CANNOT_START_IN_MEMORY = 75  # the child's exit status when its imports do not fit the memory cap


class IsolatedAnalyser:
    """One child process that analyses inputs one after the other (diagdisk.fleet.job.analyse)."""

    def __init__(self, memory_bytes: int = 0):
        self.memory_bytes = memory_bytes
        self._child: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        environment = dict(os.environ, PYTHONUNBUFFERED="1")
        self._child = subprocess.Popen(
            [sys.executable, "-m", "diagdisk.fleet.isolate", str(self.memory_bytes)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=environment,
            start_new_session=True)  # Ctrl-C at the terminal reaches the run, which stops the children
        return self._child

    def close(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        if child.poll() is None:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except OSError:
                child.kill()
        child.wait()
        for pipe in (child.stdin, child.stdout):
            if pipe:
                pipe.close()

    def analyse(self, request: dict, timeout: float) -> dict:
        """The child's answer to ``request``, or a failed result saying why there is none."""
        line = (json.dumps(request) + "\n").encode()
        death = None
        for _attempt in range(2):
            child = self._child if self._child and self._child.poll() is None else self._start()
            try:
                child.stdin.write(line)
                child.stdin.flush()
                answer = self._read_answer(child, time.monotonic() + timeout)
            except BrokenPipeError:
                answer = None
            if answer == "timeout":
                self.close()
                return {"status": "failed", "reason": f"took longer than {timeout:g} s, the per-input time limit "
                                                      f"(--timeout); stopped"}
            if answer is not None:
                return answer
            child.wait()
            death = _describe_exit(child.returncode)
            self.close()
            if child.returncode == CANNOT_START_IN_MEMORY:
                return {"status": "failed", "reason": f"the analysis process {death}"}
        return {"status": "failed", "reason": f"the analysis process died twice on this input ({death})"}

    def _read_answer(self, child: subprocess.Popen, deadline: float):
        fd = child.stdout.fileno()
        buffer = bytearray()
        while True:
            end = buffer.find(b"\n")
            if end >= 0:
                return json.loads(buffer[:end])
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, _READ_CHUNK)
            if not chunk:
                return None  # the child died
            buffer += chunk


def _describe_exit(code: int | None) -> str:
    if code == CANNOT_START_IN_MEMORY:
        return "it cannot start within the per-input memory limit, --max-memory"
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}" + (", likely out of memory" if name == "SIGKILL" else "")
    return f"exit status {code}"


_local = threading.local()


def analyser_for_this_thread(memory_bytes: int) -> IsolatedAnalyser:
    """The child of the calling worker thread (one each: a worker may run several tasks at once)."""
    analyser = getattr(_local, "analyser", None)
    if analyser is None or analyser.memory_bytes != memory_bytes:
        if analyser is not None:
            analyser.close()
        analyser = _local.analyser = IsolatedAnalyser(memory_bytes)
    return analyser


def close_this_threads_analyser() -> None:
    analyser = getattr(_local, "analyser", None)
    if analyser is not None:
        analyser.close()
        _local.analyser = None


def _child_main(argv: list[str]) -> int:
    memory_bytes = int(argv[0]) if argv else 0
    if memory_bytes:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    # answers go to the pipe the parent reads; anything else printed goes to stderr
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        # everything an analysis imports, at once: under too small a memory cap the child fails
        # here, and says so by its exit status, not halfway through an input
        from .job import analyse, warm_up
        warm_up()
    except (ImportError, MemoryError):
        if memory_bytes:
            return CANNOT_START_IN_MEMORY
        raise
    for line in sys.stdin:
        result = analyse(json.loads(line))
        try:
            text = json.dumps(result, default=str)
        except (TypeError, ValueError) as exc:
            text = json.dumps({"status": "failed", "reason": f"internal error: report not serialisable: {exc}",
                               "seconds": result.get("seconds")})
        answers.write(text + "\n")
        answers.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1:]))
