"""Cohorts across hosts: what no single report shows.

Each analysed input says what its host holds (drive model and firmware, controller model and
firmware, the drivers its kernel used, enclosure models: diagdisk.fleet.job.holdings) and which
parts it blames (its suspects). A cohort is the hosts sharing one such value, or one value of a
column of the operator's inventory (rack, site, purchase batch). Per cohort:

- hosts, and failing hosts: hosts with a suspect of the cohort's part class (a drive cohort's
  failing hosts blame a drive of that model and firmware; a controller cohort's, the controller,
  its bus or path; a driver's, any part behind that driver; an enclosure's, the enclosure or its
  power; an inventory column's, any part);
- the rate with its 95 % Wilson score interval, and the base rate: the share of failing hosts
  among all hosts of that cohort kind;
- a one-sided exact binomial test of the rate against the base rate, and Benjamini-Hochberg
  across every cohort tested. A cohort is flagged when its q-value is within FDR_LEVEL and it has
  at least MIN_FAILING_HOSTS failing hosts.

Shared signatures: an error signature (event kind, sense key/ASC/ASCQ, ATA error or NVMe status,
driver) of hosts with a suspect, on MIN_PATTERN_HOSTS or more hosts of one cohort within
PATTERN_WINDOW_DAYS, is tested the same way against the signature's rate among the hosts that could
show it (those running its driver; every host when they are all in the cohort, unless the cohort
is a driver's or controller's, which holds its driver's hosts by what it is). It is a pattern
across hosts when it passes Benjamini-Hochberg among all signature tests, or, in a flagged
cohort, counting only the cohort's failing hosts, when it passes alone (the flag has paid for
the many tests). Each affected input's row carries one line naming the pattern (`fleet_pattern`).

Trends: per cohort, hosts reporting and hosts failing for the first time, per week; a cohort
rises when its new failures fall in the last RECENT_WEEKS weeks more than its reports in those
weeks and the kind's weekly rate of new failures allow (the conditional binomial test of two
Poisson rates), again under Benjamini-Hochberg.

Everything is computed with pandas from the rows of the inputs (fleet.parquet's rows, the
suspects and the holdings kept in each input's state file), so a resumed run recomputes it whole.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

# The conventional false discovery rate of Benjamini and Hochberg (1995): of the cohorts flagged,
# at most 5 % in expectation are flagged by chance.
FDR_LEVEL = 0.05
# Two hosts failing together is what one shared event gives (a power cut, a move of one rack, one
# box of cables); a pattern across hosts needs a third. Small cohorts are never flagged on one or
# two failures, whatever the test says.
MIN_FAILING_HOSTS = 3
MIN_PATTERN_HOSTS = 3
# A firmware or kernel rollout reaches a fleet within a maintenance cycle, a month: the hosts of a
# pattern show its signature within four weeks of each other.
PATTERN_WINDOW_DAYS = 28
# The recent part of the fleet's span whose new failures a trend compares with the rest; trends
# are tested only when the report dates span twice that.
RECENT_WEEKS = 4
# 95 % two-sided normal quantile, for the Wilson interval.
WILSON_Z = 1.959963984540054

# kind -> (part class, the FRU classes of suspects that count as that part failing)
DRIVE, CONTROLLER, DRIVER, ENCLOSURE = "drive", "controller", "driver", "enclosure"
BUILT_IN_KINDS = (DRIVE, CONTROLLER, DRIVER, ENCLOSURE)
PART_CLASSES = {
    DRIVE: "disk",
    CONTROLLER: "controller",          # the controller, its PCIe bus or its paths
    DRIVER: "behind the driver",      # any part whose controller that driver drives
    ENCLOSURE: "enclosure",            # the enclosure, expander or its power
}
INVENTORY_PART_CLASS = "any part"
CONTROLLER_FRUS = frozenset({"controller", "bus", "path"})
ENCLOSURE_FRUS = frozenset({"enclosure", "power"})
KIND_LABELS = {DRIVE: "drive firmware", CONTROLLER: "controller firmware", DRIVER: "driver and kernel",
               ENCLOSURE: "enclosure model"}


@dataclass
class CohortResult:
    cohorts: object                                   # pandas DataFrame: cohorts.parquet
    patterns: list[dict] = field(default_factory=list)  # patterns across hosts, most certain first
    row_patterns: dict[str, str] = field(default_factory=dict)  # input -> fleet_pattern
    row_pattern_ids: dict[str, str] = field(default_factory=dict)  # input -> its most certain pattern's id

    def flagged(self) -> list[dict]:
        frame = self.cohorts
        return frame[frame["flagged"]].to_dict("records") if len(frame) else []

    def rising(self) -> list[dict]:
        frame = self.cohorts
        return frame[frame["rising"]].to_dict("records") if len(frame) else []


# ---- statistics -----------------------------------------------------------------------------

def binomial_upper_tail(successes: int, trials: int, probability: float) -> float:
    """P(X >= successes) for X ~ Binomial(trials, probability), exact (log-gamma terms)."""
    if successes <= 0:
        return 1.0
    if successes > trials:
        return 0.0
    if probability <= 0.0:
        return 0.0
    if probability >= 1.0:
        return 1.0
    log_p, log_q = math.log(probability), math.log1p(-probability)
    log_n = math.lgamma(trials + 1)

    def term(i: int) -> float:
        return math.exp(log_n - math.lgamma(i + 1) - math.lgamma(trials - i + 1) + i * log_p + (trials - i) * log_q)

    if successes > trials * probability:
        # terms fall from the first one on: sum upward until they no longer count
        total = 0.0
        for i in range(successes, trials + 1):
            value = term(i)
            total += value
            if value < total * 1e-17:
                break
        return min(total, 1.0)
    # the lower side is the shorter sum
    lower = 0.0
    for i in range(successes - 1, -1, -1):
        value = term(i)
        lower += value
        if value < lower * 1e-17:
            break
    return min(max(1.0 - lower, 0.0), 1.0)


def wilson_interval(successes: int, trials: int, z: float = WILSON_Z) -> tuple[float, float]:
    """The Wilson score interval of a proportion (Wilson 1927): sound near 0 and for few trials."""
    if trials <= 0:
        return 0.0, 1.0
    share = successes / trials
    denominator = 1 + z * z / trials
    centre = (share + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def benjamini_hochberg(p_values: list[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values), in the order given."""
    count = len(p_values)
    order = sorted(range(count), key=lambda i: p_values[i])
    adjusted = [1.0] * count
    running = 1.0
    for rank in range(count, 0, -1):
        index = order[rank - 1]
        running = min(running, p_values[index] * count / rank)
        adjusted[index] = min(running, 1.0)
    return adjusted


# ---- what each input contributes -------------------------------------------------------------

def _memberships(row: dict, suspects: list[dict], holds: dict, inventory: dict[str, dict[str, str]]):
    """(kind, group, value, failing) for each cohort the input's host is in: group is what a
    cohort's siblings share (the drive model of a drive's firmware, the driver of a driver and
    kernel pair, the inventory column)."""
    frus = [(s.get("fru"), s.get("driver")) for s in suspects]
    failing_drives = {tuple(d) for d in holds.get("failing_drives") or []}
    for model, firmware in {tuple(d) for d in holds.get("drives") or []}:
        yield DRIVE, model, f"{model} {firmware}", (model, firmware) in failing_drives
    for model, firmware, driver in {tuple(c) for c in holds.get("controllers") or []}:
        failing = any(fru in CONTROLLER_FRUS and (not driver or not blamed or blamed == driver)
                      for fru, blamed in frus)
        yield CONTROLLER, model, f"{model} {firmware}", failing
    kernel = row.get("kernel") or "?"
    for driver in set(holds.get("drivers") or []):
        yield DRIVER, driver, f"{driver} {kernel}", any(blamed == driver for _, blamed in frus)
    enclosure_failing = any(fru in ENCLOSURE_FRUS for fru, _ in frus)
    for model in set(holds.get("enclosures") or []):
        yield ENCLOSURE, model, model, enclosure_failing
    for column, value in _inventory_of(inventory, row.get("host") or "").items():
        yield column, column, value, bool(frus)


def _inventory_of(inventory: dict[str, dict[str, str]], host: str) -> dict[str, str]:
    """The host's inventory values: by its name as the report gives it, else by the name without
    case or domain (an inventory of short names, reports of FQDNs, or the other way round)."""
    if host in inventory:
        return inventory[host]
    short = host.lower().split(".", 1)[0]
    return inventory.get(short) or {}


def inventory_kind(column: str) -> str:
    """An inventory column's cohort kind: its name, unless a built-in kind has it."""
    return f"inventory:{column}" if column in BUILT_IN_KINDS else column


ADVICE = {DRIVE: "or update the drive firmware", CONTROLLER: "or update the controller firmware",
          DRIVER: "or change the driver or kernel", ENCLOSURE: "or look at the enclosure model"}


def advice(kind: str, value: str) -> str:
    """What a pattern adds to a host's own verdict ("replace nvme1, " + this)."""
    return ADVICE.get(kind) or f"or look at what the hosts of {kind} {value} share"


def part_class_of(kind: str) -> str:
    return PART_CLASSES.get(kind, INVENTORY_PART_CLASS)


def kind_label(kind: str) -> str:
    return KIND_LABELS.get(kind, kind)


# ---- the computation -------------------------------------------------------------------------

COHORT_FIELDS = ["kind", "value", "part_class", "hosts", "failing_hosts", "rate", "rate_low", "rate_high",
                 "base_rate", "p_value", "q_value", "flagged", "signatures", "weekly", "rising",
                 "trend_p_value"]


def compute_cohorts(records: list[tuple[dict, list[dict], dict]],
                    inventory: dict[str, dict[str, str]] | None = None) -> CohortResult:
    """``records``: (row, suspects, holdings) of each input, as diagdisk.fleet.run keeps them;
    ``inventory``: host -> {cohort kind: value} (read_inventory)."""
    import pandas as pd
    inventory = dict(inventory or {})
    for name, values in list(inventory.items()):
        inventory.setdefault(name.lower().split(".", 1)[0], values)
    member_rows, signature_rows = [], []
    for row, suspects, holds in records:
        if row.get("outcome") != "analysed":
            continue
        host = row.get("host") or row.get("input")
        key = row.get("input")
        date = row.get("report_date")
        for kind, group, value, failing in _memberships(row, suspects or [], holds or {}, inventory):
            member_rows.append((key, host, date, kind, group, value, failing))
        if suspects:  # a fault's signature; what healthy hosts log is not one
            for signature, first in (holds or {}).get("signatures") or []:
                signature_rows.append((key, host, first or date, signature))
    members = pd.DataFrame.from_records(member_rows, columns=["input", "host", "date", "kind", "group", "value",
                                                              "failing"])
    if members.empty:
        return CohortResult(cohorts=_empty_frame())
    members["date"] = _timestamps(members["date"])
    hosts_of = (members.groupby(["kind", "group", "value", "host"], sort=False)["failing"].any()
                .reset_index())
    cohorts = (hosts_of.groupby(["kind", "group", "value"], sort=True)
               .agg(hosts=("host", "size"), failing_hosts=("failing", "sum")).reset_index())
    per_kind = hosts_of.groupby(["kind", "host"], sort=False)["failing"].any().groupby(level="kind")
    base = (per_kind.sum() / per_kind.size()).rename("base_rate")
    cohorts = cohorts.join(base, on="kind")
    cohorts["part_class"] = cohorts["kind"].map(part_class_of)
    cohorts["rate"] = cohorts["failing_hosts"] / cohorts["hosts"]
    intervals = [wilson_interval(int(k), int(n)) for k, n in zip(cohorts["failing_hosts"], cohorts["hosts"])]
    cohorts["rate_low"] = [low for low, _ in intervals]
    cohorts["rate_high"] = [high for _, high in intervals]
    cohorts["p_value"] = [binomial_upper_tail(int(k), int(n), float(p))
                          for k, n, p in zip(cohorts["failing_hosts"], cohorts["hosts"], cohorts["base_rate"])]
    cohorts["q_value"] = benjamini_hochberg(list(cohorts["p_value"]))
    cohorts["flagged"] = ((cohorts["q_value"] <= FDR_LEVEL) & (cohorts["failing_hosts"] >= MIN_FAILING_HOSTS)
                          & (cohorts["rate"] > cohorts["base_rate"]))

    patterns, row_patterns, row_pattern_ids, signatures_text = _patterns(members, hosts_of, cohorts, signature_rows)
    cohorts["signatures"] = [signatures_text.get((k, v), "") for k, v in zip(cohorts["kind"], cohorts["value"])]
    weekly, rising, trend_p = _trends(members, cohorts)
    cohorts["weekly"] = [weekly.get((k, v), "") for k, v in zip(cohorts["kind"], cohorts["value"])]
    cohorts["trend_p_value"] = [trend_p.get((k, v)) for k, v in zip(cohorts["kind"], cohorts["value"])]
    cohorts["rising"] = [rising.get((k, v), False) for k, v in zip(cohorts["kind"], cohorts["value"])]
    cohorts = cohorts.sort_values(["flagged", "p_value", "kind", "value"], ascending=[False, True, True, True],
                                  kind="mergesort")
    return CohortResult(cohorts=_typed(cohorts[COHORT_FIELDS].reset_index(drop=True)), patterns=patterns,
                        row_patterns=row_patterns, row_pattern_ids=row_pattern_ids)


def _timestamps(values):
    """Report dates (naive, UTC as the reports write them) and event times (with an offset) as
    naive UTC timestamps; what does not parse is NaT."""
    import pandas as pd
    parsed = pd.to_datetime(values, errors="coerce", utc=True, format="ISO8601")
    return parsed.dt.tz_localize(None)


def _patterns(members, hosts_of, cohorts, signature_rows):
    """Patterns across hosts (see the module's docstring); each input's pattern line and each
    cohort's signatures column."""
    import numpy as np
    import pandas as pd
    if not signature_rows:
        return [], {}, {}, {}
    signatures = pd.DataFrame.from_records(signature_rows, columns=["input", "host", "time", "signature"])
    signatures["time"] = _timestamps(signatures["time"])
    per_host = signatures.groupby(["host", "signature"], sort=False)["time"].min().reset_index()
    everyone = set(members["host"])
    populations = _signature_populations(per_host, hosts_of)
    signature_hosts = per_host.groupby("signature")["host"].agg(set).to_dict()
    member_sets = hosts_of.groupby(["kind", "group", "value"])["host"].agg(set).to_dict()
    pairs = hosts_of[["kind", "group", "value", "host", "failing"]].merge(per_host, on="host")
    flagged = set(zip(cohorts.loc[cohorts["flagged"], "kind"], cohorts.loc[cohorts["flagged"], "value"]))
    window = np.timedelta64(PATTERN_WINDOW_DAYS, "D")
    host_array = pairs["host"].to_numpy()
    time_array = pairs["time"].to_numpy()
    failing_array = pairs["failing"].to_numpy(dtype=bool)
    tested = []
    for (kind, group, value, signature), positions in sorted(
            pairs.groupby(["kind", "group", "value", "signature"], sort=False).indices.items()):
        in_flagged = (kind, value) in flagged
        if in_flagged:
            positions = positions[failing_array[positions]]  # the hosts whose failures the flag is about
        if len(positions) < MIN_PATTERN_HOSTS:
            tested.append(None)  # counted among the tests, never a pattern
            continue
        hosts = _best_window(host_array[positions], time_array[positions], window)
        driver, population = populations[signature]
        cohort = member_sets[(kind, group, value)]
        if population is None or (population <= cohort and kind not in (DRIVER, CONTROLLER)):
            # no host outside the cohort could show it: against the driver's hosts there is nothing
            # to compare with, so against the fleet. Not for a driver's or controller's cohort:
            # it holds its driver's hosts by what it is, and its driver's messages with them.
            driver, population = None, everyone
        share = len(signature_hosts[signature]) / len(population)
        size = len(cohort & population)
        p_value = binomial_upper_tail(len(hosts), size, share)
        tested.append({"kind": kind, "group": group, "value": value, "signature": signature, "hosts": hosts,
                       "cohort_hosts": size, "p_value": p_value, "share": share, "driver": driver,
                       "population": population, "in_flagged": in_flagged})
    q_values = benjamini_hochberg([t["p_value"] if t else 1.0 for t in tested])
    patterns = []
    for entry, q_value in zip(tested, q_values):
        if not entry or len(entry["hosts"]) < MIN_PATTERN_HOSTS \
                or len(entry["hosts"]) / entry["cohort_hosts"] <= entry["share"]:
            continue
        # in a flagged cohort the flag has paid for the multiple tests: a signature its failing
        # hosts share beyond chance is its pattern; elsewhere the signature must stand out among
        # every test of the run
        if (entry["p_value"] if entry["in_flagged"] else q_value) <= FDR_LEVEL:
            entry["q_value"] = q_value
            patterns.append(entry)
    patterns = _merged(patterns)
    if not patterns:
        return [], {}, {}, {}
    # hosts of the same group with other values (the model's other firmware): how often there
    for entry in patterns:
        entry["affected"] = len(entry["hosts"])
        population = entry["population"]
        inside = member_sets[(entry["kind"], entry["group"], entry["value"])] & population
        with_signature = set().union(*(signature_hosts[s] for s in entry["signatures"]))
        siblings = set().union(*(hosts for (k, g, v), hosts in member_sets.items()
                                 if k == entry["kind"] and g == entry["group"] and v != entry["value"]))
        siblings = (siblings & population) - inside
        entry["sibling_hosts"] = len(siblings)
        entry["sibling_affected"] = len(siblings & with_signature)
        entry["elsewhere_hosts"] = len(population - inside)
        entry["elsewhere_affected"] = len(with_signature - inside)
        entry["text"] = _pattern_text(entry)
    patterns.sort(key=lambda e: (e["p_value"], -e["affected"], e["kind"], e["value"], e["signature"]))
    for number, entry in enumerate(patterns, start=1):
        entry["id"] = f"pattern-{number}"
    by_cohort: dict[tuple, list[str]] = {}
    for entry in patterns:
        by_cohort.setdefault((entry["kind"], entry["value"]), []).append(
            f"{entry['signature']} on {entry['affected']} of {entry['cohort_hosts']} hosts")
    # each input: the most certain pattern of each of its signatures
    row_patterns: dict[str, list[str]] = {}
    row_pattern_ids: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    inputs_of = signatures.groupby(["host", "signature"])["input"].agg(set).to_dict()
    for entry in patterns:
        for host in sorted(entry["hosts"]):
            for input_key in sorted(set().union(*(inputs_of.get((host, s), set()) for s in entry["signatures"]))):
                if (input_key, entry["signature"]) in seen:
                    continue
                seen.add((input_key, entry["signature"]))
                row_pattern_ids.setdefault(input_key, entry["id"])
                others = entry["affected"] - 1
                row_patterns.setdefault(input_key, []).append(
                    f"{advice(entry['kind'], entry['value'])}: the same fault on {others} other "
                    f"host{'s' if others != 1 else ''} with {kind_label(entry['kind'])} {entry['value']} "
                    f"({entry['signature']})")
    return (patterns, {key: "; ".join(lines) for key, lines in row_patterns.items()}, row_pattern_ids,
            {key: "; ".join(lines) for key, lines in by_cohort.items()})


_SIGNATURE_DRIVER = re.compile(r" \(([^()]+)\)$")


def _signature_populations(per_host, hosts_of) -> dict[str, tuple[str | None, set | None]]:
    """The hosts that could show each signature: those whose kernel ran the driver it names (a
    driver's messages appear only where it runs; against the whole fleet every cohort of that
    driver would look concentrated), else every host (None)."""
    driver_hosts = hosts_of[hosts_of["kind"] == DRIVER].groupby("group")["host"].agg(set).to_dict()
    populations = {}
    for signature, hosts in per_host.groupby("signature")["host"].agg(set).items():
        match = _SIGNATURE_DRIVER.search(signature)
        if match and match.group(1) in driver_hosts:
            populations[signature] = (match.group(1), driver_hosts[match.group(1)] | hosts)
        else:
            populations[signature] = (None, None)
    return populations


KIND_ORDER = {kind: rank for rank, kind in enumerate((DRIVE, CONTROLLER, ENCLOSURE, DRIVER))}


def _merged(patterns: list[dict]) -> list[dict]:
    """One pattern per cohort and set of hosts (the signatures one fault leaves on each host, an
    NVMe status and the I/O error after it, go together), and one cohort per fault: of cohorts
    whose pattern covers the same hosts with the same signatures (a firmware only one driver and
    kernel runs), the smallest, then a part before a driver and a driver before an inventory
    column."""
    by_hosts: dict[tuple, dict] = {}
    for entry in patterns:
        key = (entry["kind"], entry["value"], tuple(entry["hosts"]))
        if key in by_hosts:
            merged = by_hosts[key]
            merged["signatures"].append(entry["signature"])
            merged["p_value"] = min(merged["p_value"], entry["p_value"])
            merged["q_value"] = min(merged["q_value"], entry["q_value"])
        else:
            by_hosts[key] = dict(entry, signatures=[entry["signature"]])
    chosen: dict[tuple, dict] = {}
    for entry in by_hosts.values():
        entry["signatures"].sort()
        entry["signature"] = ", ".join(entry["signatures"])
        key = (entry["signature"], tuple(entry["hosts"]))
        rank = (entry["cohort_hosts"], KIND_ORDER.get(entry["kind"], len(KIND_ORDER)), entry["kind"], entry["value"])
        if key not in chosen or rank < chosen[key][0]:
            chosen[key] = (rank, entry)
    return [entry for _, entry in chosen.values()]


def _best_window(hosts, times, window) -> list[str]:
    """The hosts of the window of PATTERN_WINDOW_DAYS holding the most of them (hosts whose
    signature has no date count in every window)."""
    import numpy as np
    undated = np.isnat(times)
    order = np.argsort(times[~undated], kind="stable")
    dated_hosts, dated_times = hosts[~undated][order], times[~undated][order]
    if not len(dated_times):
        return sorted(hosts[undated])
    ends = np.searchsorted(dated_times, dated_times + window, side="right")
    start = int(np.argmax(ends - np.arange(len(dated_times))))
    return sorted(list(dated_hosts[start:int(ends[start])]) + list(hosts[undated]))


def _pattern_text(entry: dict) -> str:
    hosts = f"{entry['driver']} hosts" if entry.get("driver") else "hosts"
    text = (f"{entry['signature']} on {entry['affected']} of {entry['cohort_hosts']} {hosts} with "
            f"{kind_label(entry['kind'])} {entry['value']}")
    if entry["sibling_hosts"]:
        text += (f"; {_count(entry['sibling_affected'])} of {entry['sibling_hosts']} with "
                 f"another {kind_label(entry['kind'])} of {entry['group']}")
    text += f"; {_count(entry['elsewhere_affected'])} of {entry['elsewhere_hosts']} other {hosts}"
    return text


def _count(value: int) -> str:
    return "none" if value == 0 else str(value)


def _trends(members, cohorts):
    """Per cohort: the weekly series (week, hosts reporting, hosts failing for the first time),
    whether it rises, and the trend test's p-value."""
    dated = members[members["date"].notna()]
    if dated.empty:
        return {}, {}, {}
    import pandas as pd
    week = dated["date"].dt.normalize() - pd.to_timedelta(dated["date"].dt.day_of_week, unit="D")
    dated = dated.assign(week=week)
    first_week, last_week = dated["week"].min(), dated["week"].max()
    weeks = int((last_week - first_week).days // 7) + 1
    reporting = dated.groupby(["kind", "value", "week"])["host"].nunique()
    first_failure = dated[dated["failing"]].groupby(["kind", "value", "host"])["week"].min()
    new_failing: dict[tuple, dict] = {}
    for (kind, value, week_start), count in first_failure.reset_index().groupby(["kind", "value", "week"]).size().items():
        new_failing.setdefault((kind, value), {})[week_start] = int(count)
    weekly: dict[tuple, str] = {}
    for (kind, value), series in reporting.groupby(level=["kind", "value"]):
        failing = new_failing.get((kind, value), {})
        weekly[(kind, value)] = "; ".join(f"{week_start.date()} {failing.get(week_start, 0)}/{int(hosts)}"
                                          for (_, _, week_start), hosts in series.items())
    if weeks < 2 * RECENT_WEEKS:
        return weekly, {}, {}
    recent_start = last_week - pd.Timedelta(days=7 * (RECENT_WEEKS - 1))
    # the kind's weekly hazard: of the hosts of any cohort of the kind reporting that week, the
    # share failing for the first time. What moves the whole fleet's weekly count (a first run over
    # months of old reports, sosreports taken in an incident, new rules finding more) moves every
    # cohort: a cohort rises only against its kind.
    kind_reporting = dated.groupby(["kind", "week"])["host"].nunique()
    kind_first = dated[dated["failing"]].groupby(["kind", "host"])["week"].min()
    kind_new = kind_first.reset_index().groupby(["kind", "week"]).size()
    hazard = (kind_new / kind_reporting).fillna(0.0).to_dict()
    expected_total: dict[tuple, float] = {}
    expected_recent: dict[tuple, float] = {}
    for (kind, value, week_start), hosts in reporting.items():
        weight = hosts * hazard.get((kind, week_start), 0.0)
        expected_total[(kind, value)] = expected_total.get((kind, value), 0.0) + weight
        if week_start >= recent_start:
            expected_recent[(kind, value)] = expected_recent.get((kind, value), 0.0) + weight
    failures_total = first_failure.groupby(level=["kind", "value"]).size()
    failures_recent = first_failure[first_failure >= recent_start].groupby(level=["kind", "value"]).size()
    keys, p_values, recent_counts = [], [], []
    for key, total in failures_total.items():
        recent = int(failures_recent.get(key, 0))
        share = expected_recent.get(key, 0.0) / expected_total[key] if expected_total.get(key) else 1.0
        keys.append(key)
        p_values.append(binomial_upper_tail(recent, int(total), share))
        recent_counts.append((recent, int(total), share))
    q_values = benjamini_hochberg(p_values)
    rising, trend_p = {}, {}
    for key, p_value, q_value, (recent, total, share) in zip(keys, p_values, q_values, recent_counts):
        trend_p[key] = p_value
        rising[key] = bool(q_value <= FDR_LEVEL and recent >= MIN_FAILING_HOSTS and recent > total * share)
    return weekly, rising, trend_p


def _typed(frame):
    import pandas as pd
    for name in ("kind", "value", "part_class", "signatures", "weekly"):
        frame[name] = frame[name].astype("string")
    for name in ("hosts", "failing_hosts"):
        frame[name] = frame[name].astype("int64")
    for name in ("rate", "rate_low", "rate_high", "base_rate", "p_value", "q_value", "trend_p_value"):
        frame[name] = pd.to_numeric(frame[name], errors="coerce").astype("float64")
    for name in ("flagged", "rising"):
        frame[name] = frame[name].astype("bool")
    return frame


def _empty_frame():
    import pandas as pd
    frame = pd.DataFrame({name: [] for name in COHORT_FIELDS})
    return _typed(frame)


# ---- the inventory ---------------------------------------------------------------------------

def read_inventory(path: str) -> dict[str, dict[str, str]]:
    """hosts.csv: a `host` column and any others (rack, site, purchase batch): host -> {cohort
    kind: value}. Empty cells are left out. A clear InputError when it cannot be used."""
    import csv

    from ..errors import InputError
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            columns = [c.strip() if c else "" for c in reader.fieldnames or []]
            if "host" not in columns:
                raise InputError("the inventory needs a `host` column (and one column per cohort: rack, site...)", path)
            if len(columns) != len(set(columns)):
                raise InputError("the inventory names a column twice", path)
            inventory: dict[str, dict[str, str]] = {}
            for record in reader:
                record = {(k or "").strip(): (v or "").strip() if isinstance(v, str) else "" for k, v in record.items()}
                host = record.get("host")
                if not host:
                    continue
                values = inventory.setdefault(host, {})
                for column in columns:
                    if column and column != "host" and record.get(column):
                        values[inventory_kind(column)] = record[column]
    except OSError as exc:
        from ..inputs.safeio import describe_os_error
        raise InputError(f"cannot read the inventory: {describe_os_error(exc)}", path) from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"the inventory is not a UTF-8 CSV file: {exc}", path) from None
    return inventory
