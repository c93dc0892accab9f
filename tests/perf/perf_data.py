"""Test data for the prefilter and chunk reader tests: syslog written by benchmarks/generate_log.py."""

import importlib.util
from pathlib import Path

_GENERATOR = Path(__file__).resolve().parents[2] / "benchmarks" / "generate_log.py"


def _load_generator():
    spec = importlib.util.spec_from_file_location("generate_log", _GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate_log = _load_generator()

# The storage families the generator writes, as literal keywords; the same shape the grammars'
# examples files feed to Prefilter. Overlaps on purpose: "I/O error" sits inside "Buffer I/O error".
STORAGE_KEYWORDS = {
    "scsi": ["FAILED Result:", "Sense Key", "Add. Sense:", "CDB:", "timing out command", "abort", "sas:"],
    "block": ["I/O error", "blk_update_request", "critical medium error"],
    "buffer": ["Buffer I/O error"],
    "ata": ["exception Emask", "failed command:", "status: {", "error: {", "SError:", "hard resetting link"],
    "nvme": ["I/O Cmd(", "I/O Error (sct", "QID", "controller is down"],
    "md": ["md/raid1:", "Disk failure on"],
    "multipath": ["Failing path", "remaining active paths"],
    "fs": ["EXT4-fs error", "XFS ("],
}


def generated_log(size: int, storage_ratio: float, seed: int) -> bytes:
    return b"".join(generate_log.generate(size, storage_ratio, seed))
