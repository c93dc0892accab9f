"""Session fixtures: generated logs, made once per test run."""

import pytest
from perf_data import generated_log


@pytest.fixture(scope="session")
def storm_log() -> bytes:
    return generated_log(300_000, 0.3, seed=7)


@pytest.fixture(scope="session")
def typical_log() -> bytes:
    return generated_log(300_000, 0.01, seed=3)
