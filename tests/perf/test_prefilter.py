import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagdisk.errors import DiagdiskError
from diagdisk.logs.prefilter import Prefilter, hyperscan_available

from perf_data import STORAGE_KEYWORDS

ENGINES = [
    "python",
    pytest.param("hyperscan", marks=pytest.mark.skipif(not hyperscan_available(), reason="hyperscan not installed")),
]


def reference_candidates(keywords, chunk):
    """Line by line, the obvious way: what Prefilter must return, only slower."""
    found = []
    start = 0
    while start < len(chunk):
        end = chunk.find(b"\n", start)
        end = len(chunk) if end < 0 else end
        line = chunk[start:end]
        families = frozenset(f for f, words in keywords.items() if any(w.encode() in line for w in words))
        if families:
            found.append((start, end, families))
        start = end + 1
    return found


@pytest.mark.parametrize("engine", ENGINES)
def test_generated_storm_matches_line_by_line_reference(engine, storm_log):
    prefilter = Prefilter(STORAGE_KEYWORDS, engine=engine)
    found = prefilter.candidate_lines(storm_log)
    assert found == reference_candidates(STORAGE_KEYWORDS, storm_log)
    assert len(found) > 500


@pytest.mark.parametrize("engine", ENGINES)
def test_typical_log_picks_few_lines(engine, typical_log):
    found = Prefilter(STORAGE_KEYWORDS, engine=engine).candidate_lines(typical_log)
    assert found == reference_candidates(STORAGE_KEYWORDS, typical_log)
    assert 0 < len(found) < typical_log.count(b"\n") * 0.05


@pytest.mark.parametrize("engine", ENGINES)
def test_overlapping_keywords_report_every_family(engine):
    prefilter = Prefilter({"block": ["I/O error"], "buffer": ["Buffer I/O error"], "dup": ["I/O error"]}, engine=engine)
    chunk = b"kernel: Buffer I/O error on dev sdb1, logical block 7\n"
    assert prefilter.candidate_lines(chunk) == [(0, len(chunk) - 1, frozenset({"block", "buffer", "dup"}))]


@pytest.mark.parametrize("engine", ENGINES)
def test_line_reported_once_in_order_with_offsets_without_newline(engine):
    prefilter = Prefilter({"scsi": ["Sense Key", "CDB:"]}, engine=engine)
    chunk = b"a\nSense Key CDB: Sense Key\nb\nCDB: x"
    found = prefilter.candidate_lines(chunk)
    assert [(chunk[s:e], sorted(f)) for s, e, f in found] == [(b"Sense Key CDB: Sense Key", ["scsi"]), (b"CDB: x", ["scsi"])]


@pytest.mark.parametrize("engine", ENGINES)
def test_crlf_leaves_carriage_return_for_the_consumer(engine):
    chunk = b"noise\r\nI/O error, dev sdb\r\n"
    ((start, end, families),) = Prefilter({"block": ["I/O error"]}, engine=engine).candidate_lines(chunk)
    assert chunk[start:end] == b"I/O error, dev sdb\r"
    assert chunk[start:end].rstrip(b"\r") == b"I/O error, dev sdb"


@pytest.mark.parametrize("engine", ENGINES)
def test_keyword_at_chunk_edges_and_non_ascii_keyword(engine):
    prefilter = Prefilter({"x": ["Fehler É"], "y": ["end"]}, engine=engine)
    chunk = "Fehler É at start\nmiddle\nthe end".encode()
    assert [(s, e) for s, e, _ in prefilter.candidate_lines(chunk)] == [(0, chunk.index(b"\n")), (len(chunk) - 7, len(chunk))]


@pytest.mark.parametrize("engine", ENGINES)
def test_empty_inputs(engine):
    assert Prefilter({"scsi": ["Sense Key"]}, engine=engine).candidate_lines(b"") == []
    assert Prefilter({}, engine=engine).candidate_lines(b"Sense Key\n") == []
    assert Prefilter({"scsi": []}, engine=engine).candidate_lines(b"Sense Key\n") == []


@pytest.mark.parametrize("bad", [{"scsi": [""]}, {"scsi": ["two\nlines"]}, {"scsi": "Sense Key"}, {"scsi": [3]}])
def test_bad_keywords_are_reported_as_diagdisk_errors(bad):
    with pytest.raises(DiagdiskError):
        Prefilter(bad, engine="python")


def test_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="unknown prefilter engine"):
        Prefilter({"scsi": ["Sense Key"]}, engine="grep")


def test_auto_engine_prefers_hyperscan_when_installed():
    expected = "hyperscan" if hyperscan_available() else "python"
    assert Prefilter({"scsi": ["Sense Key"]}).engine == expected


_words = st.sampled_from(["I/O", " error", "I/O error", "Buffer ", "Sense", " Key", "Sense Key", "x", "\n", "\r\n", "é"])


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(_words, max_size=40))
@pytest.mark.parametrize("engine", ENGINES)
def test_any_text_matches_reference(engine, pieces):
    keywords = {"block": ["I/O error"], "buffer": ["Buffer I/O error"], "scsi": ["Sense Key", "Key"]}
    chunk = "".join(pieces).encode()
    assert Prefilter(keywords, engine=engine).candidate_lines(chunk) == reference_candidates(keywords, chunk)


@pytest.mark.parametrize("engine", ENGINES)
def test_numbered_lines_count_from_the_chunk_start_whatever_the_grouping(engine, storm_log, monkeypatch):
    import diagdisk.logs.prefilter as prefilter_module
    prefilter = Prefilter(STORAGE_KEYWORDS, engine=engine)
    expected = [(s, e, f, storm_log.count(b"\n", 0, s)) for s, e, f in reference_candidates(STORAGE_KEYWORDS, storm_log)]
    for threshold in (1, 10**9):  # hits grouped with arrays, and one by one
        monkeypatch.setattr(prefilter_module, "_VECTOR_MIN_OCCURRENCES", threshold)
        assert prefilter.numbered_candidate_lines(storm_log) == expected


def test_engine_variable_chooses_the_engine(monkeypatch):
    monkeypatch.setenv("DIAGDISK_PREFILTER", "python")
    assert Prefilter({"scsi": ["Sense Key"]}).engine == "python"
    monkeypatch.setenv("DIAGDISK_PREFILTER", "grep")
    with pytest.raises(DiagdiskError, match="DIAGDISK_PREFILTER"):
        Prefilter({"scsi": ["Sense Key"]})


def test_python_engine_exact_when_anchors_collide(monkeypatch, storm_log):
    """With a table of 4 slots most anchors share one: keywords move to other anchors, or to the
    find-per-keyword path; the lines found stay the same."""
    import diagdisk.logs.prefilter as prefilter_module
    monkeypatch.setattr(prefilter_module, "_ANCHOR_SLOT_BITS", 2)
    chunk = storm_log[:2_000_000]
    assert Prefilter(STORAGE_KEYWORDS, engine="python").candidate_lines(chunk) == reference_candidates(STORAGE_KEYWORDS, chunk)


def test_python_engine_anchors_learnt_on_one_text_serve_another(storm_log, typical_log):
    """Anchors are picked on the first text a prefilter reads (rare there, maybe common later):
    that decides speed only, never which lines are found."""
    prefilter = Prefilter(STORAGE_KEYWORDS, engine="python")
    assert prefilter.candidate_lines(b"x\n" * 10) == []
    sample = typical_log[:1_000_000]
    assert prefilter.candidate_lines(sample) == reference_candidates(STORAGE_KEYWORDS, sample)
    storm = storm_log[:1_000_000]
    assert prefilter.candidate_lines(storm) == reference_candidates(STORAGE_KEYWORDS, storm)


def test_python_engine_finds_nothing_in_nul_bytes():
    """Empty slots of the anchor table hold codes that cannot match there: four NUL bytes (the
    code 0) are no anchor, so a chunk of zeros costs no per-position work."""
    prefilter = Prefilter({"scsi": ["Sense Key"], "x": ["\x00\x00\x00\x00\x00"]}, engine="python")
    assert prefilter.candidate_lines(b"\x00" * 3 + b"\n") == []
    assert prefilter.candidate_lines(b"\x00" * 1_000_000)[0][:2] == (0, 1_000_000)
    assert Prefilter({"scsi": ["Sense Key"]}, engine="python").candidate_lines(b"\x00" * 1_000_000) == []


_letters = st.text(alphabet="ab:\n", max_size=300)


@settings(max_examples=300, deadline=None)
@given(text=_letters, words=st.lists(st.text(alphabet="ab:", min_size=1, max_size=7), min_size=1, max_size=12))
def test_python_engine_random_keywords_match_reference(text, words):
    """Keywords of every length over a tiny alphabet: they overlap, contain one another and share
    anchors; some are shorter than an anchor."""
    keywords = {f"f{index % 3}": [] for index in range(3)}
    for index, word in enumerate(words):
        keywords[f"f{index % 3}"].append(word)
    chunk = text.encode()
    assert Prefilter(keywords, engine="python").candidate_lines(chunk) == reference_candidates(keywords, chunk)
    if hyperscan_available():
        assert Prefilter(keywords, engine="hyperscan").candidate_lines(chunk) == reference_candidates(keywords, chunk)
