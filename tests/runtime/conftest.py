"""Fixtures the runtime tests share."""

from __future__ import annotations

import pytest
from tdflow.runtime.engine import NaiveEngine, ThreadedEngine, set_engine


@pytest.fixture(params=["threaded", "naive"])
def engine(request):
    """Each engine in turn as the process-wide one (a threaded engine of one worker, and the
    naive one), so eager calls run on it; it is drained and the previous one back after."""
    eng = ThreadedEngine(workers=1) if request.param == "threaded" else NaiveEngine()
    old = set_engine(eng)
    try:
        yield eng
        eng.wait_all()
    finally:
        set_engine(old)
