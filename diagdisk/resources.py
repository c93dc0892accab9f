"""Locate the grammar and rule folders, whether installed from a wheel or run from the source tree.

The wheel maps the top-level grammars/ and rules/ into diagdisk/_data/; an editable install does not
apply that mapping, so fall back to the source tree beside the package.
"""

from functools import cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    for candidate in (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"diagdisk installation is missing its {name}/ folder")


def grammars_dir() -> Path:
    return data_dir("grammars")


def rules_dir() -> Path:
    return data_dir("rules")
