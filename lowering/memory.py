"""Liveness-based buffer assignment: the algorithm behind the ``plan-memory`` pass.

Works on plain data, not IR: values (id -> shape, dtype), an ordered list of steps (inputs,
outputs, the in-place pairs the kernel allows) and which values are arguments, constants and
results. Each value gets a buffer; a buffer is reused once every value held in it is dead, and
an output is written over an input when the kernel allows it, the input dies at that step, and
the input is not a (non-donated) argument, a constant or a result. A view step (a reshape)
gives its output the input's buffer even while the input lives on (not an argument's, donated
or not, nor a constant's, nor for a result); neither may then be written over while the other
is still read.

>>> vals = {0: ((4,), "f32"), 1: ((4,), "f32"), 2: ((4,), "f32"), 3: ((4,), "f32")}
>>> steps = [Step((0,), (1,), ((0, 0),)), Step((1,), (2,), ((0, 0),)), Step((2,), (3,), ())]
>>> a = assign_buffers(vals, steps, arguments=(0,), results=(3,))
>>> a.buffer_of[1] == a.buffer_of[2], a.buffer_of[1] == a.buffer_of[0]
(True, False)
>>> a.in_place
{1: ((0, 0),)}
"""

from __future__ import annotations

from tdflow.core.valueclass import field, value_class

from .plan import nbytes_of


@value_class(frozen=True, slots=True)
class Step:
    """One launch, in value ids; ``in_place`` are ``(output_index, input_index)`` the kernel
    allows. ``view``: the output (index 0) may be the input 0's buffer itself while that input
    is still live (a reshape: same elements, same order), its kernel then doing nothing."""

    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    in_place: tuple[tuple[int, int], ...] = ()
    view: bool = False


@value_class
class Assignment:
    """Result of ``assign_buffers``: value -> buffer, each buffer's capacity and dtype."""

    buffer_of: dict[int, int] = field(default_factory=dict)
    capacity: dict[int, int] = field(default_factory=dict)  # elements
    dtype: dict[int, str] = field(default_factory=dict)
    members: dict[int, list[int]] = field(default_factory=dict)  # buffer -> values held
    in_place: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)  # step -> pairs


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def assign_buffers(
    values: dict[int, tuple[tuple[int, ...], str]],
    steps: list[Step],
    *,
    arguments: tuple[int, ...] = (),
    donated: frozenset[int] = frozenset(),
    constants: tuple[int, ...] = (),
    results: tuple[int, ...] = (),
    reuse: bool = True,
) -> Assignment:
    """Assign a buffer to every value; see the module docstring for the rules.

    Arguments, constants and results get buffers of their own that are never handed to another
    value (a donated argument's buffer may be written in place once the argument is dead).
    """
    end = len(steps)
    last_use: dict[int, int] = {}
    for i, st in enumerate(steps):
        for v in st.inputs:
            last_use[v] = i
    pinned = set(constants) | set(results) | (set(arguments) - set(donated))
    argument_set = set(arguments)
    for v in results:
        last_use[v] = end
    out = Assignment()
    free: list[int] = []

    def new_buffer(v: int) -> int:
        b = len(out.capacity)
        shape, dtype = values[v]
        out.capacity[b] = _numel(shape)
        out.dtype[b] = dtype
        out.members[b] = []
        return b

    def bind(v: int, b: int) -> None:
        out.buffer_of[v] = b
        out.members[b].append(v)
        out.capacity[b] = max(out.capacity[b], _numel(values[v][0]))

    for v in (*arguments, *constants):
        bind(v, new_buffer(v))

    for i, st in enumerate(steps):
        pairs: list[tuple[int, int]] = []
        taken: set[int] = set()
        for oi, o in enumerate(st.outputs):
            if o in out.buffer_of:
                continue  # a constant: bound up front, written once by the prologue
            shape, dtype = values[o]
            chosen = None
            if reuse and o not in results:
                for po, pi in st.in_place:
                    if po != oi or pi >= len(st.inputs):
                        continue
                    v = st.inputs[pi]
                    b = out.buffer_of[v]
                    if (last_use.get(v) == i and v not in pinned and st.inputs.count(v) == 1
                            and values[v] == (shape, dtype) and b not in taken
                            and not _others_live(out, last_use, i, b, v)):
                        chosen = b
                        pairs.append((oi, pi))
                        break
                if chosen is None and st.view and oi == 0 and st.inputs:
                    # a view: the input's buffer as it is, the input living on; never of an
                    # argument (donated or not: the executor binds the caller's array, of the
                    # argument's shape, to its buffer at each call) or a constant
                    v = st.inputs[0]
                    b = out.buffer_of[v]
                    if (v not in pinned and v not in argument_set and values[v][1] == dtype
                            and _numel(values[v][0]) == _numel(shape) and b not in taken):
                        chosen = b
                        pairs.append((0, 0))
                if chosen is None:
                    chosen = _best_fit(free, out, dtype, _numel(shape))
                    if chosen is not None:
                        free.remove(chosen)
            if chosen is None:
                chosen = new_buffer(o)
            taken.add(chosen)
            bind(o, chosen)
        if pairs:
            out.in_place[i] = tuple(pairs)
        # Buffers whose values all died at this step (or outputs never read) become free.
        dying = [v for v in (*st.inputs, *st.outputs) if last_use.get(v, i) <= i]
        for v in dict.fromkeys(dying):
            b = out.buffer_of[v]
            if v in pinned or b in free or b in _live_buffers(out, last_use, i, b):
                continue
            free.append(b)
    return out


def _others_live(out: Assignment, last_use: dict[int, int], i: int, b: int, v: int) -> bool:
    """Whether a value of buffer ``b`` other than ``v`` (a view of it) is read after step
    ``i``: then ``v``'s last reader may not write over it."""
    return any(w != v and last_use.get(w, -1) > i for w in out.members[b])


def _live_buffers(out: Assignment, last_use: dict[int, int], i: int, b: int) -> set[int]:
    """``{b}`` if some value held in ``b`` is still read after step ``i``, else empty."""
    for v in out.members[b]:
        if last_use.get(v, -1) > i:
            return {b}
    return set()


def _best_fit(free: list[int], out: Assignment, dtype: str, n: int) -> int | None:
    """Smallest free buffer that fits ``n`` elements; else the largest one (it grows)."""
    fits = [b for b in free if out.dtype[b] == dtype and out.capacity[b] >= n]
    if fits:
        return min(fits, key=lambda b: out.capacity[b])
    grow = [b for b in free if out.dtype[b] == dtype]
    return max(grow, key=lambda b: out.capacity[b]) if grow else None


def naive_peak_bytes(values: dict[int, tuple[tuple[int, ...], str]]) -> int:
    """Bytes when every value has a buffer of its own (what planning starts from)."""
    return sum(nbytes_of(shape, dtype) for shape, dtype in values.values())


def planned_bytes(a: Assignment) -> int:
    """Bytes of all buffers after assignment."""
    return sum(nbytes_of((a.capacity[b],), a.dtype[b]) for b in a.capacity)
