"""Buffer assignment (the algorithm under plan-memory) on plain data."""

from __future__ import annotations

import random

from tdflow.lowering.memory import Step, assign_buffers, naive_peak_bytes, planned_bytes

F4 = ((4,), "f32")


def chain(n: int, in_place: bool) -> tuple[dict, list[Step]]:
    values = {i: F4 for i in range(n + 1)}
    pairs = ((0, 0),) if in_place else ()
    return values, [Step((i,), (i + 1,), pairs) for i in range(n)]


def test_chain_in_place_uses_one_buffer_besides_argument_and_result():
    values, steps = chain(5, in_place=True)
    a = assign_buffers(values, steps, arguments=(0,), results=(5,))
    # Argument 0 is never overwritten; 1..4 share one buffer; the result has its own.
    assert a.buffer_of[0] not in {a.buffer_of[i] for i in range(1, 6)}
    assert len({a.buffer_of[i] for i in range(1, 5)}) == 1
    assert a.buffer_of[5] not in {a.buffer_of[i] for i in range(0, 5)}
    assert set(a.in_place) == {1, 2, 3}
    assert planned_bytes(a) == 3 * 16 < naive_peak_bytes(values) == 6 * 16


def test_chain_without_in_place_ping_pongs_two_buffers():
    values, steps = chain(6, in_place=False)
    a = assign_buffers(values, steps, arguments=(0,), results=(6,))
    assert len({a.buffer_of[i] for i in range(1, 6)}) == 2
    assert not a.in_place


def test_donated_argument_may_be_overwritten():
    values, steps = chain(2, in_place=True)
    a = assign_buffers(values, steps, arguments=(0,), donated=frozenset({0}), results=(2,))
    assert a.buffer_of[1] == a.buffer_of[0]
    assert a.in_place == {0: ((0, 0),)}


def test_no_in_place_when_input_still_live():
    values = {0: F4, 1: F4, 2: F4, 3: F4}
    steps = [Step((0,), (1,)), Step((1,), (2,), ((0, 0),)), Step((1, 2), (3,))]
    a = assign_buffers(values, steps, arguments=(0,), results=(3,))
    assert a.buffer_of[2] != a.buffer_of[1]
    assert not a.in_place


def test_no_reuse_across_dtypes_and_growth_of_free_buffer():
    values = {0: ((2,), "f32"), 1: ((2,), "f32"), 2: ((8,), "f32"), 3: ((2,), "i64"),
              4: ((8,), "f32")}
    steps = [Step((0,), (1,)), Step((1,), (2,)), Step((2,), (3,)), Step((3,), (4,))]
    a = assign_buffers(values, steps, arguments=(0,), results=(4,))
    assert a.dtype[a.buffer_of[3]] == "i64"
    assert a.buffer_of[3] not in (a.buffer_of[1], a.buffer_of[2])
    assert a.capacity[a.buffer_of[2]] >= 8


def test_constants_are_never_reused():
    values = {0: F4, 1: F4, 2: F4, 3: F4}
    steps = [Step((0, 1), (2,)), Step((2, 1), (3,))]
    a = assign_buffers(values, steps, arguments=(0,), constants=(1,), results=(3,))
    assert a.buffer_of[1] not in (a.buffer_of[2], a.buffer_of[3])


def test_random_programs_never_clobber_live_values():
    """Simulate each assignment: a value's buffer must hold it from definition to last use."""
    rng = random.Random(0)
    for _ in range(300):
        n_args = rng.randint(1, 3)
        values = {i: ((rng.choice([2, 4, 8]),), rng.choice(["f32", "f32", "i64"]))
                  for i in range(n_args)}
        steps = []
        nxt = n_args
        for _ in range(rng.randint(1, 12)):
            ins = tuple(rng.sample(sorted(values), rng.randint(1, min(3, len(values)))))
            outs = tuple(range(nxt, nxt + rng.randint(1, 2)))
            for o in outs:
                values[o] = ((rng.choice([2, 4, 8]),), rng.choice(["f32", "i64"]))
            nxt += len(outs)
            pairs = tuple((oi, ii) for oi in range(len(outs)) for ii in range(len(ins))
                          if rng.random() < 0.5)
            steps.append(Step(ins, outs, pairs))
        results = tuple(rng.sample(sorted(values)[n_args:], 1))
        a = assign_buffers(values, steps, arguments=tuple(range(n_args)), results=results)
        holder: dict[int, int] = {a.buffer_of[i]: i for i in range(n_args)}
        for i, st in enumerate(steps):
            for v in st.inputs:
                assert holder[a.buffer_of[v]] == v, (i, v, steps)
            written = {a.buffer_of[o] for o in st.outputs}
            assert len(written) == len(st.outputs)
            for oi, o in enumerate(st.outputs):
                b = a.buffer_of[o]
                assert a.capacity[b] >= values[o][0][0] and a.dtype[b] == values[o][1]
                # Writing over an input is only allowed when declared in place.
                for ii, v in enumerate(st.inputs):
                    if a.buffer_of[v] == b:
                        assert (oi, ii) in a.in_place.get(i, ())
                holder[b] = o
        for r in results:
            assert holder[a.buffer_of[r]] == r
        for v in range(n_args):
            assert holder[a.buffer_of[v]] == v


def test_constant_outputs_keep_the_buffer_bound_up_front():
    values = {0: F4, 1: F4, 2: F4}
    steps = [Step((), (1,)), Step((0, 1), (2,))]
    a = assign_buffers(values, steps, arguments=(0,), constants=(1,), results=(2,))
    assert len(a.capacity) == 3
    assert planned_bytes(a) == naive_peak_bytes(values)


def test_a_view_shares_the_live_input_s_buffer_and_blocks_writes_over_either():
    # 1 = f(0); 2 = reshape(1) (a view); 3 = g(1) in place allowed; 4 = h(2) in place allowed
    v = {0: F4, 1: F4, 2: ((2, 2), "f32"), 3: F4, 4: ((2, 2), "f32")}
    steps = [Step((0,), (1,)), Step((1,), (2,), ((0, 0),), view=True),
             Step((1,), (3,), ((0, 0),)), Step((2,), (4,), ((0, 0),))]
    a = assign_buffers(v, steps, arguments=(0,), results=(3, 4))
    assert a.buffer_of[2] == a.buffer_of[1]  # no copy: the same buffer
    assert a.in_place[1] == ((0, 0),)
    # 3 may not overwrite 1 while its view 2 is still read (at step 3) ...
    assert a.buffer_of[3] != a.buffer_of[1]
    # ... and 4 (a result) gets its own buffer
    assert a.buffer_of[4] not in {a.buffer_of[i] for i in (0, 1, 3)}
    # once the view is read no more, its last reader may write over it
    v5 = {**v, 4: ((2, 2), "f32")}
    steps5 = [Step((0,), (1,)), Step((1,), (2,), ((0, 0),), view=True), Step((1,), (3,)),
              Step((2,), (4,), ((0, 0),)), Step((3, 4), (5,))]
    a = assign_buffers({**v5, 5: F4}, steps5, arguments=(0,), results=(5,))
    assert a.buffer_of[2] == a.buffer_of[1] == a.buffer_of[4]
    assert a.buffer_of[3] != a.buffer_of[1]


def test_no_view_of_arguments_constants_or_into_results():
    v = {0: F4, 1: ((2, 2), "f32"), 2: F4}
    steps = [Step((0,), (1,), ((0, 0),), view=True), Step((0, 1), (2,))]
    a = assign_buffers(v, steps, arguments=(0,), results=(2,))
    assert a.buffer_of[1] != a.buffer_of[0]  # a view of an argument: a copy instead
    # a donated argument too: its buffer is the caller's array, of the argument's shape
    a = assign_buffers(v, steps, arguments=(0,), donated=frozenset({0}), results=(2,))
    assert a.buffer_of[1] != a.buffer_of[0]
    v = {0: F4, 1: F4, 2: ((2, 2), "f32")}
    a = assign_buffers(v, [Step((0,), (1,)), Step((1,), (2,), ((0, 0),), view=True)],
                       arguments=(0,), results=(1, 2))
    assert a.buffer_of[2] != a.buffer_of[1]  # a result's buffer is its own


def test_a_buffer_with_a_live_view_is_not_reused():
    # 1 = f(0); 2 = view(1); 1's last reader is step 2 but 2 is read at step 4: buffer kept
    v = {i: F4 for i in range(6)}
    steps = [Step((0,), (1,)), Step((1,), (2,), ((0, 0),), view=True), Step((1,), (3,)),
             Step((3,), (4,)), Step((2, 4), (5,))]
    a = assign_buffers(v, steps, arguments=(0,), results=(5,))
    b = a.buffer_of[1]
    assert a.buffer_of[2] == b
    assert a.buffer_of[3] != b and a.buffer_of[4] != b
