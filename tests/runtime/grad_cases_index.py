"""Gradient cases of the ops in tdflow/ops/index.td, run by test_grad_ops.py (eager against
finite differences, graph mode against eager bit for bit)."""

import numpy as np


def add_cases(case, h) -> None:
    """Add this family's cases: ``case(op, inputs, attrs, wrt="x", ...)``; ``h`` has the
    input makers (``h.normal(2, 3)``, ``h.positive``, ``h.away``, ``h.distinct``, ``h.labels``)."""
    # gather: repeated indices accumulate (scatter-add), any axis, indices of any rank
    for shape, idx, axis in (((5, 3), [0, 2, 2, 4], 0), ((5, 3), [[1, 1], [0, 2]], 1),
                             ((2, 3, 4), [3, 0, 3], -1), ((4,), [[2, 2, 2]], 0),
                             ((3, 4), [1], -2)):
        case("gather", {"in": h.normal(*shape), "indices": np.array(idx, np.int64)},
             {"axis": axis}, wrt="in", label=f"{'x'.join(map(str, shape))}_axis{axis}")
    case("gather", {"in": h.normal(4, 3), "indices": np.array([3, 0, 3], np.int32)},
         wrt="in", label="i32_indices")
    # (ids outside [0, like.shape[axis]) are skipped forward, but gather, the gradient, refuses
    # them: test_index_ops.py checks the forward)
    for like, idx, axis in (((4, 3), [0, 2, 2, 3], 0), ((2, 5), [[4, 4], [0, 1]], 1)):
        ids = np.array(idx, np.int64)
        like_a = h.normal(*like)
        data_shape = like[:axis] + ids.shape + like[axis + 1:]
        case("unsorted_segment_sum_like",
             {"data": h.normal(*data_shape), "segment_ids": ids, "like": like_a},
             {"axis": axis}, wrt="data", label=f"like{'x'.join(map(str, like))}_axis{axis}")
    # embedding: a padding row that is looked up, or scale_grad_by_freq, gives by design not
    # the derivative finite differences see (test_index_ops.py checks those against numpy);
    # a padding_idx no index names leaves the gradient exact
    tok = np.array([[1, 3, 3], [0, 3, 5]], np.int64)
    for pad, scale in ((-1, False), (2, False)):
        case("embedding", {"weight": h.normal(6, 4), "indices": tok},
             {"padding_idx": pad, "scale_grad_by_freq": scale}, wrt="weight",
             label=f"pad{pad}_scale{int(scale)}")
    case("embedding", {"weight": h.normal(5, 2), "indices": h.labels(7, 5)}, wrt="weight",
         label="labels")
    for shape, dim, start, length in (((4, 6), 1, 2, 3), ((4, 6), 0, 0, 4), ((2, 3, 4), -1, -3, 2),
                                      ((5,), 0, 4, 1), ((3, 4), 1, 1, 0)):
        tag = f"{'x'.join(map(str, shape))}_dim{dim}_start{start}_len{length}"
        case("narrow", {"in": h.normal(*shape)}, {"dim": dim, "start": start, "length": length},
             wrt="in", label=tag)
        d = dim % len(shape)
        dy_shape = shape[:d] + (length,) + shape[d + 1:]
        case("narrow_grad", {"dy": h.normal(*dy_shape), "like": h.normal(*shape)},
             {"dim": dim, "start": start, "length": length}, wrt="dy", label=tag)
    for shape, target in (((3, 1), [2, 3, 4]), ((4,), [3, 4]), ((2, 1, 3), [2, 5, -1]),
                          ((3, 4), [3, 4]), ((), [2, 3]), ((1, 1), [1, 3])):
        case("expand", {"in": h.normal(*shape)}, {"expand_shape": target}, wrt="in",
             label=f"{'x'.join(map(str, shape)) or 'scalar'}_to_{target}".replace(" ", ""))
    for shape, axis in (((3, 4), 0), ((3, 4), 2), ((3, 4), -1), ((), 0)):
        case("expand_dims", {"in": h.normal(*shape)}, {"axis": axis}, wrt="in",
             label=f"{'x'.join(map(str, shape)) or 'scalar'}_axis{axis}")
    for shape, axes in (((1, 3, 1), [0, 2]), ((1, 3, 1), [-1]), ((3, 4), []), ((1,), [0])):
        case("squeeze", {"in": h.normal(*shape)}, {"axes": axes}, wrt="in",
             label=f"{'x'.join(map(str, shape))}_axes{axes}".replace(" ", ""))
    for shape, diag in (((4, 4), 0), ((3, 5), -1), ((2, 3, 4), 1), ((4, 3), 2)):
        case("tril", {"in": h.normal(*shape)},
             {"diagonal": diag, "is_floating_fill_value": True, "floating_fill_value": -3.0},
             wrt="in", label=f"{'x'.join(map(str, shape))}_diag{diag}")
    for shape, diag, attrs in (((4, 4), 0, {"is_floating_scale_value": True,
                                            "floating_scale_value": 0.125}),
                               ((2, 3, 4), -1, {"integer_scale_value": 3}),
                               ((3, 4), 1, {"is_floating_scale_value": True,
                                            "floating_scale_value": -2.5,
                                            "is_floating_fill_value": True,
                                            "floating_fill_value": 7.0})):
        case("fused_scale_tril", {"in": h.normal(*shape)}, {"diagonal": diag, **attrs},
             wrt="in", label=f"{'x'.join(map(str, shape))}_diag{diag}")
    add_indexing_cases(case, h)


def add_indexing_cases(case, h) -> None:
    """The ops of the reduce, index and slice families (formerly ops/indexing.td): scans, dim_gather and the scatters, triu, pad."""
    for shape, dim in (((2, 4), 1), ((3, 2), 0), ((5,), -1)):
        tag = f"{'x'.join(map(str, shape))}_dim{dim}"
        case("cumsum", {"x": h.normal(*shape)}, {"dim": dim}, wrt="x", label=tag)
        case("cumprod", {"x": h.away(*shape)}, {"dim": dim}, wrt="x", label=tag)
    # a zero inside the product: cumprod_grad forms the products without dividing
    case("cumprod", {"x": np.array([[0.5, 0.0, -1.5, 2.0], [1.2, -0.7, 0.0, 0.0]])},
         {"dim": 1}, wrt="x", label="zeros")
    # repeated indices accumulate in the gradient (dim_scatter_add_like)
    x, idx = h.normal(3, 4), np.array([[0, 3, 3], [1, 1, 2]], np.int64)
    case("dim_gather", {"input": x, "index": idx}, {"dim": 1}, wrt="input", label="dim1_repeats")
    case("dim_gather", {"input": h.normal(3, 2), "index": np.array([[2, 0], [0, 1]], np.int32)},
         {"dim": 0}, wrt="input", label="dim0_i32_smaller")
    case("dim_scatter_add_like", {"like": h.normal(3, 4), "index": idx, "src": h.normal(2, 3)},
         {"dim": 1}, wrt="src", label="dim1")
    # update: distinct targets (with repeats the gradient of src depends on which write wins)
    distinct = np.array([[2, 0, 1], [0, 3, 2]], np.int64)
    case("dim_scatter_update", {"input": h.normal(2, 4), "index": distinct, "src": h.normal(2, 3)},
         {"dim": 1}, wrt="input src", label="dim1")
    case("dim_scatter_add", {"input": h.normal(3, 3), "index": np.array([[0, 2, 2], [0, 0, 1]]),
                             "src": h.normal(2, 3)}, {"dim": 0}, wrt="input src",
         label="dim0_repeats")
    case("dim_scatter_mul", {"input": h.normal(2, 4), "index": distinct, "src": h.away(2, 3)},
         {"dim": 1}, wrt="input src", label="dim1")
    # index tuples into the first k dims; a repeated tuple accumulates in gather_nd's gradient
    tup = np.array([[1, 0], [3, 2], [1, 0]], np.int64)
    case("gather_nd", {"params": h.normal(4, 3, 2), "indices": tup}, wrt="params", label="k2")
    case("gather_nd", {"params": h.normal(3, 4), "indices": np.array([[[2], [0]]], np.int32)},
         wrt="params", label="k1_i32")
    case("scatter_nd_like", {"like": h.normal(4, 3, 2), "indices": tup, "updates": h.normal(3, 2)},
         wrt="updates", label="k2")
    distinct_tup = np.array([[1, 0], [3, 2]], np.int64)
    case("tensor_scatter_nd_update", {"params": h.normal(4, 3), "updates": h.normal(2),
                                      "indices": distinct_tup}, wrt="params updates", label="k2")
    case("tensor_scatter_nd_add", {"params": h.normal(4, 3, 2), "updates": h.normal(3, 2),
                                   "indices": tup}, wrt="params updates", label="k2_repeats")
    for shape, diag in (((4, 4), 0), ((3, 5), -1), ((2, 3, 4), 2)):
        case("triu", {"in": h.normal(*shape)}, {"diagonal": diag}, wrt="in",
             label=f"{'x'.join(map(str, shape))}_diag{diag}")
    for shape, before, after in (((2, 3), [1, 0], [0, 2]), ((3,), [2], [1]),
                                 ((2, 2, 2), [0, 1, 0], [1, 0, 0])):
        case("pad", {"x": h.normal(*shape)},
             {"padding_before": before, "padding_after": after, "padding": [],
              "floating_constant_value": 1.5}, wrt="x",
             label=f"{'x'.join(map(str, shape))}_{before}_{after}".replace(" ", ""))
