"""The default install (`pip install .`, no extras) is the product: everything diagdisk imports is a
regular dependency of pyproject.toml, and `diagdisk --version` says which prefilter engine runs."""

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
# distribution name -> the module it installs, where they differ
MODULE_OF = {"pyyaml": "yaml"}


def imported_top_modules() -> dict[str, str]:
    """Every top-level module the package imports (at module level or inside functions) -> one file."""
    found = {}
    for path in sorted((ROOT / "diagdisk").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def test_every_imported_library_is_a_regular_dependency():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    regular = {MODULE_OF.get(name, name) for name in
               (Requirement(text).name.lower().replace("-", "_") for text in project["dependencies"])}
    third_party = {module: where for module, where in imported_top_modules().items()
                   if module not in sys.stdlib_module_names and module != "diagdisk"}
    fleet = {MODULE_OF.get(name, name) for name in
             (Requirement(text).name.lower().replace("-", "_") for text in project["optional-dependencies"]["fleet"])}
    fleet |= {"distributed"}  # dask[distributed] installs it
    # `diagdisk fleet` alone may use the fleet extra; nothing on the way of analyze/events/collect does
    missing = {module: where for module, where in third_party.items() if module not in regular
               and not (module in fleet and where.startswith("diagdisk/fleet/"))}
    assert not missing, f"imported but only in an extra or nowhere in pyproject.toml: {missing}"
    assert {"matplotlib", "hyperscan", "numpy"} <= regular
    assert set(project.get("optional-dependencies", {})) <= {"test", "fleet"}


def test_hyperscan_is_required_only_where_it_has_wheels():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (hyperscan,) = [Requirement(text) for text in project["dependencies"] if text.startswith("hyperscan")]
    base = {"platform_python_implementation": "CPython"}
    wheels = [("linux", "x86_64"), ("linux", "aarch64"), ("darwin", "arm64"), ("darwin", "x86_64"), ("win32", "AMD64")]
    none = [("linux", "ppc64le"), ("linux", "s390x"), ("linux", "armv7l"), ("win32", "ARM64"), ("freebsd14", "amd64")]
    for system, machine in wheels:
        assert hyperscan.marker.evaluate({**base, "sys_platform": system, "platform_machine": machine})
    for system, machine in none:
        assert not hyperscan.marker.evaluate({**base, "sys_platform": system, "platform_machine": machine})
    assert not hyperscan.marker.evaluate({"platform_python_implementation": "PyPy", "sys_platform": "linux",
                                          "platform_machine": "x86_64"})


def test_version_names_the_prefilter_engine():
    def version(engine: str) -> subprocess.CompletedProcess:
        env = {"DIAGDISK_PREFILTER": engine, "PATH": "/usr/bin:/bin"}
        return subprocess.run([sys.executable, "-m", "diagdisk", "--version"], capture_output=True, text=True,
                              env=env, cwd=ROOT)

    forced = version("python")
    assert forced.returncode == 0
    assert forced.stdout.splitlines()[1] == "prefilter engine: python (numpy, chosen by DIAGDISK_PREFILTER)"
    auto = version("auto").stdout.splitlines()[1]
    from diagdisk.logs.prefilter import hyperscan_importable
    assert auto.startswith("prefilter engine: hyperscan " if hyperscan_importable() else "prefilter engine: python ")
    wrong = version("grep")
    assert wrong.returncode == 2 and "DIAGDISK_PREFILTER='grep'" in wrong.stderr and "Traceback" not in wrong.stderr
