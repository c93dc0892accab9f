"""Kernel-message grammars: load grammars/*.lark, turn a message into an event dict.

Each grammar is LALR with the contextual lexer, built once per process (never lark's cache=True: it
loads a pickle from a predictable temp path). Terminal names name event fields, rule aliases name
event kinds (see diagdisk.logs.events). Storms repeat a few message shapes with different numbers, so
what one lark parse found is kept as a shape (see _Shape) that parses later messages of the same
shape with one regex match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Callable

import yaml
from lark import Lark, Token, Tree
from lark.exceptions import LarkError

from ..decode import devnames
from .events import EVENT_KINDS, split_alias
from ..larkbuild import build_lark
from ..resources import grammars_dir

# Order in which families are tried when several match a line: specific before generic.
FAMILY_ORDER = ("scsi", "ata", "nvme", "md", "dm", "fs", "transport", "block", "topology")
# tried after every other family, whatever the keywords: a line of a known device no grammar reads
FALLBACK_FAMILY = "device"


def _hex(text: str) -> int:
    text = text.lower().removeprefix("0x").removesuffix("h")
    return int(text, 16)


def _sense_key_from_text(text: str) -> int | None:
    from ..decode.sense import sense_key_from_name
    return sense_key_from_name(text.strip())


def _asc_ascq_from_text(text: str) -> tuple[int, int] | None:
    from ..decode.asc_ascq import lookup_description
    return lookup_description(text.strip())


def _hctl_fields(text: str) -> dict:
    host, channel, target, lun = (int(x) for x in re.split(r"[:]", text))
    return {"hctl": f"{host}:{channel}:{target}:{lun}", "host": host, "channel": channel,
            "target": target, "lun": lun}


def _aic_hctl_fields(text: str) -> dict:
    """aic7xxx 'scsi0:A:4:0' / 'scsi0:0:4:0': host, channel (letter A = 0), target, lun."""
    host, channel, target, lun = text.removeprefix("scsi").split(":")
    channel_number = ord(channel) - ord("A") if channel.isalpha() else int(channel)
    return _hctl_fields(f"{host}:{channel_number}:{target}:{lun}")


def _blockdev_fields(text: str) -> dict:
    disk = devnames.disk_of(text)
    fields = {"device": disk}
    if disk != text:
        fields["partition"] = text
    return fields


def _ata_link_fields(text: str) -> dict:
    port = text.split(".")[0]
    fields = {"ata_port": port}
    if "." in text:
        fields["ata_link"] = text
    return fields


def _vendor_model_rev(text: str) -> dict:
    """'SEAGATE  ST373307LC       0007' (scsi_device vendor %.8s, model %.16s, rev %.4s)."""
    if len(text) >= 30 and text[8] == " " and text[25] == " ":
        vendor, model, rev = text[:8], text[9:25], text[26:30]
    else:
        parts = text.split()
        vendor, model, rev = (parts[0] if parts else None,
                              " ".join(parts[1:-1]) or None, parts[-1] if len(parts) > 1 else None)
    return {"vendor": (vendor or "").strip() or None, "model": (model or "").strip() or None,
            "revision": (rev or "").strip() or None}


def _bits(text: str) -> str:
    return " ".join(text.replace("{", " ").replace("}", " ").split())



_BLOCKDEV_NAME = re.compile(r"(?:sd[a-z]+|hd[a-z]|vd[a-z]+|xvd[a-z]+)\d*|nvme\d+(?:c\d+)?n\d+(?:p\d+)?|mmcblk\d+(?:p\d+)?"
                            r"|sr\d+|st\d+|md\d+(?:p\d+)?|dm-\d+|loop\d+|nbd\d+|rbd\d+")


def _named_blockdev(name: str) -> dict:
    return _blockdev_fields(name) if _BLOCKDEV_NAME.fullmatch(name) else {}


def _device_prefix_fields(terminal: str, text: str) -> dict:
    """The identity a storage device prefix shows (grammars/device.lark), whatever the body says."""
    text = text.rstrip(":").strip()
    if terminal == "DEV_SCSI":
        m = re.match(r"(\S+) (\d+:\d+:\d+:\d+):?(?: \[([a-z0-9]+)\])?", text)
        fields = _hctl_fields(m[2])
        if m[3]:
            fields.update(_named_blockdev(m[3]))
        return fields
    if terminal == "DEV_SCSI_HOST":
        return {"host": int(re.search(r"\d+", text)[0])}
    if terminal == "DEV_ATA":
        return _ata_link_fields(text)
    if terminal == "DEV_NVME":
        last = text.split()[-1]
        if re.fullmatch(r"nvme\d+", last):
            return {"nvme_ctrl": last}
        if ":" in last:
            return {"pci": last, "driver": "nvme"}
        return {**_named_blockdev(last), "nvme_ctrl": re.sub(r"(?:c\d+)?n\d+$", "", last)}
    if terminal == "DEV_MD":
        return {"md": re.search(r"md\d+$", text)[0]}
    if terminal == "DEV_USB":
        driver, address = text.split(" ", 1)
        return {"driver": driver, "usb_port": address.split(":")[0]}
    if terminal == "DEV_PCI":
        driver, pci = text.rsplit(" ", 1)
        return {"driver": driver, "pci": pci}
    if terminal == "DEV_IDE":
        return {"device": text} if text.startswith("hd") else {"adapter": text, "driver": "ide"}
    if terminal == "DEV_FS":
        name = re.search(r"\((?:device )?([a-z0-9-]+)", text)[1]
        return _named_blockdev(name) or {"text": name}
    return _adapter_prefix_fields(text)


def _adapter_prefix_fields(text: str) -> dict:
    """Adapters and transports that print their own name (grammars/device.lark DEV_ADAPTER)."""
    m = re.fullmatch(r"qla2xxx \[([0-9a-fA-F:.]+)\]-[0-9a-fA-F]{4}:(\d*)", text)
    if m:
        return {"driver": "qla2xxx", "pci": m[1], **({"host": int(m[2])} if m[2] else {})}
    m = re.fullmatch(r"connection(\d+):(\d+)", text)
    if m:
        return {"iscsi_conn": f"{m[1]}:{m[2]}", "iscsi_session": int(m[1])}
    m = re.fullmatch(r"session(\d+)", text)
    if m:
        return {"iscsi_session": int(m[1])}
    if text.startswith("rport-"):
        return {"rport": text, "host": int(text[6:].split(":")[0])}
    m = re.fullmatch(r"3w-(\w+): scsi(\d+)", text)
    if m:
        return {"driver": f"3w-{m[1]}", "host": int(m[2])}
    m = re.fullmatch(r"(mptbase|mptscsih|mptsas|mptspi|mptfc): (ioc\d+)", text)
    if m:
        return {"driver": m[1], "adapter": m[2]}
    m = re.fullmatch(r"(hv_storvsc|virtio_blk|vbd|ibmvscsi|ibmvfc) (\S+)", text)
    if m:
        driver = {"vbd": "xen-blkfront", "hv_storvsc": "storvsc"}.get(m[1], m[1])
        return {"driver": driver, "adapter": m[2]}
    if text.startswith("cciss/"):
        return {"driver": "cciss", "device": text}
    adapter = text.split(":")[0]
    driver = re.sub(r"(?:_cm)?\d+$", "", adapter).lower()
    return {"adapter": adapter, "driver": {"aac": "aacraid", "sym": "sym53c8xx"}.get(driver, driver)}

# terminal name -> function(token text) -> dict of event fields
CONVERTERS: dict[str, Callable[[str], dict]] = {
    "HCTL": _hctl_fields,
    "HOSTNUM": lambda t: {"host": int(t)},
    "CHANNEL": lambda t: {"channel": int(t)},
    "TARGET": lambda t: {"target": int(t)},
    "LUN": lambda t: {"lun": int(t)},
    "SCSIHOST": lambda t: {"host": int(t.removeprefix("scsi").removeprefix("host"))},
    "SCSIHOST__SPACED": lambda t: {"host": int(t.removeprefix("scsi").removesuffix(":"))},
    "BLOCKDEV": _blockdev_fields,
    "MAJMIN__HEX": lambda t: {"majmin": devnames.parse_majmin(t, hex_numbers=True)},
    "MAJMIN": lambda t: {"majmin": devnames.parse_majmin(t, hex_numbers=False)},
    "SECTOR": lambda t: {"sector": int(t)},
    "SECTOR__HEX": lambda t: {"sector": _hex(t)},
    "TAG": lambda t: {"tag": int(t)},
    "SENSE_KEY": lambda t: {"sense_key": _sense_key_from_text(t)},
    "SENSE_KEY__H": lambda t: {"sense_key": _hex(t)},
    "ASC__HEX": lambda t: {"asc": _hex(t)},
    "ASC__H": lambda t: {"asc": _hex(t)},
    "ASCQ__H": lambda t: {"ascq": _hex(t)},
    "AIC_HCTL": lambda t: _aic_hctl_fields(t),
    "CURRENT_DEFERRED": lambda t: {"deferred": t == "Deferred"},
    "CDB_BYTES": lambda t: {"cdb_hex": " ".join(t.split())},
    "SENSE_BYTES": lambda t: {"sense_hex": " ".join(t.split())},
    "STATUS_NAME": lambda t: {"status": t},
    "ASCQ__HEX": lambda t: {"ascq": _hex(t)},
    "ASC_TEXT": lambda t: dict(zip(("asc", "ascq"), _asc_ascq_from_text(t) or ()), text=t.strip()),
    "DEFERRED": lambda t: {"deferred": t.strip("[]").lower() == "deferred"},
    "FRU__HEX": lambda t: {"fru_code": _hex(t)},
    "HOST_BYTE": lambda t: {"host_byte": t},
    "DRIVER_BYTE": lambda t: {"driver_byte": t},
    "HOST_BYTE__HEX": lambda t: {"host_byte_code": _hex(t)},
    "DRIVER_BYTE__HEX": lambda t: {"driver_byte_code": _hex(t)},
    "RESULT__HEX": lambda t: {"result": _hex(t)},
    "OPCODE__HEX": lambda t: {"opcode": _hex(t)},
    "CDB_NAME": lambda t: {"op": t.split("(")[0].strip().upper(), "cdb_name": t},
    "OP": lambda t: {"op": t.upper()},
    "BLK_STATUS": lambda t: {"text": t},
    "ATA_LINK": _ata_link_fields,
    "ATA_STATUS": lambda t: {"ata_status": _bits(t)},
    "ATA_ERROR": lambda t: {"ata_error": _bits(t)},
    "SERROR": lambda t: {"serror": _bits(t)},
    "EMASK__HEX": lambda t: {"emask": _hex(t)},
    "ATA_COMMAND": lambda t: {"ata_command": t.strip()},
    "TASKFILE": lambda t: {"taskfile": t},
    "LINK_SPEED": lambda t: {"link_speed": t},
    "NVME_CTRL": lambda t: {"nvme_ctrl": t},
    "NVME_STATUS": lambda t: {"nvme_status": t.strip()},
    "SCT__HEX": lambda t: {"sct": _hex(t)},
    "SC__HEX": lambda t: {"sc": _hex(t)},
    "QID": lambda t: {"qid": int(t)},
    "MD": lambda t: {"md": t},
    "MD_LEVEL": lambda t: {"md_level": t},
    "DEVICES_LEFT": lambda t: {"md_devices_left": int(t)},
    "RAID_DISKS": lambda t: {"md_raid_disks": int(t)},
    "OTHER_MIRROR": lambda t: {"md_other_mirror": t},
    "REDIRECTED_TO": lambda t: {"md_other_mirror": t},
    "CONF_LEVEL": lambda t: {"md_level": t.lower()},
    "DM": lambda t: {"dm": t},
    "PATH_MAJMIN": lambda t: {"path_majmin": t},
    "USB_PORT": lambda t: {"usb_port": t},
    "PCI": lambda t: {"pci": t},
    "DRIVER": lambda t: {"driver": t},
    "TEXT": lambda t: {"text": t.strip()},
    "VENDOR": lambda t: {"vendor": t.strip()},
    "MODEL": lambda t: {"model": t.strip()},
    "REVISION": lambda t: {"revision": t.strip()},
    "DEVTYPE": lambda t: {"devtype": t.strip()},
    "WO": lambda t: {"md_write_only": int(t)},
    "ONLINE": lambda t: {"md_online": int(t)},
    "SLOT": lambda t: {"md_slot": int(t)},
    "COUNT": lambda t: {"repeat": int(t)},
    "VMR": lambda t: _vendor_model_rev(t),
    "RESET_LEVEL": lambda t: {"detail": t},
    "OUTCOME": lambda t: {"text": t},
    # storage device prefixes (grammars/device.lark): identity first, whatever the body says
    **{name: (lambda n: lambda t: _device_prefix_fields(n, t))(name)
       for name in ("DEV_SCSI", "DEV_SCSI_HOST", "DEV_ATA", "DEV_NVME", "DEV_MD", "DEV_USB", "DEV_PCI",
                    "DEV_ADAPTER", "DEV_IDE", "DEV_FS")},
    "BODY": lambda t: {"text": t.strip()},
    # -- family converters below (one line each; keep names equal to the terminal) --
    # -- section: scsi, block, buffer heads --
    # -- section: ata, ide, usb --
    # -- section: nvme, pci/aer, md, dm, fs --
    # a filesystem's or a dm target's block device: its disk, and the map or array it is when stacked
    "DEVNAME": lambda t: {**_blockdev_fields(t), **({"dm": t} if t.startswith("dm-") else {"md": devnames.disk_of(t)} if t.startswith("md") else {})},
    # AER severities: 6.x says "Correctable"/"Uncorrectable" for what 2.6 to 5.x call "Corrected"/"Uncorrected"
    "AER_CORRECTED": lambda t: {"aer_severity": "Corrected"},
    "AER_NONFATAL": lambda t: {"aer_severity": "Uncorrected (Non-Fatal)"},
    "AER_FATAL": lambda t: {"aer_severity": "Uncorrected (Fatal)"},
    "AER_TYPE": lambda t: {"aer_type": t},
    "INACCESSIBLE": lambda t: {"aer_type": "Inaccessible"},
    "AER_AGENT": lambda t: {"aer_agent": t.lower()},
    # 2.6.32/3.10 name the source by its requester id, bus << 8 | devfn, without the PCI domain
    "AER_AGENT__ID": lambda t: {"aer_agent": f"{int(t, 16) >> 8:02x}:{int(t, 16) >> 3 & 0x1f:02x}.{int(t, 16) & 7}"},
    "AER_AGENT__BDF": lambda t: (lambda bus, dev, fn: {"aer_agent": f"{bus.lower()}:{dev.lower()}.{int(fn, 16)}"})(*re.findall(r"=([0-9a-fA-F]{2})h", t)),
    "AER_STATUS": lambda t: {"aer_status": t},
    # pciehp "Slot(N)": the slot's physical name, a number on most boards
    "HOTPLUG_SLOT": lambda t: {"text": t, "slot": int(t[5:-1]) if t[5:-1].isdigit() else None},
    # btrfs messages read as one token: the member they name after /dev/, as a DEVNAME
    **dict.fromkeys(("DEVICE__DEV_STATS", "DEVICE__IO_ERROR_AT", "DEVICE__LOST_PAGE_WRITE", "DEVICE__FIXED_UP", "DEVICE__UNFIXABLE"), lambda t: CONVERTERS["DEVNAME"](re.search(r"/dev/([^\s,()]+)", t)[1])),
    # ext "Directory index full" warnings: the whole warning is the text, as other warnings keep theirs
    "DIRECTORY_INDEX_FULL": lambda t: {"text": t},
    # -- section: sas/raid adapters, parallel scsi --
    # -- section: fc, iscsi, virtual --
    # -- end of sections --
    # md "active with 1 out of 2 mirrors": the terminal only matches a short set, so a cached shape is never reused for a full one.
    "MD_ACTIVE_OF": lambda t: {"md_devices_left": int(t.split()[0])},
    # device-mapper names its devices dm-<minor>, so "253:3" is dm-3 whatever the (dynamic) major.
    "DM_MAJMIN": lambda t: {"dm": "dm-" + t.split(":")[1]},
    # "scsi2 : ata_piix": one lower-case word is the driver's name; anything else is its description
    "HOST_INFO": lambda t: {"driver": t} if re.fullmatch(r"[a-z][a-z0-9_\-]*", t) else {"text": t},
    # mpt3sas_cm0 / mpt2sas0 -> the driver that printed it
    "MPT_IOC": lambda t: {"driver": t.split("_")[0].rstrip("0123456789"), "adapter": t},
    # scmd(0x00000000d7a9f721), scmd(ffff8881...), (sc=ffff...): one spelling per command address
    "SCMD": lambda t: {"scmd": re.sub(r"^(?:scmd\(|\(sc=)(?:0x)?0*|\)$", "", t).lower() or "0"},
    # Pre-2.6.24 libata printed the registers in hex ("stat 0x51 err 0x40"): name the bits as today.
    "ATA_STATUS__HEX": lambda t: {"ata_status": "Busy" if _hex(t) & 0x80 else " ".join(n for b, n in ((0x40, "DRDY"), (0x20, "DF"), (0x08, "DRQ"), (0x02, "SENSE"), (0x01, "ERR")) if _hex(t) & b)},
    "ATA_ERROR__HEX": lambda t: {"ata_error": " ".join(n for b, n in ((0x80, "ICRC"), (0x40, "UNC"), (0x20, "MC"), (0x10, "IDNF"), (0x08, "MCR"), (0x04, "ABRT"), (0x01, "AMNF")) if _hex(t) & b)},
}



@dataclass
class GrammarSpec:
    name: str
    path: Path
    keywords: list[str]
    accept: list[dict] = field(default_factory=list)
    reject: list[str] = field(default_factory=list)


_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML was built with it


@cache
def grammar_specs() -> dict[str, GrammarSpec]:
    specs = {}
    for lark_path in sorted(grammars_dir().glob("*.lark")):
        examples_path = lark_path.with_suffix(".examples.yml")
        if not examples_path.exists():
            continue  # shared terminal files carry no examples of their own
        data = yaml.load(examples_path.read_text(), Loader=_FAST_LOADER) or {}
        specs[lark_path.stem] = GrammarSpec(
            name=lark_path.stem, path=lark_path, keywords=list(data.get("keywords") or []),
            accept=list(data.get("accept") or []), reject=list(data.get("reject") or []))
    return specs


def kernel_families() -> list[str]:
    specs = grammar_specs()
    names = [n for n in specs if specs[n].keywords]
    return sorted(names, key=lambda n: (FAMILY_ORDER.index(n) if n in FAMILY_ORDER
                                        else 100 if n == FALLBACK_FAMILY else 99, n))


@cache
def parser_for(name: str, strict: bool = False) -> Lark:
    spec = grammar_specs()[name]
    return build_lark(spec.path.read_text(), start="start", maybe_placeholders=False, strict=strict)


def tree_to_event(tree: Tree) -> tuple[dict, list[Token]]:
    """Fields and kind of a parse tree, plus every token the tree kept, in text order."""
    event: dict = {}
    tokens: list[Token] = []
    kind_found = False
    for node in tree.iter_subtrees_topdown():
        if not kind_found:
            kind, detail = split_alias(str(node.data))
            if kind in EVENT_KINDS:
                event["kind"] = kind
                if detail:
                    event["detail"] = detail
                kind_found = True
        for child in node.children:
            if isinstance(child, Token):
                tokens.append(child)
                if child.type in CONVERTERS:
                    for key, value in _converted(child.type, str(child)).items():
                        event.setdefault(key, value)
    tokens.sort(key=lambda t: t.start_pos)
    return event, tokens


# A message's shape key is the message without its hex digits: numbers of any length and base,
# addresses and device letters (sda, sdb) share a key; the shapes under a key tell them apart.
_HEX_DIGITS = b"0123456789abcdefABCDEF"
_SHAPES_PER_KEY = 8
_CONVERTED_CACHE_SIZE = 4096
_converted_cache: dict[str, dict[str, dict]] = {name: {} for name in CONVERTERS}


def _converted(terminal: str, text: str) -> dict:
    """The fields CONVERTERS[terminal] makes of `text`, without None values, remembered: storms
    repeat the same H:C:T:L and device names. Callers must not change the dict."""
    cache = _converted_cache[terminal]
    found = cache.get(text)
    if found is None:
        if len(cache) >= _CONVERTED_CACHE_SIZE:
            cache.clear()
        found = cache[text] = {k: v for k, v in CONVERTERS[terminal](text).items() if v is not None}
    return found


class _Shape:
    """A message shape learnt from one lark parse, applied to later messages by one regex match.

    The regex is the parsed message itself with every token of a regex terminal (a number, a device
    name, a sense key, free text) replaced by that terminal's pattern, so a later message matches
    only when it differs in those tokens alone, and each such token still matches the terminal the
    grammar gave it; the keywords and punctuation between them must be the same. The first value of a field wins,
    as in tree_to_event; applying the field steps last to first with dict.update does just that.
    """

    __slots__ = ("regex", "base", "steps", "tokens")

    def __init__(self, regex, base: dict, steps: list, tokens: list[tuple[int, str]]):
        self.regex = regex
        self.base = base        # kind and detail
        self.steps = steps      # last to first: a group index and its terminal, or fixed fields
        self.tokens = tokens    # (group index, terminal) of every token the regex generalises

    @classmethod
    def learn(cls, message: str, event: dict, tokens: list[Token], tree_order: list[Token],
              terminal_patterns: dict[str, str]) -> "_Shape | None":
        pieces, position, group = [], 0, 0
        group_of: dict[int, int] = {}
        token_groups: list[tuple[int, str]] = []
        for token in tokens:
            if token.start_pos < position:
                return None  # overlapping tokens: nothing to learn from
            pieces.append(re.escape(message[position:token.start_pos]))
            text = str(token)
            pattern = terminal_patterns.get(token.type)
            if pattern is not None:
                group += 1
                group_of[id(token)] = group
                token_groups.append((group, token.type))
                pieces.append(f"({pattern})")
                group += re.compile(pattern).groups
            else:
                pieces.append(re.escape(text))
            position = token.end_pos
        pieces.append(re.escape(message[position:]))
        steps: list = []
        for token in reversed(tree_order):
            if token.type not in CONVERTERS:
                continue
            index = group_of.get(id(token))
            if index:
                steps.append((index, token.type))
            else:
                fixed = _converted(token.type, str(token))
                if steps and steps[-1][0] is None:
                    steps[-1] = (None, {**steps[-1][1], **fixed})  # consecutive fixed fields: one update
                elif fixed:
                    steps.append((None, fixed))
        base = {k: event[k] for k in ("kind", "detail") if k in event}
        return cls(re.compile("".join(pieces), re.DOTALL), base, steps, token_groups)

    def apply(self, message: str) -> dict | None:
        match = self.regex.fullmatch(message)
        if match is None:
            return None
        event: dict = {}
        for index, what in self.steps:
            event.update(what if index is None else _converted(what, match.group(index)))
        event.update(self.base)
        return event


class MessageParser:
    """Parses kernel messages with the family grammars; one instance per worker.

    Storms repeat a few message shapes with other numbers. A message is looked up by its shape
    (its text without hex digits) among the shapes earlier lark parses taught (_Shape); only a message of a new
    shape, or one its shape's regex refuses, goes to lark. Messages no grammar accepts are
    remembered exactly, so a storm of one unknown line costs one lark attempt per family.
    """

    def __init__(self, families: list[str] | None = None, shape_cache_size: int = 20000):
        self.families = families if families is not None else kernel_families()
        self._parsers = {name: parser_for(name) for name in self.families}
        self._terminal_patterns = {
            name: {t.name: t.pattern.to_regexp() for t in parser.terminals if t.pattern.type == "re"}
            for name, parser in self._parsers.items()}
        self._shapes: dict[tuple, list[tuple[str, _Shape]]] = {}
        self._refused: dict[tuple, None] = {}
        self._cache_size = shape_cache_size

    def parse(self, message: str, families=None) -> dict | None:
        return self.parse_shaped(message, families)[0]

    def terminal_patterns(self, family: str) -> dict[str, str]:
        """The regex of each regex terminal of a family's grammar, by terminal name."""
        return self._terminal_patterns[family]

    def parse_shaped(self, message: str, families=None) -> tuple[dict | None, str | None, _Shape | None]:
        """The event of `message`, the family that accepted it and the shape that reads messages
        like it (None when none was learnt)."""
        families = tuple(families) if families else tuple(self.families)
        key = (families, message.encode().translate(None, _HEX_DIGITS))
        known = self._shapes.get(key)
        if known:
            for family, shape in known:
                event = shape.apply(message)
                if event is not None:
                    event["family"] = event["grammar"] = family
                    return event, family, shape
        refusal = (families, message)
        if refusal in self._refused:
            return None, None, None
        for family in families:
            if family not in self._parsers:
                continue
            learnt = self._parse_family(family, message)
            if learnt is None:
                continue
            event, shape = learnt
            if shape is not None and len(known or ()) < _SHAPES_PER_KEY:
                if len(self._shapes) >= self._cache_size:
                    self._shapes.clear()
                self._shapes.setdefault(key, []).append((family, shape))
            event["family"] = event["grammar"] = family
            return event, family, shape
        if len(self._refused) >= self._cache_size:
            self._refused.clear()
        self._refused[refusal] = None
        return None, None, None

    def _parse_family(self, family: str, message: str) -> tuple[dict, _Shape | None] | None:
        try:
            tree = self._parsers[family].parse(message)
        except LarkError:
            return None
        event, tokens = tree_to_event(tree)
        if "kind" not in event:
            return None
        tree_order = [child for node in tree.iter_subtrees_topdown() for child in node.children
                      if isinstance(child, Token)]
        shape = _Shape.learn(message, event, tokens, tree_order, self._terminal_patterns[family])
        return event, shape


@cache
def default_parser() -> MessageParser:
    """One parser per process: building it compiles every grammar and terminal pattern."""
    return MessageParser()


def parse_line(text: str) -> list[dict]:
    """Frame and parse one pasted log line (used by `diagdisk decode line`)."""
    from .framing import frame_line
    from .enrich import enrich_event
    framed = frame_line(text)
    event = default_parser().parse(framed.message)
    if event is None:
        return []
    event["raw"] = text
    enrich_event(event)
    return [event]

