"""Which component of the storage path originated each event (rules/model/origins.yml).

The kernel says who spoke: sense data and ATA error bits come from the device, CRC and link resets
from the link, firmware faults and adapter resets from the adapter, AER from the PCIe bus. A table
of selections, first match wins, turns each event into one origin; a timeout or abort without
sense stays `ambiguous` for the common-cause rules to settle. The path then refines the origin: a
virtual disk has no device, link or adapter of its own in the guest (they become `backend`), and a
lost link of a SAN transport is the `path`.

The same file names the events that report trouble (`error_class`): a verdict of healthy needs
every one of them explained by a rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import pandas as pd
import yaml

from ..errors import DiagdiskError
from ..resources import rules_dir
from .selection import mask

ORIGINS = ("device", "link", "adapter", "bus", "enclosure", "power", "path", "backend", "ambiguous", "none")
# the FRU class an origin points at when it is the whole story
FRU_OF_ORIGIN = {"device": "disk", "link": "cable", "adapter": "controller", "bus": "bus",
                 "enclosure": "enclosure", "power": "power", "path": "path", "backend": "path"}


@dataclass(frozen=True)
class OriginModel:
    entries: tuple[tuple[str, str, dict], ...]     # (origin, why, selection) in order
    error_select: tuple[dict, ...]
    error_filter: tuple[dict, ...]


def origins_file():
    return rules_dir() / "model" / "origins.yml"


@cache
def origin_model() -> OriginModel:
    path = origins_file()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise DiagdiskError(f"cannot read the origin table {path}: {exc}") from None
    entries = []
    for number, entry in enumerate(data.get("origins") or [], 1):
        origin = entry.get("origin")
        if origin not in ORIGINS or not isinstance(entry.get("when"), dict):
            raise DiagdiskError(f"{path}: origin entry {number}: needs origin (one of {', '.join(ORIGINS)}) and when")
        entries.append((origin, entry.get("why", ""), entry["when"]))
    errors = data.get("error_class") or {}
    return OriginModel(tuple(entries), tuple(errors.get("select") or ()), tuple(errors.get("filter") or ()))


def attribute(frame: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """(origin, why) of every row of an event frame, from the table alone (no path refinement)."""
    origin = pd.Series("none", index=frame.index, dtype=object)
    why = pd.Series("", index=frame.index, dtype=object)
    left = pd.Series(True, index=frame.index)
    for name, reason, selection in origin_model().entries:
        hit = left & mask(frame, selection)
        if hit.any():
            origin[hit] = name
            why[hit] = reason
            left &= ~hit
    return origin, why


def refine(origin: str, transport: str | None, virtual: bool) -> str:
    """The origin once the path is known: the hypervisor behind a virtual disk, the fabric of a SAN."""
    if virtual and origin in ("device", "link", "adapter", "ambiguous"):
        return "backend"
    if transport in ("fc", "iscsi") and origin == "link":
        return "path"
    return origin


def error_class(frame: pd.DataFrame) -> pd.Series:
    model = origin_model()
    selected = pd.Series(False, index=frame.index)
    for selection in model.error_select:
        selected |= mask(frame, selection)
    for selection in model.error_filter:
        selected &= ~mask(frame, selection)
    return selected
