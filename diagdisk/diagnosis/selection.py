"""The selection language of rules and of the path model's tables (docs/rules.md).

A map is AND, a list value is OR, `field|modifier` changes the test: contains, re, gte, lte, gt, lt,
not, exists. A field a row lacks matches as missing. Rules run over plain rows (one dict per event
record: a log folds into records, so even a storm gives a few thousand rows, and a table library
would cost more to import than the rules take on a small input); the performance rules' tables of
intervals are pandas frames, read by `mask`.
"""

from __future__ import annotations

import functools
import math
import operator
import re


_COMPARISONS = {"gte": operator.ge, "lte": operator.le, "gt": operator.gt, "lt": operator.lt}


def _cell(row: dict, name: str):
    value = row.get(name)
    return None if isinstance(value, float) and math.isnan(value) else value


def _as_text(value) -> str:
    return str(value)


def _as_number(value) -> float | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


@functools.lru_cache(maxsize=512)
def _pattern(alternatives: tuple) -> re.Pattern:
    return re.compile("|".join(f"(?:{v})" for v in alternatives))


def matches(row: dict, selection: dict) -> bool:
    """Whether one row meets every condition of a selection (a map is AND, a list value is OR)."""
    for key, expected in selection.items():
        name, _, modifier = key.partition("|")
        value = _cell(row, name)
        values = expected if isinstance(expected, list) else [expected]
        if modifier == "exists":
            ok = (value is not None) if expected else (value is None)
        elif modifier == "contains":
            ok = value is not None and any(str(v) in _as_text(value) for v in values)
        elif modifier == "re":
            ok = value is not None and _pattern(tuple(str(v) for v in values)).search(_as_text(value)) is not None
        elif modifier in _COMPARISONS:
            number = _as_number(value)
            ok = number is not None and _COMPARISONS[modifier](number, values[0])
        elif modifier == "not":
            ok = value is None or value not in values
        else:
            ok = value is not None and value in values
        if not ok:
            return False
    return True


def mask(frame, selection: dict):
    """The rows of a pandas frame a selection matches, as a boolean Series."""
    import pandas as pd
    selected = pd.Series(True, index=frame.index)
    for key, expected in selection.items():
        name, _, modifier = key.partition("|")
        column = frame[name] if name in frame else pd.Series(None, index=frame.index, dtype=object)
        values = expected if isinstance(expected, list) else [expected]
        if modifier == "exists":
            test = column.notna() if expected else column.isna()
        elif modifier == "contains":
            text = column.astype("string")
            test = pd.Series(False, index=frame.index)
            for value in values:
                test |= text.str.contains(str(value), regex=False).fillna(False).astype(bool)
        elif modifier == "re":
            text = column.astype("string")
            test = text.str.contains("|".join(f"(?:{v})" for v in values), regex=True).fillna(False).astype(bool)
        elif modifier in ("gte", "lte", "gt", "lt"):
            numbers = pd.to_numeric(column, errors="coerce")
            op = {"gte": numbers.ge, "lte": numbers.le, "gt": numbers.gt, "lt": numbers.lt}[modifier]
            test = op(values[0]).fillna(False).astype(bool)
        elif modifier == "not":
            test = ~column.isin(values)
        else:
            test = column.isin(values)
        selected &= test
    return selected
