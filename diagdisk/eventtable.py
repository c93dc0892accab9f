"""The event table: one pandas DataFrame with a column per declared event field."""

from __future__ import annotations

import pandas as pd

from .events import EVENT_FIELDS

_CATEGORICAL = ("source", "kind", "detail", "family", "device", "hctl", "unit", "clock", "grammar")


def event_frame(events: list[dict]) -> pd.DataFrame:
    columns = ["source", "line", "time", "kind", "detail", "unit", "hctl", "device"]
    columns += [f for f in EVENT_FIELDS if f not in columns and f not in ("raw",)] + ["raw"]
    rows = [{k: e.get(k) for k in columns} for e in events]
    frame = pd.DataFrame(rows, columns=columns)
    frame = frame.dropna(axis=1, how="all")
    for column in _CATEGORICAL:
        if column in frame:
            frame[column] = frame[column].astype("category")
    return frame
