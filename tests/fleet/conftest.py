"""Fleet tests need the `fleet` extra (dask.distributed, pyarrow). Without it they are skipped,
unless DIAGDISK_REQUIRE_FLEET is set (CI sets it), which makes a missing extra a failure."""

from __future__ import annotations

import os
import sys
import tarfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report" / "html"))  # html_dom, the browser driver

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"


def require_fleet_extra() -> None:
    missing = []
    for module in ("distributed", "pyarrow"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        if os.environ.get("DIAGDISK_REQUIRE_FLEET"):
            pytest.fail(f"DIAGDISK_REQUIRE_FLEET is set but {', '.join(missing)} is missing (pip install '.[fleet]')")
        pytest.skip(f"the fleet extra is not installed ({', '.join(missing)}); set DIAGDISK_REQUIRE_FLEET=1 to fail")


def make_archive(folder: Path, archive: Path, top: str) -> Path:
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=top)
    return archive


@pytest.fixture(scope="session")
def fleet_inputs(tmp_path_factory) -> Path:
    """A small fleet: sosreport archives and folders of several hosts, a nightly pair of one host's
    bundles, a log server's folder of two hosts, a damaged archive and a file that is not one."""
    root = tmp_path_factory.mktemp("fleet-inputs")
    archives = root / "uploads"
    archives.mkdir()
    make_archive(SAMPLES / "demo-sosreport", archives / "sosreport-pgdb02-03791234-2024-03-20-abcde.tar.gz",
                 "sosreport-pgdb02-03791234-2024-03-20-abcde")
    make_archive(SAMPLES / "nvme-media-errors-nvme1", archives / "case-upload.tar.gz", "case")
    make_archive(SAMPLES / "benign-noise-healthy", archives / "diagdisk-app-web4-20240304-101500.tar.gz",
                 "diagdisk-app-web4-20240304-101500")
    make_archive(SAMPLES / "md-raid1-degraded-sdb", archives / "diagdisk-store01-20240202-020000.tar.gz",
                 "diagdisk-store01-20240202-020000")
    # the same host the next night, a copy under another name: two inputs, one content hash
    (archives / "diagdisk-store01-20240203-020000.tar.gz").write_bytes(
        (archives / "diagdisk-store01-20240202-020000.tar.gz").read_bytes())
    damaged = (archives / "diagdisk-store01-20240202-020000.tar.gz").read_bytes()
    (archives / "sosreport-broken-2024-03-01-zzzzz.tar.gz").write_bytes(damaged[:len(damaged) // 3])
    (archives / "sosreport-notatar-2024-03-01-yyyyy.tar.xz").write_text("this was never an archive\n")
    folders = root / "unpacked"
    folders.mkdir()
    for name in ("modern-sas-medium-error-sdc", "controller-wide-resets-mpt2sas-host0", "seed004-ex3-medium-error-id0"):
        import shutil
        shutil.copytree(SAMPLES / name, folders / name)
    server = root / "logserver"
    server.mkdir()
    (server / "web1.log").write_text(
        "Mar  2 18:07:17 web1 kernel: sd 0:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]\n"
        "Mar  2 18:07:17 web1 kernel: sd 0:0:1:0: [sdb] tag#3 Add. Sense: Unrecovered read error\n")
    (server / "web2.log").write_text("Mar  2 18:07:17 web2 kernel: usb 1-1: new high-speed USB device number 2\n")
    (archives / "README.txt").write_text("what the customer uploaded\n")
    return root
