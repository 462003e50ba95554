"""bench/bench_distributed.py on a small batch: the DP step's all-reduce sends exactly the ring
minimum (one bucket of gradients and loss), and the ranks agree on the loss."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import bench_distributed  # noqa: E402


def test_bytes_sent_equal_the_ring_minimum_and_the_table_reports_them():
    m = bench_distributed.measure(nproc=4, batch=67, steps=2)
    assert m["ranks"] == 4
    assert m["sent"] == 2 * 3 / 4 * m["payload"] == m["ring_min"]
    assert m["payload"] == (64 * 256 + 256 + 256 * 10 + 10) * 4 + 4
    assert "| 4 | 67 |" in bench_distributed.table(m, 67)


def test_the_overlapped_step_gives_the_plain_step_bits_and_both_times():
    o = bench_distributed.measure_overlap(nproc=2, batch=40, steps=2, bucket_bytes=4096)
    assert o["same"] and o["plain"] > 0 and o["overlapped"] > 0
    assert o["ratio"] == o["overlapped"] / o["plain"]
    assert "the same bits" in bench_distributed.overlap_table(o, 40, 4096)
