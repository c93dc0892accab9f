"""The task a worker runs for one fleet input: hash it, skip it when already analysed, else have
the worker thread's isolated process analyse it (diagdisk.fleet.isolate) within the limits.

Hashing happens on the worker, beside the data: the client never reads the inputs, so it does not
become the bottleneck of a fleet on shared storage.
"""

from __future__ import annotations

from ..errors import DiagdiskError
from .isolate import analyser_for_this_thread
from .job import content_hash, found_from


def analyse_input(specs: list[dict], request: dict, done: frozenset | set, force: bool) -> dict:
    """A result dict: status ok / excluded / failed / skipped, and the input's content hash."""
    founds = [found_from(spec) for spec in specs]
    try:
        digest = content_hash(founds)
    except DiagdiskError as exc:
        return {"status": "failed", "reason": exc.one_line(), "hash": None}
    if digest in done and not force:
        return {"status": "skipped", "hash": digest}
    analyser = analyser_for_this_thread(int(request.get("memory_bytes") or 0))
    result = analyser.analyse({"inputs": specs, "limits": request.get("limits") or {},
                               "since": request.get("since"), "rules_dirs": request.get("rules_dirs") or []},
                              timeout=float(request.get("timeout") or 600))
    result["hash"] = digest
    return result
