"""sysstat's column names across its eras, mapped to one set of fields in one set of units.

Every reader goes through this table, so a column is read by its name, never by its position:
sar and iostat renamed and rescaled columns several times (sysstat 11.5.7 moved from sectors to kB:
rd_sec/s -> rkB/s, avgrq-sz in sectors -> areq-sz in kB, avgqu-sz -> aqu-sz; 12.1.2 removed svctm
and added discards; 12.3.1 added flushes). The fields, in the units every later stage uses:

    r_s w_s d_s f_s tps   operations per second (tps counts reads, writes and discards)
    rkb_s wkb_s dkb_s     kB per second
    areq_kb rareq_kb wareq_kb   average request size, kB
    aqu                   average queue length (requests in flight, queued or on the device)
    await r_await w_await d_await f_await   average time a request spent, issue to completion, ms
    svctm                 sysstat's service time, ms (never measured: %util x 10 / IOPS)
    util                  % of the interval the device had at least one request in flight
    rrqm_s wrqm_s         merged requests per second
"""

from __future__ import annotations

# column name (as printed, or as the sadf XML/JSON attribute) -> (field, factor to the field's unit)
COLUMNS: dict[str, tuple[str, float]] = {
    "tps": ("tps", 1.0),
    "r/s": ("r_s", 1.0), "w/s": ("w_s", 1.0), "d/s": ("d_s", 1.0), "f/s": ("f_s", 1.0),
    "rtps": ("r_s", 1.0), "wtps": ("w_s", 1.0), "dtps": ("d_s", 1.0),
    # kB
    "rkB/s": ("rkb_s", 1.0), "wkB/s": ("wkb_s", 1.0), "dkB/s": ("dkb_s", 1.0),
    "kB_read/s": ("rkb_s", 1.0), "kB_wrtn/s": ("wkb_s", 1.0), "kB_dscd/s": ("dkb_s", 1.0),
    "rkB": ("rkb_s", 1.0), "wkB": ("wkb_s", 1.0), "dkB": ("dkb_s", 1.0),   # sadf -x/-j (per second)
    # MB
    "rMB/s": ("rkb_s", 1024.0), "wMB/s": ("wkb_s", 1024.0), "dMB/s": ("dkb_s", 1024.0),
    "MB_read/s": ("rkb_s", 1024.0), "MB_wrtn/s": ("wkb_s", 1024.0), "MB_dscd/s": ("dkb_s", 1024.0),
    # 512-byte sectors ("blocks" in iostat's basic report)
    "rd_sec/s": ("rkb_s", 0.5), "wr_sec/s": ("wkb_s", 0.5), "dc_sec/s": ("dkb_s", 0.5),
    "rsec/s": ("rkb_s", 0.5), "wsec/s": ("wkb_s", 0.5), "dsec/s": ("dkb_s", 0.5),
    "Blk_read/s": ("rkb_s", 0.5), "Blk_wrtn/s": ("wkb_s", 0.5), "Blk_dscd/s": ("dkb_s", 0.5),
    "rd_sec": ("rkb_s", 0.5), "wr_sec": ("wkb_s", 0.5), "dc_sec": ("dkb_s", 0.5),
    # request size: sectors before 11.5.7, kB after
    "avgrq-sz": ("areq_kb", 0.5), "areq-sz": ("areq_kb", 1.0),
    "rareq-sz": ("rareq_kb", 1.0), "wareq-sz": ("wareq_kb", 1.0), "dareq-sz": ("dareq_kb", 1.0),
    "avgqu-sz": ("aqu", 1.0), "aqu-sz": ("aqu", 1.0),
    "await": ("await", 1.0), "r_await": ("r_await", 1.0), "w_await": ("w_await", 1.0),
    "d_await": ("d_await", 1.0), "f_await": ("f_await", 1.0),
    "svctm": ("svctm", 1.0),
    "%util": ("util", 1.0), "util-percent": ("util", 1.0), "util": ("util", 1.0),
    "rrqm/s": ("rrqm_s", 1.0), "wrqm/s": ("wrqm_s", 1.0),
}

# Columns that hold a size in kB (or sectors): with -h they carry a unit letter (k, M, G...).
SIZE_FIELDS = frozenset({"rkb_s", "wkb_s", "dkb_s", "areq_kb", "rareq_kb", "wareq_kb", "dareq_kb"})
# sysstat's unit letters (common.c units[]): s = sector, B = byte, k, M, G, T, P = kB x 1024^n
UNIT_TO_KB = {"s": 0.5, "B": 1 / 1024, "k": 1.0, "M": 1024.0, "G": 1024.0 ** 2, "T": 1024.0 ** 3,
              "P": 1024.0 ** 4}
DEVICE_COLUMNS = ("DEV", "Device:", "Device", "disk-device")
# iostat's basic report also prints totals since the last report; they are not rates
IGNORED = frozenset({"Blk_read", "Blk_wrtn", "Blk_dscd", "kB_read", "kB_wrtn", "kB_dscd", "MB_read",
                     "MB_wrtn", "MB_dscd", "%rrqm", "%wrqm", "%drqm", "drqm/s", "rqm/s", "Blk_w+d",
                     "kB_w+d", "MB_w+d", "Blk_w+d/s", "kB_w+d/s", "MB_w+d/s"})


def era_of(columns: list[str]) -> str:
    """The sysstat era a disk header belongs to, from the names it uses."""
    names = set(columns)
    if "f/s" in names or "f_await" in names:
        return "12.3.1+ (kB, discards, flushes, no svctm)"
    if "d/s" in names or "dkB/s" in names or "dareq-sz" in names:
        return "12.1.2+ (kB, discards, no svctm)" if "svctm" not in names else "12.0 (kB, discards)"
    if "areq-sz" in names or "aqu-sz" in names or "rareq-sz" in names:
        return "11.5.7+ (kB)"
    if "avgrq-sz" in names or "avgqu-sz" in names:
        return "< 11.5.7 (sectors)"
    if names & {"rd_sec/s", "rsec/s", "Blk_read/s"}:
        return "sectors, basic"
    return "kB, basic"
