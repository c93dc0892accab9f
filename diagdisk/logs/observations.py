"""What only the order of one source's lines shows, gathered while the log is read.

Two observers are fed a source's events in line order: SequenceLinks (which ATA port and which
adapter an error-handling block belongs to) and PrintoutCollector (the members of a RAID conf
printout). The topology stage turns what they gathered into links and md array state.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field

# command addresses remembered per source: a storm of commands must not grow memory without end
_MAX_COMMANDS = 200_000
# an EH block's lines follow each other: this many lines without one ends it
EH_BLOCK_GAP_LINES = 12


class SequenceLinks:
    """What only the order of one source's events shows, fed those events in line order.

    - An EH block (exception .. EH complete) of ataN that holds exactly one SCSI device's lines ties
      ataN to that device (a block may also follow its 'EH complete' in a journal printed newest
      first). A block also ends after EH_BLOCK_GAP_LINES lines without a line of its own.
    - An adapter's own message about a command (mpt2sas_cm0: attempting host reset! scmd(X)) ties
      the adapter to the SCSI host of the device that command was sent to.

    The links of consecutive segments of a source join with merge().
    """

    def __init__(self) -> None:
        self.port_candidates: dict[str, set[str]] = {}
        self.port_names: dict[str, set[str]] = {}    # port -> disk names completed inside its EH blocks
        self._open_ports: dict[str, list] = {}       # port -> [hctls seen, line of its last line]
        self._command_hosts: dict[str, set[int]] = {}
        self._adapter_commands: dict[str, set[str]] = {}

    @classmethod
    def of_events(cls, events: list[dict]) -> list["SequenceLinks"]:
        by_source: dict[str, SequenceLinks] = {}
        for event in events:
            by_source.setdefault(event["source"], cls()).feed(event)
        for links in by_source.values():
            links.close()
        return list(by_source.values())

    @property
    def wants_all(self) -> bool:
        """An EH block is open: every event may belong to it."""
        return bool(self._open_ports)

    def wants(self, event: dict) -> bool:
        """Whether feeding `event` can change anything (most events of a storm cannot)."""
        return bool(self._open_ports) or "ata_port" in event or "scmd" in event

    def feed(self, event: dict) -> None:
        line = event.get("line", 0)
        for port in [p for p, (_, last) in self._open_ports.items() if line - last > EH_BLOCK_GAP_LINES]:
            self._flush(port)
        port = event.get("ata_port")
        kind = event.get("kind")
        # 2.6.1x libata printed no exception line: its block starts at the translated sense
        if port and (kind in ("ata_exception", "ata_detail", "ata_link")
                     or (kind == "sense" and event.get("detail") == "ata_translated")):
            self._open_ports.setdefault(port, [set(), line])[1] = line
        if port and kind == "ata_eh_complete":
            block = self._open_ports.pop(port, None)
            if block and block[0]:
                self.port_candidates.setdefault(port, set()).update(block[0])
            else:
                self._open_ports[port] = [set(), line]  # reversed journal: the block follows
        elif event.get("hctl") and not port:
            for block in self._open_ports.values():
                block[0].add(event["hctl"])
                block[1] = line
        elif str(event.get("device") or "").startswith("sd") and not port and self._open_ports:
            # 2.6 kernels completed the failed command with "end_request: I/O error, dev sdb" and no
            # H:C:T:L: inside one port's EH block, that disk is the port's
            for open_port, block in self._open_ports.items():
                self._remember(self.port_names, open_port, re.sub(r"\d+$", "", event["device"]))
                block[1] = line
        command = event.get("scmd")
        if command:
            if event.get("adapter"):
                self._remember(self._adapter_commands, event["adapter"], command)
            elif event.get("host") is not None:
                self._remember(self._command_hosts, command, event["host"])

    def _flush(self, port: str) -> None:
        seen = self._open_ports.pop(port)[0]
        if seen:
            self.port_candidates.setdefault(port, set()).update(seen)

    @staticmethod
    def _remember(mapping: dict, key, value) -> None:
        if key in mapping or len(mapping) < _MAX_COMMANDS:
            mapping.setdefault(key, set()).add(value)

    def close(self) -> None:
        for port in list(self._open_ports):
            self._flush(port)

    def merge(self, other: "SequenceLinks") -> None:
        """Take in the links of the next segment of the same source (both closed)."""
        for port, hctls in other.port_candidates.items():
            self.port_candidates.setdefault(port, set()).update(hctls)
        for port, names in other.port_names.items():
            self.port_names.setdefault(port, set()).update(names)
        for mine, theirs in ((self._command_hosts, other._command_hosts),
                             (self._adapter_commands, other._adapter_commands)):
            for key, values in theirs.items():
                for value in values:
                    self._remember(mine, key, value)

    @property
    def adapter_hosts(self) -> dict[str, set[int]]:
        hosts: dict[str, set[int]] = {}
        for adapter, commands in self._adapter_commands.items():
            found = hosts.setdefault(adapter, set())
            for command in commands:
                found.update(self._command_hosts.get(command, ()))
        return hosts


# lines of one printout follow each other; a gap this large ends it
_PRINTOUT_GAP_LINES = 3


@dataclass
class Printout:
    source: str
    level: str | None
    last_line: int
    raid_disks: int | None = None
    working: int | None = None
    members: dict[int, tuple[str, bool]] = field(default_factory=dict)   # slot -> (member, online)


class PrintoutCollector:
    """Gathers the RAID conf printouts of one source, fed its events in line order."""

    KINDS = frozenset({"info", "md_member"})   # the kinds of a printout's lines

    def __init__(self) -> None:
        self.printouts: list[Printout] = []
        self._open: Printout | None = None

    @property
    def open(self) -> bool:
        """A printout is open: every event may end it (feed them all until it is closed)."""
        return self._open is not None

    def feed(self, event: dict) -> None:
        printout = self._open
        if printout is not None and (event["source"] != printout.source
                                     or event["line"] - printout.last_line > _PRINTOUT_GAP_LINES):
            printout = self._open = None
        detail = event.get("detail")
        if event["kind"] == "info" and detail == "conf_printout":
            self._open = Printout(event["source"], event.get("md_level"), event["line"])
            self.printouts.append(self._open)
        elif printout is not None and event["kind"] == "info" and detail == "conf_counts":
            printout.raid_disks = event.get("md_raid_disks")
            printout.working = event.get("md_devices_left")
            printout.last_line = event["line"]
        elif printout is not None and event["kind"] == "md_member":
            member = event.get("partition") or event.get("device")
            if member and event.get("md_slot") is not None:
                printout.members[event["md_slot"]] = (member, event.get("md_online") != 0)
            printout.last_line = event["line"]
