"""Pick the lines worth parsing out of large byte chunks, in one pass over the bytes.

Grammars parse about ten thousand lines a second, while a busy host's /var/log/messages holds
millions of lines of which a few percent concern storage. Each grammar family names literal
keywords (grammars/<name>.examples.yml `keywords:`); a line that contains none of them cannot be
accepted by any kernel-log grammar, so only the candidate lines go on to the parsers. The grammar,
not the prefilter, decides what a candidate means: a keyword is a cheap necessary condition.

Sample input::

    >>> prefilter = Prefilter({"scsi": ["Sense Key"], "block": ["I/O error"]})
    >>> chunk = b"noise\\nsd 2:0:1:0: [sdb] Sense Key : Medium Error\\nI/O error, dev sdb\\n"
    >>> [(chunk[s:e], sorted(f)) for s, e, f in prefilter.candidate_lines(chunk)]
    [(b'sd 2:0:1:0: [sdb] Sense Key : Medium Error', ['scsi']), (b'I/O error, dev sdb', ['block'])]

Engines (measured on the project's 2-core machine with 90 keywords; benchmarks/README.md):

- ``hyperscan`` (PyPI ``hyperscan``: MIT bindings with Vectorscan, BSD, statically linked in
  manylinux/macOS/Windows wheels): a compiled multi-literal automaton, about 1.7 GB/s on a typical
  log and 280 MB/s on an error storm (where Python work per candidate line dominates). It reports
  every occurrence of every keyword, so the family set of each line is exact without a second look.
- ``python``: the standard library only, used when hyperscan cannot be imported. One
  ``bytes.find`` pass per keyword that jumps to the end of each line it hits, about 28 MB/s, over
  twice a ``re`` alternation of the same literals (12 MB/s: sre tries every branch at every
  byte). Its cost grows with the number of keywords.

Both engines return identical results; tests compare them. Lines end at b"\\n" only: with CRLF
text the b"\\r" stays inside the reported span and the consumer strips it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Mapping

from diagdisk.errors import DiagdiskError

ENGINES = ("hyperscan", "python")

CandidateLine = tuple[int, int, frozenset[str]]
# Below this many keyword hits in a chunk the plain loop is faster than setting up arrays.
_VECTOR_MIN_OCCURRENCES = 4096


def _numbered(chunk: bytes, found: list[CandidateLine]) -> list[tuple[int, int, frozenset[str], int]]:
    numbered, line, position = [], 0, 0
    for start, end, families in found:
        line += chunk.count(b"\n", position, start)
        position = start
        numbered.append((start, end, families, line))
    return numbered


def hyperscan_available() -> bool:
    return importlib.util.find_spec("hyperscan") is not None


class Prefilter:
    """Literal keywords per grammar family, compiled once; `candidate_lines` runs per chunk.

    `engine` is "auto" (hyperscan when importable, else python), "hyperscan" or "python".
    """

    def __init__(self, keywords: Mapping[str, Iterable[str]], engine: str = "auto"):
        family_masks: dict[bytes, int] = {}
        self.families: tuple[str, ...] = tuple(keywords)
        for bit, family in enumerate(self.families):
            words = keywords[family]
            if isinstance(words, (str, bytes)):
                raise DiagdiskError(f"prefilter keywords of family {family!r} must be a list of strings, not one string")
            for word in words:
                if not isinstance(word, str) or not word:
                    raise DiagdiskError(f"prefilter keyword {word!r} of family {family!r} must be a non-empty string")
                if "\n" in word or "\r" in word:
                    raise DiagdiskError(f"prefilter keyword {word!r} of family {family!r} spans lines")
                literal = word.encode("utf-8")
                family_masks[literal] = family_masks.get(literal, 0) | (1 << bit)
        self._literals: list[bytes] = list(family_masks)
        self._masks: list[int] = [family_masks[literal] for literal in self._literals]
        self._family_sets: dict[int, frozenset[str]] = {}

        if engine == "auto":
            engine = "hyperscan" if hyperscan_available() else "python"
        if engine not in ENGINES:
            raise ValueError(f"unknown prefilter engine {engine!r}; choose from {', '.join(ENGINES)} or auto")
        self.engine = engine
        self._database = self._compile_hyperscan() if engine == "hyperscan" and self._literals else None

    def _compile_hyperscan(self):
        try:
            import hyperscan
        except ImportError as exc:
            raise DiagdiskError(f"the hyperscan prefilter engine is not installed ({exc})") from None
        database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        database.compile(expressions=self._literals, ids=list(range(len(self._literals))),
                         elements=len(self._literals), flags=0, literal=True)
        return database

    def family_set(self, mask: int) -> frozenset[str]:
        # Lines share a handful of family combinations; one frozenset each keeps storms cheap.
        found = self._family_sets.get(mask)
        if found is None:
            found = frozenset(family for bit, family in enumerate(self.families) if mask >> bit & 1)
            self._family_sets[mask] = found
        return found

    def candidate_lines(self, chunk: bytes) -> list[CandidateLine]:
        """(start, end, families) of each line holding a keyword, in order, once per line.

        `end` is the offset of the line's b"\\n" (or len(chunk) for a last line without one), so
        chunk[start:end] is the line without its newline.
        """
        return [(start, end, families) for start, end, families, _ in self.numbered_candidate_lines(chunk)]

    def numbered_candidate_lines(self, chunk: bytes) -> list[tuple[int, int, frozenset[str], int]]:
        """As candidate_lines, with each line's index in the chunk (0 for its first line)."""
        if not self._literals or not chunk:
            return []
        if self.engine == "hyperscan":
            return self._candidates_hyperscan(bytes(chunk))
        return _numbered(chunk, self._candidates_python(chunk))

    def _candidates_hyperscan(self, chunk: bytes) -> list[tuple[int, int, frozenset[str], int]]:
        literal_count = len(self._literals)
        # Hyperscan calls back once per occurrence; packing (end, literal) into one int and sorting
        # afterwards keeps the callback to a single append and makes the order certain.
        occurrences: list[int] = []
        append = occurrences.append

        def on_match(literal_id: int, _start: int, end: int, _flags: int, _context: object) -> None:
            append(end * literal_count + literal_id)

        self._database.scan(chunk, match_event_handler=on_match)
        if len(occurrences) >= _VECTOR_MIN_OCCURRENCES:
            return self._group_with_numpy(chunk, occurrences)
        occurrences.sort()

        masks = self._masks
        find, rfind, size = chunk.find, chunk.rfind, len(chunk)
        found: list[CandidateLine] = []
        line_start = line_end = -1
        line_mask = 0
        for packed in occurrences:
            match_end, literal_id = divmod(packed, literal_count)
            if match_end > line_end:
                if line_end >= 0:
                    found.append((line_start, line_end, self.family_set(line_mask)))
                # Keywords hold no newline, so the line's newlines lie outside the match.
                line_start = rfind(b"\n", 0, match_end) + 1
                line_end = find(b"\n", match_end)
                if line_end < 0:
                    line_end = size
                line_mask = 0
            line_mask |= masks[literal_id]
        if line_end >= 0:
            found.append((line_start, line_end, self.family_set(line_mask)))
        return _numbered(chunk, found)

    def _group_with_numpy(self, chunk: bytes, occurrences: list[int]) -> list[tuple[int, int, frozenset[str], int]]:
        """The same lines as the loop above, grouped by array operations: in an error storm there
        are hundreds of thousands of keyword hits per chunk, and a Python step per hit adds up."""
        import numpy as np

        literal_count = len(self._literals)
        packed = np.array(occurrences, dtype=np.int64)
        packed.sort()
        ends, literal_ids = np.divmod(packed, literal_count)
        newlines = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
        # a keyword holds no newline: its line is the one after the newlines before its end
        line_index = np.searchsorted(newlines, ends, side="left")
        first_hit = np.flatnonzero(np.diff(line_index, prepend=-1))
        masks = np.bitwise_or.reduceat(np.asarray(self._masks, dtype=np.int64)[literal_ids], first_hit)
        lines = line_index[first_hit]
        starts = np.where(lines > 0, newlines[np.maximum(lines - 1, 0)] + 1, 0) if len(newlines) else np.zeros_like(lines)
        padded = np.append(newlines, len(chunk))
        line_ends = padded[lines]
        masks = masks.tolist()
        for mask in set(masks):
            self.family_set(mask)
        sets = self._family_sets
        return [(start, end, sets[mask], index) for start, end, mask, index in
                zip(starts.tolist(), line_ends.tolist(), masks, lines.tolist())]

    def _candidates_python(self, chunk: bytes) -> list[CandidateLine]:
        find, rfind, size = chunk.find, chunk.rfind, len(chunk)
        line_ends: dict[int, int] = {}
        line_masks: dict[int, int] = {}
        for literal, mask in zip(self._literals, self._masks):
            position = find(literal)
            while position >= 0:
                line_start = rfind(b"\n", 0, position) + 1
                line_end = find(b"\n", position + len(literal))
                if line_end < 0:
                    line_end = size
                line_ends[line_start] = line_end
                line_masks[line_start] = line_masks.get(line_start, 0) | mask
                # The rest of this line cannot add anything for this literal.
                position = find(literal, line_end + 1)
        return [(start, line_ends[start], self.family_set(line_masks[start])) for start in sorted(line_ends)]
