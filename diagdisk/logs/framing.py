"""Line framing: split a log line into its header (time, host, tag) and the kernel message.

Headers are the envelope the logging system put around a message, not storage knowledge, so they are
recognised here with anchored regular expressions; the message itself goes to the grammars.
Headers nest (rsyslog around a dmesg stamp, a test harness clock around dmesg), so framing strips
them repeatedly and keeps the most precise time it saw.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)}

_PRIORITIES = "emerg|alert|crit|err|error|warning|warn|notice|info|debug"

# BSD syslog and journalctl short / short-precise: "Mar  2 18:07:17[.123456] host tag[pid]: msg"
_BSD = re.compile(
    r"(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(?P<day>\d{1,2}) "
    r"(?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d+)? (?P<host>\S+) "
    r"(?:(?P<tag>[^\s:\[]+)(?:\[\d+\])?: ?|(?P<repeat>last message repeated (?P<times>\d+) times?))")
# RFC 3339 rsyslog and journalctl short-iso: "2024-03-02T18:07:17.123+01:00 host tag: msg";
# some templates put priority and facility words before a tag without a colon (no host).
_ISO = re.compile(
    r"(?P<date>\d{4}-\d\d-\d\d)[T ](?P<hms>\d\d:\d\d:\d\d)(?P<frac>[.,]\d+)?"
    r"(?P<tz>Z|[+-]\d\d:?\d\d)? +"
    r"(?:(?P<prio>" + _PRIORITIES + r") +\w+ +(?P<ptag>\S+) +"
    r"|(?P<host>\S+) (?P<tag>[^\s:\[]+)(?:\[\d+\])?: ?)")
# dmesg uptime stamp, also inside syslog messages ("kernel: [ 12.345] ...") and journal short-monotonic.
_UPTIME = re.compile(r"\[ *(?P<up>\d+\.\d+)\] ?")
# dmesg -T: "[Sat Mar  2 18:07:17 2024] ", in the locale dmesg ran in ("[Di Mär  2 ...]", "[mar. mars  2 ...]")
_DMESG_T = re.compile(
    r"\[(?P<wday>[^\W\d_]{2,4}\.?),? (?P<mon>[^\W\d_]{3,5}\.?) +(?P<day>\d{1,2}) (?P<hms>\d\d:\d\d:\d\d) (?P<year>\d{4})\] ?")
# Month abbreviations of the locales sosreports and pasted logs come from (glibc's %b): English,
# German, French, Spanish, Italian, Portuguese, Dutch, Polish, Czech, Swedish, Russian.
_LOCAL_MONTHS = {
    name: number
    for number, names in enumerate((
        "jan janv jän ene gen sty led янв", "feb fév févr fev lut úno февр фев", "mar mär mars mrt bře мар",
        "apr avr abr kwi dub апр", "may mai mag maj kvě май", "jun juin giu cze čvn июн", "jul juil lug lip čvc июл",
        "aug août ago sie srp авг", "sep sept set wrz zář сен", "oct okt ott out paź říj окт",
        "nov lis lis ноя", "dec déc dez dic gru pro дек"), start=1)
    for name in names.split()}
# an empty syslog field after the tag ("kernel: : sd 2:0:1:0: ...")
_EMPTY_FIELD = re.compile(r": (?=\S)")
# quote markers of text carried through mail ("> ", ">> ")
_QUOTE = re.compile(r"(?:> ?)+(?=\S)")
# `journalctl -o export`'s message field, and `journalctl -o json` records
_EXPORT_MESSAGE = re.compile(r"MESSAGE=")
_JOURNAL_JSON = re.compile(r'\{.*"MESSAGE" *:')
# raw /dev/kmsg or dmesg -r priority prefix "<3>"
_KMSG = re.compile(r"<\d{1,3}>")
# dmesg -x (--decode): facility and level, each padded to six ("kern  :err   : "), before the stamp
_DMESG_DECODE = re.compile(
    r"(?:kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|res[0-3]|local[0-7]) *:"
    r"(?:emerg|alert|crit|err|warn|notice|info|debug) *: ")
# A /dev/kmsg record as `cat /dev/kmsg` prints it: "6,1234,5678901,-;message", that is priority and
# facility, sequence number, monotonic time in microseconds, flags, perhaps more comma-separated
# fields, then the message; its dictionary follows on lines that start with one space
# (" SUBSYSTEM=scsi", " DEVICE=+scsi:2:0:1:0"). Documentation/ABI/testing/dev-kmsg.
_KMSG_RECORD = re.compile(r"(?P<prio>\d{1,4}),(?P<seq>\d+),(?P<usec>\d+),[^;,]*(?:,[^;]*)?;")
_KMSG_DICT = re.compile(r" [A-Z][A-Z0-9_]*=")
# The record's text escapes '\\' and non-printable bytes as \xNN; a newline inside one printk (the
# libata cmd/res pair) becomes #012, as rsyslog writes it, which the readers split on.
_KMSG_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})")
# journalctl -o short-monotonic: "[ 1234.567890] myhost kernel: msg" (or "myhost name[pid]: msg").
# Only these tags are taken: a kernel message may start with two words and a colon too
# ("scsi host2: ahci", "nvme nvme0: ...", "usb 1-1: ...").
_MONOTONIC_HOST_TAG = re.compile(r"(?P<host>[^\s:\[\]]+) (?P<tag>kernel|[^\s:\[\]]+(?=\[\d+\]))(?:\[\d+\])?:(?: |$)")
# a bare tag left when a journal was printed without timestamps ("kernel: msg")
_BARE_TAG = re.compile(r"kernel: ?")
# a syslog program tag and its colon ("kernel: ", "multipathd[812]: ")
_TAG = r"(?P<tag>[^\s:\[]+)(?:\[\d+\])?: ?"
# OpenWrt/busybox logread: "Thu Oct 10 12:36:26 2024 kern.info kernel: "
_LOGREAD = re.compile(
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(?P<day>\d{1,2}) "
    r"(?P<hms>\d\d:\d\d:\d\d) (?P<year>\d{4}) [a-z0-9]+\.[a-z]+ " + _TAG)
# syslog pasted without its date: "14:04:39 raisin kernel: "
_CLOCK_HOST_TAG = re.compile(r"\d\d:\d\d:\d\d(?:\.\d+)? (?P<host>[\w.-]+) " + _TAG)
# CONFIG_PRINTK_CALLER: "[    T1] ", "[  C3] "
_CALLER_ID = re.compile(r"\[ *[TC]\d{1,7}\] ?")
# dmesg -H (--human): "[Aug28 17:07] " at each new minute, "[  +0.000004] " relative in between
_DMESG_H = re.compile(r"\[(?:(?P<mon>[A-Z][a-z]{2})(?P<day>\d{1,2}) (?P<hm>\d\d:\d\d)| *\+(?P<rel>\d+\.\d+))\] ?")
# a test harness or console clock before a dmesg stamp: "04:30:32.34 [ 7194.579886] ..."
_CONSOLE_CLOCK = re.compile(r"\d\d:\d\d:\d\d(?:\.\d+)? (?=\[)")

# Terminal control sequences (ECMA-48) that `dmesg --color=always`, script(1), tmux and screen
# captures leave in a log: CSI (colours "ESC [ 1;31 m", cursor moves, "ESC [ 2 J"), control strings
# (an OSC window title "ESC ] 0;title BEL", DCS, APC, PM, screen's "ESC k title ESC backslash") ended by BEL
# or ST or the end of the line, character set designations ("ESC ( B") and the other two-byte
# escapes ("ESC c", "ESC 7"). They frame nothing and mean nothing to the grammars.
TERMINAL_ESCAPE = (r"\x1b(?:\[[0-?]*[ -/]*[@-~]|[\]PX^_k][^\x07\x1b\n]*(?:\x07|\x1b\\)?"
                   r"|[ -/]+[0-~]|[0-~])")
_TERMINAL_ESCAPE = re.compile(TERMINAL_ESCAPE)
# SGR alone (colours and bold: "ESC [ 0 m", "ESC [ 1;31 m", "ESC [ 38:5:208 m"): what dmesg --color
# and coloured prompts write. It is removed from the text a reader keeps as evidence too; the other
# sequences stay there, shown escaped, for what they are.
TERMINAL_COLOUR = rb"\x1b\[[0-9;:]*m"

# Text pasted through web pages and mail: typographic quotes are dropped, dashes made ASCII.
_TYPOGRAPHY = str.maketrans({"\u201c": None, "\u201d": None, "\u201e": None, "\u2018": None,
                             "\u2019": None, "\u2013": "-", "\u2014": "-", "\u00a0": " "})


@dataclass(slots=True)
class Framed:
    """One physical line split into what the header says and the message."""

    message: str
    header: str | None = None          # which header style was found: syslog, rfc3339, dmesg, ...
    host: str | None = None
    tag: str | None = None
    uptime: float | None = None
    wall: datetime | None = None        # complete wall-clock time when the header carries a year
    month_day_time: tuple[int, int, str, str] | None = None  # syslog time without a year
    repeat: int | None = None           # "last message repeated N times"
    indented: bool = False
    bad_header: str | None = None       # a header number out of range ("Mar 99 99:99:99"): what it was


# An uptime past this (544 years) is no uptime: the kernel's clock is a u64 of nanoseconds, and the
# records count seconds in 64-bit integers.
MAX_UPTIME_SECONDS = 1 << 34
_MAX_REPEAT = 1 << 32


def valid_day_time(day: str | bytes, hms: str | bytes) -> bool:
    """Whether a syslog day of the month and HH:MM:SS (digits, as the header patterns take them)
    name a time: day 1-31, hour 0-23, minute 0-59, second 0-60 (a leap second)."""
    return 1 <= int(day) <= 31 and int(hms[:2]) < 24 and int(hms[3:5]) < 60 and int(hms[6:8]) <= 60


def _month_day_time(framed: Framed, month: str, day: str, hms: str, frac: str | None) -> None:
    """Set the syslog time of `framed`, or say why its header holds none (day 99, hour 25)."""
    if valid_day_time(day, hms):
        framed.month_day_time = (MONTHS[month], int(day), hms, frac or "")
    else:
        framed.bad_header = f"syslog stamp {month} {day} {hms}"


def _uptime(framed: Framed, text: str) -> None:
    """Set the uptime of `framed` from a dmesg stamp's seconds, or say why it holds none."""
    if len(text) > 24 or float(text) >= MAX_UPTIME_SECONDS:
        framed.bad_header = f"uptime stamp [{text if len(text) <= 24 else text[:24] + '...'}]"
    else:
        framed.uptime = float(text)


def normalize_text(text: str) -> str:
    if text.isascii():
        return text
    return text.translate(_TYPOGRAPHY)


# The two headers that make up nearly every line of a sosreport, matched in one step each (see
# _frame_common); anything else, or anything after them that framing would strip too, takes the
# general loop.
_BSD_COMMON = re.compile(
    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(\d{1,2}) (\d\d:\d\d:\d\d)(\.\d+)? (\S+) "
    r"([^\s:\[]+)(?:\[\d+\])?: ?(?:\[ *(\d+\.\d+)\] ?)?")
_ISO_COMMON = re.compile(
    r"(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?) +(\S+) "
    r"([^\s:\[]+)(?:\[\d+\])?: ?(?:\[ *(\d+\.\d+)\] ?)?")
_ISO_PARTS = re.compile(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)([.,]\d+)?(Z|[+-]\d\d:?\d\d)?")


def strip_terminal_escapes(text: str) -> str:
    """The text without terminal control sequences (colours, titles, cursor moves); a lone ESC or
    any other control character stays, for the outputs to show escaped."""
    return _TERMINAL_ESCAPE.sub("", text) if "\x1b" in text else text


def frame_line(line: str) -> Framed:
    text = strip_terminal_escapes(normalize_text(line.rstrip("\r\n")))
    framed = _frame_common(text) or _frame_general(text)
    if framed.message[:2] == ": " and framed.header in ("syslog", "rfc3339"):
        framed.message = framed.message[2:].lstrip()
    return framed


def _dated(framed: Framed, year: str, month: int, day: str, hms: str, shown: str) -> None:
    """A stamp with its year: its time, or the warning that it names no real time."""
    framed.wall = _valid_datetime(int(year), month, int(day), *map(int, hms.split(":")))
    if framed.wall is None:
        framed.bad_header = f"time stamp {shown}"


def month_number(name: str) -> int | None:
    """The month of an abbreviation in any of the locales above (Mar, Mär, mars, мар)."""
    return MONTHS.get(name) or _LOCAL_MONTHS.get(name.lower().rstrip("."))


def _frame_common(text: str) -> Framed | None:
    """A BSD syslog or RFC 3339 header, perhaps with a dmesg stamp, then the message; None when the
    line is anything else, or more header follows that only the general loop strips."""
    first = text[:1]
    if first.isalpha():
        m = _BSD_COMMON.match(text)
        if m is None:
            return None
        framed = Framed(message="", header="syslog", host=m[5], tag=m[6])
        _month_day_time(framed, m[1], m[2], m[3], m[4])
    elif first.isdigit():
        m = _ISO_COMMON.match(text)
        if m is None:
            return None
        framed = Framed(message="", header="rfc3339", host=m[2], tag=m[3], wall=_iso_datetime(m[1]))
        if framed.wall is None:
            framed.bad_header = f"time stamp {m[1]}"
    else:
        return None
    rest = text[m.end():]
    if rest[:1] in ("<", "[") or rest[:1].isdigit():
        return None
    if m.lastindex == 7 and first.isalpha() or m.lastindex == 4 and not first.isalpha():
        _uptime(framed, m[m.lastindex])
    stripped = rest.lstrip()
    framed.indented = len(stripped) != len(rest)
    framed.message = stripped.rstrip()
    return framed


def _iso_datetime(stamp: str) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp)
    except ValueError:  # what fromisoformat refuses, _parse_iso judges (an impossible date is None)
        m = _ISO_PARTS.fullmatch(stamp)
        return _parse_iso(m[1], m[2], m[3], m[4]) if m else None


def _unescape_kmsg(match: re.Match) -> str:
    code = int(match[1], 16)
    if code == 0x0A:
        return "#012"
    return chr(code) if 0x20 <= code < 0x7F else match[0]


def _frame_kmsg(text: str) -> Framed | None:
    """A /dev/kmsg record or one line of its dictionary (which carries no message); None otherwise."""
    m = _KMSG_RECORD.match(text)
    if m is not None:
        message = text[m.end():]
        if "\\x" in message:
            message = _KMSG_ESCAPE.sub(_unescape_kmsg, message)
        stripped = message.lstrip()
        framed = Framed(message=stripped.rstrip(), header="kmsg", indented=len(stripped) != len(message))
        usec = m["usec"]
        if len(usec) > 20 or int(usec) >= MAX_UPTIME_SECONDS * 1_000_000:
            framed.bad_header = f"kmsg time {usec if len(usec) <= 24 else usec[:24] + '...'} us"
        else:
            framed.uptime = int(usec) / 1e6
        return framed
    if _KMSG_DICT.match(text):
        return Framed(message="", header="kmsg")
    return None


def _frame_general(text: str) -> Framed:
    if text[:1].isdigit() or text[:1] == " ":
        framed = _frame_kmsg(text)
        if framed is not None:
            return framed
    if text[:1] == ">":
        quote = _QUOTE.match(text)
        if quote:
            text = text[quote.end():]
    if text[:8] == "MESSAGE=":
        return Framed(message=text[8:].strip(), header="journal_export")
    if text[:1] == "{" and _JOURNAL_JSON.match(text):
        framed = _frame_journal_json(text)
        if framed is not None:
            return framed
    framed = Framed(message=text)
    pos = 0
    progress = True
    timed = False  # a time header was seen (its date may still be impossible, like Feb 30)
    while progress:
        progress = False
        m = _KMSG.match(text, pos)
        if m:
            pos = m.end()
            progress = True
            framed.header = framed.header or "kmsg"
            continue
        m = _DMESG_DECODE.match(text, pos) if pos == 0 else None
        if m:
            pos = m.end()
            progress = True
            continue
        if not timed:
            m = _BSD.match(text, pos)
            if m:
                timed = True
                framed.header = "syslog"
                framed.host = m["host"]
                _month_day_time(framed, m["mon"], m["day"], m["hms"], m["frac"])
                if m["repeat"]:
                    times = m["times"]
                    framed.repeat = int(times) if len(times) <= 10 and int(times) < _MAX_REPEAT else None
                    if framed.repeat is None:
                        framed.bad_header = f"repeat count {times[:24]}"
                    framed.message = ""
                    return framed
                framed.tag = m["tag"]
                pos = m.end()
                progress = True
                continue
            m = _ISO.match(text, pos)
            if m:
                timed = True
                framed.header = "rfc3339"
                framed.host = m["host"]
                framed.tag = m["tag"] or m["ptag"]
                framed.wall = _parse_iso(m["date"], m["hms"], m["frac"], m["tz"])
                if framed.wall is None:
                    framed.bad_header = f"time stamp {text[m.start('date'):max(m.end('hms'), m.end('frac'), m.end('tz'))]}"
                pos = m.end()
                progress = True
                continue
            m = _DMESG_T.match(text, pos)
            if m and month_number(m["mon"]):
                timed = True
                framed.header = framed.header or "dmesg_T"
                _dated(framed, m["year"], month_number(m["mon"]), m["day"], m["hms"], m[0].strip())
                pos = m.end()
                progress = True
                continue
        m = _LOGREAD.match(text, pos) if framed.header is None and pos == 0 else None
        if m:
            # OpenWrt/busybox logread: "Thu Oct 10 12:36:26 2024 kern.info kernel: ..."
            framed.header = "logread"
            framed.tag = m["tag"]
            _dated(framed, m["year"], MONTHS[m["mon"]], m["day"], m["hms"], text[m.start("mon"):m.end("year")])
            timed = True
            pos = m.end()
            progress = True
            continue
        m = _CLOCK_HOST_TAG.match(text, pos) if framed.header is None and pos == 0 else None
        if m:
            # syslog pasted without its date: the host and tag frame it, the time alone dates nothing
            framed.header = "clock_only"
            framed.host, framed.tag = m["host"], m["tag"]
            pos = m.end()
            progress = True
            continue
        m = _DMESG_H.match(text, pos) if framed.header is None else None
        if m and (m["rel"] is not None or m["mon"] in MONTHS):
            # dmesg -H: the first line of a minute is stamped "[Aug28 17:07]", the next ones by
            # their distance from the line before ("[  +8.063930]"): only the former has a time
            framed.header = "dmesg_H"
            if m["mon"]:
                _month_day_time(framed, m["mon"], m["day"], m["hm"] + ":00", None)
            pos = m.end()
            progress = True
            continue
        m = _CALLER_ID.match(text, pos)
        if m:
            # CONFIG_PRINTK_CALLER: "[    T1] " or "[  C3] " (the task or CPU that printed), after
            # the time stamp or, with the time switched off, alone
            framed.header = framed.header or "dmesg"
            pos = m.end()
            progress = True
            continue
        m = _CONSOLE_CLOCK.match(text, pos)
        if m:
            pos = m.end()
            progress = True
            continue
        if framed.uptime is None:
            m = _UPTIME.match(text, pos)
            if m:
                outermost = framed.header is None
                framed.header = framed.header or "dmesg"
                _uptime(framed, m["up"])
                pos = m.end()
                progress = True
                if outermost:
                    m = _MONOTONIC_HOST_TAG.match(text, pos)
                    if m:  # the header style stays "dmesg": the stamp is the same
                        framed.host, framed.tag = m["host"], m["tag"]
                        pos = m.end()
                continue
        if framed.header is None:
            m = _BARE_TAG.match(text, pos)
            if m:
                framed.header = "tag_only"
                framed.tag = "kernel"
                pos = m.end()
                progress = True
    rest = text[pos:]
    stripped = rest.lstrip()
    framed.indented = len(stripped) != len(rest)
    framed.message = stripped.rstrip()
    return framed


def _frame_journal_json(text: str) -> Framed | None:
    """One record of `journalctl -o json`: the message, its wall time (__REALTIME_TIMESTAMP, in
    microseconds) and its kernel uptime (_SOURCE_MONOTONIC_TIMESTAMP)."""
    import json
    try:
        record = json.loads(text)
    except ValueError:
        return None
    message = record.get("MESSAGE") if isinstance(record, dict) else None
    if isinstance(message, list):  # a message that is not UTF-8 comes as a list of byte values
        message = bytes(b for b in message if isinstance(b, int) and 0 <= b < 256).decode("utf-8", "replace")
    if not isinstance(message, str):
        return None
    framed = Framed(message=message.strip(), header="journal_json", host=record.get("_HOSTNAME"),
                    tag="kernel" if record.get("_TRANSPORT") == "kernel" else record.get("SYSLOG_IDENTIFIER"))
    try:
        framed.wall = datetime.fromtimestamp(int(record["__REALTIME_TIMESTAMP"]) / 1e6, tz=timezone.utc)
    except (KeyError, TypeError, ValueError, OverflowError, OSError):
        pass
    try:
        framed.uptime = int(record["_SOURCE_MONOTONIC_TIMESTAMP"]) / 1e6
    except (KeyError, TypeError, ValueError, OverflowError):
        pass
    return framed


def _valid_datetime(*parts: int, tzinfo=None) -> datetime | None:
    """The datetime, or None for an impossible one (Feb 30, hour 99, year 0): the line keeps its
    header and message and only loses its time."""
    try:
        return datetime(*parts, tzinfo=tzinfo)
    except (ValueError, OverflowError):
        return None


def _parse_iso(date: str, hms: str, frac: str | None, tz: str | None) -> datetime | None:
    year, month, day = map(int, date.split("-"))
    hour, minute, second = map(int, hms.split(":"))
    micro = int((frac[1:] + "000000")[:6]) if frac else 0
    tzinfo = None
    if tz:
        if tz == "Z":
            tzinfo = timezone.utc
        else:
            sign = 1 if tz[0] == "+" else -1
            digits = tz[1:].replace(":", "")
            offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
            if offset >= timedelta(hours=24):
                return None
            tzinfo = timezone(sign * offset)
    return _valid_datetime(year, month, day, hour, minute, second, micro, tzinfo=tzinfo)
