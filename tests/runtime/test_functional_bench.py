"""The eager benchmark runs, checks its own answers, and reports every field (smoke test)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH_DIR = str(Path(__file__).resolve().parents[2] / "bench")


@pytest.fixture()
def eager_bench(monkeypatch):
    monkeypatch.syspath_prepend(BENCH_DIR)
    import eager_bench

    yield eager_bench
    sys.modules.pop("eager_bench", None)


def test_eager_bench_smoke(eager_bench):
    res = eager_bench.run(number=50, repeat=1)
    assert set(res["ops"]) == set(eager_bench.OPS)
    for r in res["ops"].values():
        assert r["tdflow_us"] > 0 and r["kernel_us"] > 0 and r["numpy_us"] > 0
        assert r["overhead_us"] >= 0
    assert "| relu |" in eager_bench.format_table(res)
