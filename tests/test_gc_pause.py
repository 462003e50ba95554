"""``tdflow.core.gc_pause.gc_paused``: what the block keeps leaves it as old objects (no
collection walks it as young right after), yet cyclic garbage made inside is still collected,
and objects a caller froze stay frozen."""

from __future__ import annotations

import gc
import weakref

from tdflow.core.gc_pause import gc_paused


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_kept_objects_leave_as_old_and_garbage_is_still_collected():
    gc.collect()
    with gc_paused():
        assert not gc.isenabled()
        kept = [Node() for _ in range(20000)]
        probe = Node()
        ref = weakref.ref(probe)
    assert gc.isenabled()
    # promoted to the oldest generation: no young collection walks the 20k nodes again
    old = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(n) in old for n in kept)
    del probe
    gc.collect()
    assert ref() is None  # the cycle made inside the block was collected
    assert len(kept) == 20000


def test_a_callers_frozen_objects_stay_frozen():
    frozen = [Node() for _ in range(10)]
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        with gc_paused():
            [Node() for _ in range(100)]
        assert gc.get_freeze_count() == before
    finally:
        gc.unfreeze()
    assert frozen


def test_nested_pauses_and_a_disabled_collector_are_respected():
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
