"""Gradient cases of the ops in tdflow/ops/norm.td, run by test_grad_ops.py (eager against
finite differences, graph mode against eager bit for bit).

``normalization`` in training mode updates its moving statistics in place, so two forward
calls see different moving values; its ``y``, ``mean`` and ``inv_variance`` do not depend on
them (training uses the batch statistics), and every forward of the harness gets fresh
copies of the inputs (``tdflow.tensor`` copies), so finite differences stay exact. The
in-place updates themselves are tested in test_norm_ops.py.
"""


def add_cases(case, h) -> None:
    """Add this family's cases: ``case(op, inputs, attrs, wrt="x", ...)``; ``h`` has the
    input makers (``h.normal(2, 3)``, ``h.positive``, ``h.away``, ``h.distinct``, ``h.labels``)."""
    # layer_norm: plain, affine, params over fewer dims than the normalized ones, and
    # through the mean / inv_variance results
    for shape, a, p, affine, use, label in (
            ((3, 4), 1, 1, False, "y", "3x4_plain"),
            ((3, 4), -1, -1, True, "y", "3x4_affine"),
            ((2, 3, 4), 1, 1, True, "y", "2x3x4_norm1_params1"),
            ((2, 3, 4), 1, 2, True, "y", "2x3x4_norm1_params2"),
            ((2, 3, 4), 2, 1, True, "y", "2x3x4_norm2_params1"),
            ((3, 4), 1, 1, True, "y mean inv_variance", "3x4_all_results"),
            ((2, 6), 1, 1, False, "inv_variance", "2x6_through_inv_variance")):
        x = h.normal(*shape)
        inputs = {"x": x}
        attrs = {"begin_norm_axis": a, "begin_params_axis": p, "epsilon": 1e-5}
        wrt = "x"
        if affine:
            inputs["beta"] = h.normal(*shape[p:])
            inputs["gamma"] = h.normal(*shape[p:])
            attrs.update(center=True, scale=True)
            wrt = "x beta gamma"
        case("layer_norm", inputs, attrs, wrt=wrt, use=use, label=label)

    # normalization: training (batch statistics) and inference (moving statistics)
    for shape, axis, training, use, label in (
            ((4, 3), 1, True, "y", "4x3_train"),
            ((2, 3, 2, 2), 1, True, "y", "2x3x2x2_train"),
            ((3, 2, 4), -1, True, "y", "3x2x4_axis-1_train"),
            ((4, 3), 1, True, "y mean inv_variance", "4x3_train_all_results"),
            ((2, 3, 2, 2), 1, False, "y", "2x3x2x2_infer"),
            ((4, 3), 1, False, "y", "4x3_infer")):
        c = shape[axis]
        inputs = {"x": h.normal(*shape), "moving_mean": h.normal(c),
                  "moving_variance": h.positive(c), "gamma": h.normal(c), "beta": h.normal(c)}
        case("normalization", inputs, {"axis": axis, "epsilon": 1e-5, "training": training,
                                       "momentum": 0.9},
             wrt="x gamma beta", use=use, label=label)
    case("normalization", {"x": h.normal(4, 3), "gamma": h.normal(3), "beta": h.normal(3),
                           "_add_to_output": h.normal(4, 3)},
         {"axis": 1, "epsilon": 1e-5, "training": True},
         wrt="x gamma beta _add_to_output", use="y", label="4x3_no_moving_add_to_output")

    # group_norm: groups, affine, channels_last, silu
    for shape, groups, affine, fmt, act, use, label in (
            ((2, 4, 3), 2, False, "channels_first", "none", "y", "2x4x3_g2"),
            ((2, 4, 3), 2, True, "channels_first", "none", "y", "2x4x3_g2_affine"),
            ((1, 4, 2, 2), 4, True, "channels_first", "none", "y", "1x4x2x2_g4_affine"),
            ((2, 3, 4), 2, True, "channels_last", "none", "y", "2x3x4_g2_last"),
            ((2, 4, 3), 1, True, "channels_first", "silu", "y", "2x4x3_g1_silu"),
            ((2, 4, 3), 2, False, "channels_first", "none", "y mean inv_variance",
             "2x4x3_all_results")):
        c = shape[-1] if fmt == "channels_last" else shape[1]
        inputs = {"x": h.normal(*shape)}
        wrt = "x"
        if affine:
            inputs.update(beta=h.normal(c), gamma=h.normal(c))
            wrt = "x beta gamma"
        case("group_norm", inputs, {"num_groups": groups, "affine": affine, "epsilon": 1e-5,
                                    "data_format": fmt, "activation": act},
             wrt=wrt, use=use, label=label)
