"""The event table: one pandas DataFrame with a column per declared event field, plus what the
sense codes mean (`sense_key_name`, `asc_ascq`, `asc_text`), for `diagdisk events`."""

from __future__ import annotations

import pandas as pd

from ..logs.events import EVENT_FIELDS

_CATEGORICAL = ("source", "kind", "detail", "family", "device", "hctl", "unit", "clock", "grammar")
_DECODED = ("sense_key_name", "asc_ascq", "asc_text")


def event_frame(events: list[dict]) -> pd.DataFrame:
    from ..decode.asc_ascq import describe
    from ..decode.sense import SENSE_KEY_NAMES

    columns = ["source", "line", "time", "kind", "detail", "unit", "hctl", "device"]
    columns += [f for f in EVENT_FIELDS if f not in columns and f not in ("raw",)] + list(_DECODED) + ["raw"]
    rows = []
    for event in events:
        row = {k: event.get(k) for k in columns}
        key, asc, ascq = event.get("sense_key"), event.get("asc"), event.get("ascq")
        if key is not None:
            row["sense_key_name"] = SENSE_KEY_NAMES.get(key)
        if asc is not None and ascq is not None:
            row["asc_ascq"] = f"{asc:02X}/{ascq:02X}"
            row["asc_text"] = describe(asc, ascq)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=columns)
    frame = frame.dropna(axis=1, how="all")
    for column in frame.columns:
        declared = EVENT_FIELDS.get(column, (None,))[0]
        try:
            if declared is int:
                frame[column] = frame[column].astype("Int64")  # whole numbers stay whole where some are missing
            elif declared is bool:
                frame[column] = frame[column].astype("boolean")
        except (OverflowError, TypeError, ValueError):
            frame[column] = frame[column].astype(object)  # a number past 64 bits (an absurd sector) stays as read
    for column in _CATEGORICAL:
        if column in frame:
            frame[column] = frame[column].astype("category")
    return frame
