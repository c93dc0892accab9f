"""What a fleet run analyses: the inputs `diagdisk analyze` would find (diagdisk.inputs.discovery),
each snapshot (sosreport or bundle, folder or archive) on its own, and the loose logs of each host
together.

Unlike `analyze`, two snapshots of one host are two inputs: a nightly bundle is a report of its
own day. Nothing is opened here (archives are identified on the workers), so planning thousands
of inputs costs a directory listing and a look at loose files' first lines.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..inputs.discovery import Found, find_inputs, group_by_host


@dataclass
class FleetInput:
    key: str             # the input as named: its path, or its paths joined
    inputs: list[Found]

    @property
    def paths(self) -> list[str]:
        return [found.path for found in self.inputs]


def plan_fleet(paths: list[str]) -> tuple[list[FleetInput], list[str]]:
    """The fleet inputs under ``paths`` sorted by key (a stable order whatever order the paths were
    named in), and notes about files not taken."""
    if "-" in paths:
        raise InputError("the fleet reads files and folders its workers can open, not stdin", "-")
    discovery = find_inputs(paths)
    streams = [found.path for found in discovery.inputs if found.kind == "stream"]
    if streams:
        raise InputError("is a pipe; the fleet reads files and folders its workers can open", streams[0])
    planned = [FleetInput(key=found.path, inputs=[found]) for found in discovery.inputs if found.snapshot]
    loose = [found for found in discovery.inputs if not found.snapshot]
    for group in group_by_host(loose, discovery.notes):
        planned.append(FleetInput(key=", ".join(_key_of(found) for found in group.inputs), inputs=group.inputs))
    unique: dict[str, FleetInput] = {}
    for item in planned:
        unique.setdefault(item.key, item)  # a path named twice is one input
    return sorted(unique.values(), key=lambda item: item.key), discovery.notes


def _key_of(found: Found) -> str:
    if found.files is None:
        return found.path
    # a folder of several hosts' logs, split by host
    return f"{found.path} [host {found.identity.name if found.identity else 'not named'}]"
