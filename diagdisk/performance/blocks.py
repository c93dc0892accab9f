"""Rows read a block at a time: the common shape of a large sar or sadf -d text (one header, then
thousands of rows of the same width) parsed by pandas' C reader instead of one line at a time.

The readers (sysstat, sadf) stay the reference: a block only ever holds rows they would read the
same way, and any row that does not fit (a header, an Average: line, a restart, a wrapped or
localised value, a comma, a character outside printable ASCII, a token the C reader does not read
exactly as float() does) ends the block and goes through the reader row by row. So a block changes
how fast rows are read, never what they say: tests/performance read every fixture both ways and
compare the samples bit for bit.

Most blocks never reach pandas: sysstat prints fixed-width columns, so rows of equal length whose
tokens end at the same columns are cut into fields of a byte matrix and their decimals computed
with numpy (fixed_rows, fixed_decimals), exactly as float() reads them. pandas reads the blocks that
are not fixed-width (--pretty, long device names, sadf -d).

What the C reader would read differently from float() and str.split(), and is therefore kept out
of a block: non-ASCII whitespace and control characters (str.split() splits on them, the C reader
does not), a float column made only of "True"/"False" in any case (read as 1.0 and 0.0), quotes
(not special here: quoting is off).
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
# Rows taken into one block at most.
MAX_ROWS = 32768

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
    """True when `data` holds only printable ASCII (no comma), tabs and line feeds: what both the
    C reader and str.split() cut into the same tokens."""
    return not data.translate(None, _PLAIN)


def plain_line(line: str) -> bool:
    return line.isascii() and plain(line.encode("ascii"))


def booleans_possible(frame, floats: list[int], first_row: str) -> bool:
    """True when a float column may have been read from True/False words: the C reader reads a
    column made only of them (in any case) as 1.0/0.0, where float() refuses them. Such a column
    holds nothing but 0 and 1, and then its first row's token shows what it was."""
    import numpy

    tokens = None
    for index in floats:
        if numpy.isin(frame[index].to_numpy(), (0.0, 1.0)).all():
            tokens = tokens if tokens is not None else first_row.split()
            if index >= len(tokens) or not PLAIN_NUMBER.match(tokens[index]):
                return True
    return False


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


# ---------------------------------------------------------------- fixed-width rows

# Decimal digits a value may have to be read exactly as digits / 10**k (below 2**53, 10**k exact).
MAX_DIGITS = 15
_SPACE, _MINUS, _DOT, _ZERO = ord(" "), ord("-"), ord("."), ord("0")


@dataclass
class FixedRows:
    """Rows of equal length whose fields end at the same columns in every row: each row's
    str.split() tokens are matrix[row, start:end] without their leading spaces."""
    matrix: Any           # numpy uint8 (rows, line length)
    bounds: list          # (start, end) of each field; a field is spaces then its token
    bad: Any              # numpy bool per row: a row that does not split into these fields


def fixed_rows(data: bytes, count: int, width: int) -> FixedRows | None:
    """`data` (`count` plain rows, see plain(), each ending with the only line feed it holds) as
    fixed-width fields, the way sysstat prints them (`%-11s` then ` %9.2f` and so on), or None when
    the first row does not have `width` tokens or the rows differ in length. Rows that split
    differently from the first are marked bad."""
    import numpy

    size = len(data)
    if size % count or b"\t" in data:
        return None
    length = size // count - 1
    if length < 2 * width - 1:
        return None
    matrix = numpy.frombuffer(data, dtype=numpy.uint8).reshape(count, length + 1)
    if (matrix[:, length] != ord("\n")).any():
        return None   # rows of several lengths (the total only happens to divide)
    matrix = matrix[:, :length]
    space = matrix == _SPACE
    # a token ends where a non-space is followed by a space or the end of the row
    ends_here = numpy.empty_like(space)
    numpy.greater(space[:, 1:], space[:, :-1], out=ends_here[:, :-1])
    numpy.logical_not(space[:, -1], out=ends_here[:, -1])
    ends = numpy.flatnonzero(ends_here[0]) + 1
    if len(ends) != width:
        return None
    bounds = list(zip([0] + ends[:-1].tolist(), ends.tolist()))
    expected = numpy.zeros(length, dtype=bool)
    expected[ends - 1] = True
    # the same tokens end at the same columns in every row: then each field is spaces and one token
    return FixedRows(matrix, bounds, (ends_here != expected).any(axis=1))


def fixed_decimals(matrix, fields: list[tuple[int, int]]) -> tuple[list, Any] | None:
    """(values, bad) of fields (start, end) of right-aligned decimals shaped as in the first row
    (digits, with the decimal point where the first row has it: sysstat's `%9.2f`): each the double
    float() gives, computed as digits / 10**decimals, exact below MAX_DIGITS digits. A row whose
    field is shaped otherwise (a sign, an exponent, letters, the point elsewhere) is bad. None when
    the first row itself is not plain digits."""
    import numpy

    count = len(matrix)
    runs: list[list] = []     # [first field, fields, size, decimals]: neighbours of one shape
    for index, (start, end) in enumerate(fields):
        token = bytes(matrix[0, start:end]).lstrip(b" ")
        digits = token.replace(b".", b"", 1)
        decimals = len(token) - 1 - token.index(b".") if b"." in token else -1
        # every byte but the separator and the point may hold a digit
        if not digits.isdigit() or end - start - 1 - (decimals >= 0) > MAX_DIGITS:
            return None
        last = runs[-1] if runs else None
        if last and (last[2], last[3]) == (end - start, decimals) and fields[last[0] + last[1] - 1][1] == start:
            last[1] += 1
        else:
            runs.append([index, 1, end - start, decimals])
    values: list = [None] * len(fields)
    bad = numpy.zeros(count, dtype=bool)
    _, float_powers = _powers()
    for first, number, size, decimals in runs:
        start = fields[first][0]
        cells = matrix[:, start:start + number * size].reshape(count, number, size)
        point = size - 1 - decimals if decimals >= 0 else size
        whole, fraction = cells[:, :, 1:point], cells[:, :, point + 1:]
        # before the point spaces then digits (fixed_rows saw to the order), after it digits
        bad |= ~(((whole - _ZERO) <= 9) | (whole == _SPACE)).all(axis=(1, 2))
        if decimals > 0:
            bad |= ~((fraction - _ZERO) <= 9).all(axis=(1, 2))
        if decimals >= 0:
            bad |= (cells[:, :, point] != _DOT).any(axis=1)
        mantissa = _digits_value(whole, fraction)
        for slot in range(number):
            values[first + slot] = mantissa[:, slot] / float_powers[max(decimals, 0)]
    return values, bad


def _digits_value(whole, fraction):
    """The integer the digit bytes of `whole` then `fraction` spell (spaces read as 0), as doubles:
    eight digits at a time in a uint64 (multiply and shift, as SIMD number parsers do)."""
    import numpy

    count, fields = whole.shape[:2]
    digits = whole.shape[2] + fraction.shape[2]
    packed = numpy.full((count, fields, 16), _ZERO, dtype=numpy.uint8)
    packed[:, :, 16 - digits:16 - fraction.shape[2]] = whole
    if fraction.shape[2]:
        packed[:, :, 16 - fraction.shape[2]:] = fraction
    words = packed.view("<u8")              # first byte lowest: the most significant digit
    words = ((words & _U64(0x0F0F0F0F0F0F0F0F)) * _U64(10 * 256 + 1)) >> _U64(8)
    words = ((words & _U64(0x00FF00FF00FF00FF)) * _U64(100 * 65536 + 1)) >> _U64(16)
    words = ((words & _U64(0x0000FFFF0000FFFF)) * _U64(10000 * 2 ** 32 + 1)) >> _U64(32)
    # at most MAX_DIGITS digits: high x 10**8 + low is below 2**53, exact as a double
    return (words[:, :, 0] * _U64(10 ** 8) + words[:, :, 1]).astype(numpy.float64)


def _U64(value: int):
    import numpy

    return numpy.uint64(value)


def fixed_tokens(field) -> tuple[Any, list[str]]:
    """(codes, names) of a field: each row's token as an index into `names`, the distinct tokens in
    order of first appearance. sar lists its devices in the same order every interval: when the
    rows repeat with a period, that is checked in one pass instead of sorting the names."""
    import numpy

    count, size = field.shape
    keys = numpy.ascontiguousarray(field).view(f"S{size}").ravel()
    again = numpy.flatnonzero(keys[1:] == keys[0])
    period = int(again[0]) + 1 if len(again) else count
    if (keys[period:] == keys[:count - period]).all():
        head = keys[:period].tolist()
        if len(set(head)) == period:
            return numpy.arange(count, dtype=numpy.int64) % period, [name.decode("ascii").lstrip(" ") for name in head]
    uniques, first, codes = numpy.unique(keys, return_index=True, return_inverse=True)
    order = numpy.argsort(first, kind="stable")
    rank = numpy.empty(len(order), dtype=numpy.int64)
    rank[order] = numpy.arange(len(order))
    return rank[codes.ravel()], [uniques[i].decode("ascii").lstrip(" ") for i in order.tolist()]


def token_is(field, word: str):
    """Rows whose token in `field` is `word`."""
    import numpy

    size, encoded = field.shape[1], numpy.frombuffer(word.encode("ascii"), dtype=numpy.uint8)
    if len(encoded) > size:
        return numpy.zeros(len(field), dtype=bool)
    same = (field[:, size - len(encoded):] == encoded).all(axis=1)
    if len(encoded) < size:
        same &= field[:, size - len(encoded) - 1] == _SPACE
    return same


_POWERS: tuple | None = None


def _powers():
    """10 ** k for k <= MAX_DIGITS, as int64 and as exact doubles."""
    global _POWERS
    if _POWERS is None:
        import numpy

        _POWERS = (numpy.array([10 ** k for k in range(MAX_DIGITS + 1)], dtype=numpy.int64),
                   numpy.array([float(10 ** k) for k in range(MAX_DIGITS + 1)]))
    return _POWERS
