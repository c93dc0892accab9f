"""Rows read a block at a time: the common shape of a large sar or sadf -d text (one header, then
thousands of rows of the same width) parsed by pandas' C reader instead of one line at a time.

The readers (sysstat, sadf) stay the reference: a block only ever holds rows they would read the
same way, and any row that does not fit (a header, an Average: line, a restart, a wrapped or
localised value, a comma, a character outside printable ASCII, a token the C reader does not read
exactly as float() does) ends the block and goes through the reader row by row. So a block changes
how fast rows are read, never what they say: tests/performance read every fixture both ways and
compare the samples bit for bit.

What the C reader would read differently from float() and str.split(), and is therefore kept out
of a block: non-ASCII whitespace and control characters (str.split() splits on them, the C reader
does not), "True"/"False" in any case (read as 1.0 and 0.0 in a float column), quotes (not special
here: quoting is off).
"""

from __future__ import annotations

import csv
import io
import re
import warnings
from dataclasses import dataclass
from typing import Any

# A block is tried only on at least this many rows: below it the call costs more than it saves.
MIN_ROWS = 64
# Rows taken into one block at most (the readers' batches hold this many lines).
MAX_ROWS = 8192

# Printable ASCII, tab and the line feed that joins rows; a comma is a decimal comma or worse.
_PLAIN = bytes(b for b in range(0x20, 0x7F) if b != ord(",")) + b"\t\n"
# A number as both the C reader and float() read it, to the same double.
PLAIN_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\Z")


@dataclass
class SampleBlock:
    """Consecutive samples of one source, as columns: what a reader would have yielded as one
    RawSample per row. `devices` holds each name once, in order of first appearance; `codes` gives
    each row's index in it. `values` maps fields (performance.columns) to arrays."""
    devices: list[str]
    codes: Any            # numpy int array, one per row
    t: Any                # numpy float array: seconds on the source's time axis
    interval: Any         # numpy float array, or None when the rows do not say
    values: dict
    lines: Any            # numpy int array: each row's line in the source
    segment: int

    def __len__(self) -> int:
        return len(self.lines)


def plain(data: bytes) -> bool:
    """True when `data` holds nothing the C reader would read differently from str.split()/float()."""
    if data.translate(None, _PLAIN):
        return False
    lower = data.lower()
    return b"true" not in lower and b"false" not in lower


def plain_line(line: str) -> bool:
    return line.isascii() and plain(line.encode("ascii"))


_PRECISION: dict | None = None


def _precision() -> dict:
    """pandas before 3.1 needs round_trip to read floats exactly as float() does; from 3.1 on, every
    mode uses that converter and the option is deprecated."""
    global _PRECISION
    if _PRECISION is None:
        import pandas

        version = tuple(int(part) for part in re.findall(r"\d+", pandas.__version__)[:2])
        _PRECISION = {} if version >= (3, 1) else {"float_precision": "round_trip"}
    return _PRECISION


def read_rows(data: bytes, width: int, separator: str, floats: list[int], texts: list[int]):
    """`data` (rows joined by line feeds) as a DataFrame of `width` columns named 0..width-1: the
    `floats` columns as float64, the `texts` columns as str objects, the others as the C reader
    infers them. None when a row has too many fields or a float column holds something else.
    A missing field is an empty string (it makes its column str); callers check for it."""
    import pandas

    dtype: dict = {index: "float64" for index in floats}
    dtype.update({index: object for index in texts})
    try:
        with warnings.catch_warnings():
            # a first row wider than `width` is cut to it with only a warning: a row that does not fit
            warnings.simplefilter("error", pandas.errors.ParserWarning)
            return pandas.read_csv(io.BytesIO(data), sep=separator, header=None, names=range(width), index_col=False,
                                   dtype=dtype, na_filter=False, skip_blank_lines=False, quoting=csv.QUOTE_NONE,
                                   engine="c", low_memory=False, **_precision())
    except (ValueError, OverflowError, pandas.errors.ParserError, pandas.errors.ParserWarning):
        return None


def missing_field(frame, skip: set[int]):
    """Rows (a numpy bool array) where a column outside `skip` holds an empty string: a row that
    had fewer fields than the header."""
    import numpy

    missing = numpy.zeros(len(frame), dtype=bool)
    for index in frame.columns:
        if index in skip or frame[index].dtype.kind in "biuf":
            continue
        missing |= frame[index].to_numpy(dtype=object) == ""
    return missing
