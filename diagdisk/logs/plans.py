"""Whole-line plans: read a storm's lines with one regex each.

A failing disk repeats the same few lines with other numbers, times and device letters. When the
reader has framed a candidate line (a BSD syslog or RFC 3339 header, perhaps a dmesg stamp) and a
grammar shape has read its message, the line itself becomes a plan: its text as a regex in which
every part that may change (the header's time, each token of a regex terminal) is a run of hex
digits and the rest is literal. The plan is kept under the line's shape key (its bytes without hex
digits, and the families its keywords name); a later line with the same key is read by one match.

What a plan captures is checked the first time each text is seen: a time must look like a time,
a token must match its terminal (grammars/*.lark) before it is converted into fields, so a plan
reads a line exactly as framing and the grammar do, or not at all (the general way then reads it,
and may teach another plan). A test compares the two on the corpus and on generated storms. Lines
that need more than themselves (a continuation, a device named on the line before, a message cut
in two) never get a plan, and a plan is used only when the next line starts with a header, so that
nothing can continue the message.
"""

from __future__ import annotations

import itertools
import operator
import re

from ..errors import NumberOutOfRange
from .clock import wall_epoch
from .framing import _BSD_COMMON, _ISO_COMMON, MAX_UPTIME_SECONDS, MONTHS, _iso_datetime, valid_day_time
from .grammar import _HEX_DIGITS, CONVERTERS, _Shape

_MAX_PLANS = 20000
_MAX_PER_KEY = 8
_MAX_REFUSED = 3
_CACHE_SIZE = 4096
_NOT_MORE_HEADER = rb"(?![<\[0-9])"
# A line that may only name a SCSI device (grammars/scsi.lark scsi_context; logread: a message
# without a device takes it from such a neighbour): a plan for a message without a device is used
# only when no neighbour could be one.
MAY_NAME_A_SCSI_DEVICE = re.compile(rb"(?:sd|sr|st|ses|sg|osst|ch|scsi) \d|scsi\d")
_MONTH_NAMES = tuple(month.encode() for month in MONTHS)
# The start of a BSD syslog or RFC 3339 line: framing finds a header there.
_BSD_START = (rb"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)? \S+ "
              rb"(?:[^\s:\[]+(?:\[\d+\])?:|last message repeated)")
_ISO_START = rb"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? +\S+ [^\s:\[]+(?:\[\d+\])?:"
# Terminals whose fields differ from one copy of a message to the next (records.VOLATILE_FIELDS):
# converted one by one; the other tokens of a line are converted together, once per combination.
_VOLATILE_TERMINALS = frozenset({"SECTOR", "SECTOR__HEX", "TAG", "CDB_BYTES", "SENSE_BYTES", "SCMD", "TASKFILE"})
_VOLATILE_FIELDS = ("sector", "tag", "cdb_hex", "sense_hex", "scmd", "taskfile")
_HEX_RUN = re.compile(rb"([0-9a-fA-F]+)")
_HEADER_PARTS = {  # what a header part must look like, checked once per distinct text
    "day": re.compile(rb" ?\d{1,2}"), "hms": re.compile(rb"\d\d:\d\d:\d\d"), "frac": re.compile(rb"\.\d+"),
    "uptime": re.compile(rb"\d+\.\d+"),
    "stamp": re.compile(rb"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"),
}


def _generalised(text: bytes) -> bytes:
    """A pattern for `text` in which each run of hex digits may be any run of hex digits."""
    return b"".join(b"[0-9a-fA-F]+" if index % 2 else re.escape(part)
                    for index, part in enumerate(_HEX_RUN.split(text)) if part)


class _Token:
    """A token whose text changes from line to line (a sector, a tag): what its captured text
    becomes, or None when the text does not match the token's terminal. Look in `cache` first."""

    __slots__ = ("terminal", "fullmatch", "convert", "cache")

    def __init__(self, terminal: str, pattern: str):
        if not checkable_alone(pattern):
            raise ValueError(f"terminal {terminal} looks around: its text cannot be checked alone")
        self.terminal = terminal
        self.fullmatch = re.compile(pattern).fullmatch
        self.convert = CONVERTERS.get(terminal)
        self.cache: dict[bytes, dict | None] = {}

    def read(self, text: bytes) -> dict | None:
        # most texts of such a token are new (sectors): converted directly, not through the
        # grammar's cache of converted tokens, which they would only churn
        if len(self.cache) >= _CACHE_SIZE:
            self.cache.clear()
        decoded = text.decode()
        if not self.fullmatch(decoded):
            found = None
        elif self.convert is None:
            found = {}
        else:
            try:
                found = self.convert(decoded)
                if None in found.values():  # rare: most converters give one field, never None
                    found = {name: value for name, value in found.items() if value is not None}
            except NumberOutOfRange:
                found = None  # the general way reads the line, and warns
        self.cache[text] = found
        return found


def checkable_alone(pattern: str) -> bool:
    """A terminal whose pattern looks at no text around its own can be checked on its text alone."""
    return not any(look in pattern for look in ("(?=", "(?!", "(?<"))


class LinePlan:
    __slots__ = ("line_regex", "followed_regex", "syslog", "month", "header", "message_group", "shape",
                 "stable_key", "checks", "volatile", "combinations", "family", "serial", "needs_context",
                 "time_groups", "uptime_group", "pid_group", "plain_time")

    def __init__(self, line: bytes, family: str, shape: _Shape, terminal_patterns: dict[str, str]):
        text = line.decode("ascii")
        self.syslog = line.startswith(_MONTH_NAMES)
        header = (_BSD_COMMON if self.syslog else _ISO_COMMON).match(text)
        header_end = header.end()
        message_start = header_end + len(text[header_end:]) - len(text[header_end:].lstrip())
        message = shape.regex.fullmatch(text, message_start)
        if message is None:
            raise ValueError("the shape does not read this line's message")
        self.month = MONTHS[header[1]] if self.syslog else None
        spans: list[tuple[int, int, str, object]] = [(header_end, header_end, "boundary", None),
                                                     (message_start, message_start, "message", None)]
        parts = (("day", 2), ("hms", 3), ("frac", 4), ("uptime", 7)) if self.syslog else (("stamp", 1), ("uptime", 4))
        for role, group in parts:
            if header[group] is not None:
                spans.append((*header.span(group), role, None))
        tag_end = header.end(6 if self.syslog else 3)
        if text[tag_end:tag_end + 1] == "[":  # the pid of "multipathd[1234]:" changes every line
            spans.append((tag_end + 1, text.index("]", tag_end), "pid", None))
        for group, terminal in shape.tokens:
            start, end = message.span(group)
            # a token that fills a field which changes from line to line (a sector), or no field at
            # all (a count, an address), is checked alone; the others are read together, in context
            alone = (terminal in _VOLATILE_TERMINALS or terminal not in CONVERTERS) \
                and checkable_alone(terminal_patterns[terminal])
            spans.append((start, end, "volatile" if alone else "stable",
                          _Token(terminal, terminal_patterns[terminal]) if alone else None))
        spans.sort(key=lambda span: (span[0], span[2] not in ("boundary", "message"), span[2] != "boundary"))
        pieces, position = [], 0
        roles: list[tuple[str, object]] = []
        for start, end, role, what in spans:
            pieces.append(re.escape(line[position:start]))
            if role == "boundary":
                pieces.append(_NOT_MORE_HEADER)  # what framing would strip as more header
                position = start
                continue
            if role != "message" and (start < position or (start == position and roles and roles[-1][0] != "message")):
                raise ValueError("adjacent generalised parts could split differently")
            pieces.append(b"(" + _generalised(line[start:end]) + b")" if role != "message" else b"()")
            roles.append((role, what))
            position = end
        pieces.append(re.escape(line[position:]))
        pattern = b"".join(pieces)
        self.line_regex = re.compile(pattern)
        # the same line, when the next line starts with a header of the same kind: then nothing
        # continues this line's message, which the reader would otherwise have to look at
        self.followed_regex = re.compile(pattern + b"(?=\n" + (_BSD_START if self.syslog else _ISO_START) + b")")
        self.header = {role: index for index, (role, _) in enumerate(roles)
                       if role not in ("stable", "volatile", "message")}
        # the header's time as one slice of the line (month .. fraction, or the RFC 3339 stamp):
        # the key of the times cache, cheaper than a tuple of its parts
        time_roles = ("day", "hms", "frac") if self.syslog else ("stamp",)
        self.time_groups = (min(self.header[r] for r in time_roles if r in self.header) + 1,
                            max(self.header[r] for r in time_roles if r in self.header) + 1)
        self.uptime_group = self.header.get("uptime")
        self.pid_group = self.header.get("pid")
        self.plain_time = self.uptime_group is None and self.pid_group is None  # times() has nothing to check
        self.message_group = next(index for index, (role, _) in enumerate(roles) if role == "message") + 1
        stable = [index for index, (role, _) in enumerate(roles) if role == "stable"]
        self.stable_key = operator.itemgetter(*stable) if stable else _no_key
        self.checks = [(index, what) for index, (role, what) in enumerate(roles)
                       if role == "volatile" and what.terminal not in CONVERTERS]
        self.volatile = [(index, what) for index, (role, what) in enumerate(roles)
                         if role == "volatile" and what.terminal in CONVERTERS]
        self.shape = shape
        self.family = family
        self.combinations: dict = {}
        self.serial = next(_SERIALS)
        self.needs_context = False  # its events name no device: a neighbouring line might

    def hit(self, match, times: dict, raw: bytes = b"") -> "PlanHit | None":
        """What a match of this plan's regexes read (of the line `raw`), or None when a captured
        text is not what framing or the grammar would accept there."""
        groups = match.groups()
        key = self.stable_key(groups)
        fields = self.combinations.get(key, False)
        if fields is False:
            fields = self._stable_fields(match)
            if len(self.combinations) >= _CACHE_SIZE:
                self.combinations.clear()
            self.combinations[key] = fields
        if fields is None:
            return None
        for index, token in self.checks:
            checked = token.cache.get(groups[index], False)
            if checked is None or checked is False and token.read(groups[index]) is None:
                return None
        volatile = []
        for index, token in self.volatile:
            converted = token.cache.get(groups[index]) or token.read(groups[index])
            if converted is None:
                return None
            volatile.append(converted)
        # times(), with its shared cache looked up here: the path of every line of a storm
        stamp = match.string[match.start():match.end(self.time_groups[1])]
        when = times.get(stamp)
        if when is None or not self.plain_time:
            when = self.times(match, times)
            if when is None:
                return None
        elif when is False:
            return None
        return PlanHit(self, key, fields, volatile, when, raw)

    def _stable_fields(self, match) -> dict | None:
        """What the grammar's shape reads in this line's message, less the fields of the tokens
        that change from line to line; checked in context, once per combination of texts."""
        message = match.string[match.start(self.message_group):match.end()].decode()
        try:
            event = self.shape.apply(message)
        except NumberOutOfRange:
            return None
        if event is None:
            return None
        for name in _VOLATILE_FIELDS:
            event.pop(name, None)
        event["family"] = event["grammar"] = self.family
        return event

    def times(self, match, times: dict) -> dict | None:
        """The header's time fields, as framing puts them in an event (a dict shared by the lines
        of the same second: not to be changed); None when a header part is not a time."""
        # the line from its start (a syslog month, or the RFC 3339 date) to the end of its time:
        # the cache is shared by every plan, and a month is literal text in a syslog plan
        stamp = match.string[match.start():match.end(self.time_groups[1])]
        found = times.get(stamp)
        if found is None:
            found = times[stamp] = self._time_fields(match) or False
        if found is False:
            return None
        if self.pid_group is not None and not match.group(self.pid_group + 1).isdigit():
            return None
        if self.uptime_group is not None:
            uptime = match.group(self.uptime_group + 1)
            if not _HEADER_PARTS["uptime"].fullmatch(uptime) or len(uptime) > 24 \
                    or float(uptime) >= MAX_UPTIME_SECONDS:
                return None  # framing says why (an uptime out of range), the general way warns
            return {**found, "_uptime": float(uptime)}
        return found

    def _time_fields(self, match) -> dict | None:
        """What the header's time says, as framing puts it in an event; None when it is no time."""
        groups = match.groups()
        header = self.header
        if self.syslog:
            day, hms = groups[header["day"]], groups[header["hms"]]
            frac = groups[header["frac"]] if "frac" in header else b""
            if not (_HEADER_PARTS["day"].fullmatch(day) and _HEADER_PARTS["hms"].fullmatch(hms)
                    and (not frac or _HEADER_PARTS["frac"].fullmatch(frac)) and valid_day_time(day, hms)):
                return None
            return {"_mdt": (self.month, int(day), hms.decode(), frac.decode())}
        stamp = groups[header["stamp"]]
        if not _HEADER_PARTS["stamp"].fullmatch(stamp):
            return None
        moment = _iso_datetime(stamp.decode())
        if moment is None:
            return None  # no time: the general way reads the line, and warns
        # the whole second too, which clock.SourceClock would otherwise work out again
        return {"_wall": moment, "_wall_second": int(wall_epoch(moment))}


class PlanHit:
    """A line a plan read: its plan, the fields shared by every line of that plan with the same
    texts (do not change them), what its tokens that change line by line became, and its time.
    The reader hands these on as they are; `event()` makes the event dict the general way makes."""

    __slots__ = ("plan", "key", "fields", "volatile", "when", "line", "raw", "source")

    def __init__(self, plan: LinePlan, key: tuple, fields: dict, volatile: list[dict], when: dict,
                 raw: bytes = b""):
        self.plan = plan
        self.key = key
        self.fields = fields
        self.volatile = volatile
        self.when = when
        self.raw = raw

    def event(self) -> dict:
        event = dict(self.fields)
        # what every event of this plan with these texts shares: records.RecordBuilder finds their
        # record by it without hashing every field (stitching and decoding drop it when they add)
        event["_signature"] = (self.plan.serial, self.key)
        for converted in self.volatile:
            for name, value in converted.items():
                if name not in event:  # the first token that names a field gives it
                    event[name] = value
        event.update(self.when)
        event["source"], event["line"], event["raw"] = self.source, self.line, self.raw.decode()
        return event

    @property
    def sector(self) -> int | None:
        for converted in self.volatile:
            if "sector" in converted:
                return converted["sector"]
        return None


_SERIALS = itertools.count()


def _no_key(groups: tuple) -> tuple:
    return ()


class LinePlans:
    """The plans one reader has learnt, by line shape key."""

    def __init__(self) -> None:
        self._plans: dict[tuple, list[LinePlan]] = {}
        self._refused: dict[tuple, int] = {}
        self._times: dict = {}

    @staticmethod
    def key(families: frozenset, line: bytes) -> tuple:
        return (families, line.translate(None, _HEX_DIGITS))

    def read(self, key: tuple, line: bytes, text: bytes, start: int, end: int) -> PlanHit | None:
        """What a plan reads in the line text[start:end], if one does and the line after it starts
        with a header (so the message is all on this line); None sends it the general way."""
        plans = self._plans.get(key)
        # a line of a key with plans is ASCII with no NUL or CR (learn() keeps plans only for such
        # keys, and the hex digits the key leaves out are none of those): only an escaped newline
        # ("#012", whose digits the key leaves out) is left to look for
        if not plans or b"#012" in line:
            return None
        times = self._times
        if len(times) > _CACHE_SIZE:
            times.clear()
        for plan in plans:
            match = plan.followed_regex.match(text, start)
            if match is not None and match.end() == end:
                if plan.needs_context and MAY_NAME_A_SCSI_DEVICE.search(
                        text, text.rfind(b"\n", 0, max(start - 1, 0)) + 1, text.find(b"\n", end + 1)):
                    return None
                hit = plan.hit(match, times, line)
                if hit is not None:
                    return hit
        return None

    def learn(self, key: tuple, line: bytes, family: str, shape: _Shape, terminal_patterns: dict[str, str],
              expected: dict, needs_context: bool) -> None:
        """Keep a plan for `line`, if it reads `line` as `expected` (what framing and grammar read)."""
        plans = self._plans.get(key)
        if (plans is not None and len(plans) >= _MAX_PER_KEY) or self._refused.get(key, 0) >= _MAX_REFUSED \
                or not line.isascii() or b"\x00" in line or b"\r" in line \
                or not line.startswith(_MONTH_NAMES) and not line[:1].isdigit():
            return  # read() counts on the lines of a key with plans being ASCII without NUL or CR
        plan = self._plan_for(line, family, shape, terminal_patterns, expected)
        if plan is not None:
            plan.needs_context = needs_context
        if plan is None:
            # building a plan costs a regex compilation: a shape that keeps refusing is left alone
            if len(self._refused) >= _MAX_PLANS:
                self._refused.clear()
            self._refused[key] = self._refused.get(key, 0) + 1
            return
        if len(self._plans) >= _MAX_PLANS:
            self._plans.clear()
        self._plans.setdefault(key, []).append(plan)

    @staticmethod
    def _plan_for(line: bytes, family: str, shape: _Shape, terminal_patterns: dict[str, str],
                  expected: dict) -> LinePlan | None:
        try:
            plan = LinePlan(line, family, shape, terminal_patterns)
        except (ValueError, AttributeError, TypeError, re.error):
            return None  # a line this way of planning cannot describe: it keeps the general way
        match = plan.line_regex.fullmatch(line)
        hit = plan.hit(match, {}) if match is not None else None
        if hit is None:
            return None
        hit.source, hit.line, hit.raw = "", 0, line
        event = hit.event()
        for stamped in ("_signature", "_wall_second", "source", "line", "raw"):
            event.pop(stamped, None)
        return plan if event == expected else None
