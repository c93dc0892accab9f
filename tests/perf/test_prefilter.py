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
