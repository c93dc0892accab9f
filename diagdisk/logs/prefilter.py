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

Engines (measured on the project's 2-core machine with 291 keywords; benchmarks/README.md):

- ``hyperscan`` (PyPI ``hyperscan``: MIT bindings with Vectorscan, BSD, statically linked in
  manylinux/musllinux/macOS/Windows wheels; a regular dependency where those exist): a compiled
  multi-literal automaton. It reports every occurrence of every keyword, so the family set of each
  line is exact without a second look.
- ``python``: numpy and the standard library, where hyperscan is not installed
  (`_AnchoredScan`): each keyword is anchored on its rarest 4 bytes and every position of the text
  is looked up in one hashed table of anchors by array operations, so its cost does not grow with
  the number of keywords; Python checks whole keywords only where an anchor occurs. About 20x the
  `bytes.find`-per-keyword loop it replaced, which slowed down in proportion to the keywords.

"auto" (the default) takes hyperscan when it imports; DIAGDISK_PREFILTER=python|hyperscan
chooses, and `diagdisk --version` names the engine that runs.

Both engines return identical results; tests compare them. Lines end at b"\\n" only: with CRLF
text the b"\\r" stays inside the reported span and the consumer strips it.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Iterable, Mapping

from diagdisk.errors import DiagdiskError

ENGINES = ("hyperscan", "python")
# Overrides the "auto" choice (to compare the engines on one install, or to leave hyperscan out).
ENGINE_VARIABLE = "DIAGDISK_PREFILTER"

CandidateLine = tuple[int, int, frozenset[str]]
# Below this many keyword hits in a chunk the plain loop is faster than setting up arrays.
_VECTOR_MIN_OCCURRENCES = 4096
# The python engine picks each keyword's rarest 4 bytes as counted in this much of the text it reads.
_ANCHOR_SAMPLE_BYTES = 256 << 10
# ... and looks them up in a table of this many slots (64K uint32: 256 KiB, stays in the CPU cache),
_ANCHOR_SLOT_BITS = 16
# ... over blocks of the chunk this large, so that the arrays of one block stay in the cache too.
_ANCHOR_BLOCK_BYTES = 1 << 20
_GOLDEN = 2654435761  # Knuth's multiplicative hash: spreads 4-byte codes over the slots


def _numbered(chunk: bytes, found: list[CandidateLine]) -> list[tuple[int, int, frozenset[str], int]]:
    numbered, line, position = [], 0, 0
    for start, end, families in found:
        line += chunk.count(b"\n", position, start)
        position = start
        numbered.append((start, end, families, line))
    return numbered


def hyperscan_available() -> bool:
    return importlib.util.find_spec("hyperscan") is not None


@functools.cache
def hyperscan_importable() -> bool:
    """Whether hyperscan imports here (its wheel may be missing, or built for another machine)."""
    try:
        import hyperscan  # noqa: F401
    except (ImportError, OSError):
        return False
    return True


def chosen_engine() -> str:
    """The engine "auto" stands for: DIAGDISK_PREFILTER when set, else hyperscan when it imports."""
    wanted = os.environ.get(ENGINE_VARIABLE, "").strip().lower() or "auto"
    if wanted not in ("auto", *ENGINES):
        raise DiagdiskError(f"{ENGINE_VARIABLE}={wanted!r} names no prefilter engine; choose auto, "
                            f"{' or '.join(ENGINES)}")
    if wanted == "auto":
        return "hyperscan" if hyperscan_importable() else "python"
    return wanted


def engine_description() -> str:
    """One line for `diagdisk --version`: the engine that runs, and why that one."""
    engine = chosen_engine()
    forced = ENGINE_VARIABLE in os.environ and os.environ[ENGINE_VARIABLE].strip().lower() not in ("", "auto")
    why = f"chosen by {ENGINE_VARIABLE}" if forced else None
    if engine == "hyperscan":
        from importlib.metadata import PackageNotFoundError, version
        try:
            release = version("hyperscan")
        except PackageNotFoundError:
            release = "?"
        return f"hyperscan {release} (compiled{', ' + why if why else ''})"
    if why is None:
        why = "hyperscan does not import here" if hyperscan_available() else "hyperscan is not installed"
    return f"python (numpy, {why})"


class Prefilter:
    """Literal keywords per grammar family, compiled once; `candidate_lines` runs per chunk.

    `engine` is "auto" (chosen_engine(): hyperscan when it imports, else python), "hyperscan" or
    "python".
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
            engine = chosen_engine()
        if engine not in ENGINES:
            raise ValueError(f"unknown prefilter engine {engine!r}; choose from {', '.join(ENGINES)} or auto")
        self.engine = engine
        self._database = self._compile_hyperscan() if engine == "hyperscan" and self._literals else None
        self._anchored: _AnchoredScan | None = None

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
        return self._candidates_python(chunk)

    def _candidates_hyperscan(self, chunk: bytes) -> list[tuple[int, int, frozenset[str], int]]:
        literal_count = len(self._literals)
        # Hyperscan calls back once per occurrence; packing (end, literal) into one int and sorting
        # afterwards keeps the callback to a single append and makes the order certain.
        occurrences: list[int] = []
        append = occurrences.append

        def on_match(literal_id: int, _start: int, end: int, _flags: int, _context: object) -> None:
            append(end * literal_count + literal_id)

        self._database.scan(chunk, match_event_handler=on_match)
        return self._lines_of(chunk, occurrences)

    def _lines_of(self, chunk: bytes, occurrences: list[int]) -> list[tuple[int, int, frozenset[str], int]]:
        """The numbered candidate lines of `chunk`, from every keyword occurrence in it, each
        packed as `end * literal_count + literal_id` (in any order)."""
        if len(occurrences) >= _VECTOR_MIN_OCCURRENCES:
            return self._group_with_numpy(chunk, occurrences)
        occurrences.sort()
        literal_count = len(self._literals)
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

    def _candidates_python(self, chunk: bytes) -> list[tuple[int, int, frozenset[str], int]]:
        scan = self._anchored
        if scan is None or scan.sample_size < min(len(chunk), _ANCHOR_SAMPLE_BYTES):
            # anchors chosen on more of the text this prefilter reads: a first chunk may be tiny
            scan = self._anchored = _AnchoredScan(self._literals, bytes(chunk[:_ANCHOR_SAMPLE_BYTES]))
        return self._lines_of(chunk, scan.occurrences(bytes(chunk)))


class _AnchoredScan:
    """Every occurrence of every literal, found with a few array operations per block of text,
    whatever the number of literals.

    Each literal of 4 bytes or more is anchored on its rarest 4 bytes (its "anchor"; counted in a
    sample of the text): one table, indexed by a hash of 4 bytes, holds every anchor in its own
    slot. Each position of the text is looked up (the text read as 4-byte integers at the four
    alignments, hashed, looked up and compared at once by numpy): only where the 4 bytes equal the
    anchor of their slot does Python check the literals anchored there. A literal occurs only where
    its anchor does, so nothing is missed, and each is checked whole, so nothing is invented: the
    result is exact whatever anchors were picked; the sample only decides how fast. Literals under
    4 bytes are found with `bytes.find`, each on its own.
    """

    def __init__(self, literals: list[bytes], sample: bytes):
        import numpy as np

        self.sample_size = len(sample)
        self.literals = literals
        self.short = [(literal_id, literal) for literal_id, literal in enumerate(literals) if len(literal) < 4]
        self.anchored: dict[int, list[tuple[int, int, bytes]]] = {}   # anchor -> (offset, id, literal)
        slot_count = 1 << _ANCHOR_SLOT_BITS
        self.shift = np.uint32(32 - _ANCHOR_SLOT_BITS)
        self.multiplier = np.uint32(_GOLDEN)
        taken: dict[int, int] = {}  # slot -> anchor
        counts = _gram_counts(sample)
        for literal_id, literal in enumerate(literals):
            if len(literal) < 4:
                continue
            grams = [int.from_bytes(literal[i:i + 4], "little") for i in range(len(literal) - 3)]
            # rarest first; an anchor whose slot another anchor holds is passed over
            for offset in sorted(range(len(grams)), key=lambda i: (counts.get(grams[i], 0), i)):
                gram = grams[offset]
                slot = self._slot(gram)
                if taken.get(slot, gram) == gram:
                    taken[slot] = gram
                    self.anchored.setdefault(gram, []).append((offset, literal_id, literal))
                    break
            else:
                self.short.append((literal_id, literal))  # every anchor collides: found the slow way
        # An empty slot must not equal the text that hashes to it: it holds a code of another slot.
        table = np.zeros(slot_count, dtype=np.uint32)
        filler = next(code for code in range(1, slot_count) if self._slot(code) != 0)
        table[:] = filler
        table[self._slot(filler)] = 0
        for slot, gram in taken.items():
            table[slot] = gram
        self.table = table

    def _slot(self, code: int) -> int:
        return ((code * _GOLDEN) & 0xFFFFFFFF) >> (32 - _ANCHOR_SLOT_BITS)

    def occurrences(self, chunk: bytes) -> list[int]:
        """Each occurrence of a literal in `chunk`, as `end * literal_count + literal_id`; for the
        short literals, only the first of each line (the rest of the line adds nothing)."""
        import numpy as np

        literal_count = len(self.literals)
        found: list[int] = []
        append = found.append
        size = len(chunk)
        if self.anchored:
            padded = chunk + b"\n\n\n"  # the last positions' 4 bytes; a literal holds no newline
            table, multiplier, shift = self.table, self.multiplier, self.shift
            anchored = self.anchored
            startswith = chunk.startswith
            for block in range(0, size, _ANCHOR_BLOCK_BYTES):
                length = min(_ANCHOR_BLOCK_BYTES, size - block)
                for alignment in range(4):
                    count = (length - alignment + 3) // 4
                    if count <= 0:
                        continue
                    words = np.frombuffer(padded, dtype="<u4", count=count, offset=block + alignment)
                    slots = words * multiplier
                    slots >>= shift
                    hits = np.flatnonzero(np.take(table, slots) == words)
                    if not len(hits):
                        continue
                    starts = (hits * 4 + (block + alignment)).tolist()
                    for position, gram in zip(starts, words[hits].tolist()):
                        for offset, literal_id, literal in anchored[gram]:
                            begin = position - offset
                            if begin >= 0 and startswith(literal, begin):
                                append((begin + len(literal)) * literal_count + literal_id)
        for literal_id, literal in self.short:
            find = chunk.find
            position = find(literal)
            while position >= 0:
                append((position + len(literal)) * literal_count + literal_id)
                line_end = find(b"\n", position + len(literal))
                if line_end < 0:
                    break
                position = find(literal, line_end + 1)
        return found


def _gram_counts(sample: bytes) -> dict[int, int]:
    """How often each 4 bytes occur in `sample`, as little-endian integers."""
    import numpy as np

    if len(sample) < 4:
        return {}
    raw = np.frombuffer(sample, dtype=np.uint8).astype(np.uint32)
    grams = raw[:-3] | raw[1:-2] << 8 | raw[2:-1] << 16 | raw[3:] << 24
    values, counts = np.unique(grams, return_counts=True)
    return dict(zip(values.tolist(), counts.tolist()))
