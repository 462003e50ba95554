"""Gradient cases of the SBP boxing ops (dialect/include/tdflow/ops/boxing.td), run by
test_grad_ops.py in one process: the group is one rank, where every boxing op is the identity
and so is its gradient. Their gradients across ranks are checked as adjoints of the
collectives in tests/dialect/test_sbp_boxing.py."""


def add_cases(case, h) -> None:
    """``case(op, inputs, attrs, wrt=...)`` for every boxing op on a 3x4 tensor."""
    for op, attrs in (("boxing_all_reduce", {}), ("boxing_reduce_scatter", {"axis": 0}),
                      ("boxing_all_gather", {"axis": 1}),
                      ("boxing_all_to_all", {"in_axis": 0, "out_axis": 1}),
                      ("boxing_slice", {"axis": 1}), ("boxing_to_partial", {})):
        case(op, {"x": h.normal(3, 4)}, {**attrs, "out_shape": [3, 4]}, wrt="x", label="one_rank")
