"""The selection language of rules and of the path model's tables, over a pandas frame.

A map is AND, a list value is OR, `field|modifier` changes the test: contains, re, gte, lte, gt, lt,
not, exists. A field the frame lacks matches as missing.
"""

from __future__ import annotations

import pandas as pd


def mask(frame: pd.DataFrame, selection: dict) -> pd.Series:
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
