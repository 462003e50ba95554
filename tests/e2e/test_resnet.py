"""The small ResNet (examples/resnet.py, examples/train_resnet.py): it trains in both modes,
eager and graph mode agree bit for bit, batch norm's moving statistics are updated in training
and used in inference, examples/resnet.mlir is current and verifies, and one residual block
matches PyTorch forward and backward (skipped without torch)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

import digits  # noqa: E402
import resnet  # noqa: E402
import train_resnet  # noqa: E402

import tdflow  # noqa: E402

F = tdflow.functional
STEPS = 200  # the script's default: both modes reach the target (accuracy is noisy earlier)


def first_batch() -> tuple[np.ndarray, np.ndarray]:
    d = digits.load()
    return next(digits.batches(d.x_train, d.y_train, digits.BATCH, seed=0))


@pytest.fixture(scope="module")
def runs():
    return {mode: train_resnet.train(mode, STEPS, seed=0) for mode in ("eager", "graph")}


def test_loss_falls_and_accuracy_reaches_the_target(runs):
    for mode, run in runs.items():
        first = float(np.mean(run.losses[:10]))
        assert run.final_loss < 0.25 * first, (mode, first, run.final_loss)
        assert run.test_accuracy >= train_resnet.TARGET, (mode, run.test_accuracy)


def test_eager_and_graph_runs_are_identical(runs):
    """Same weights, batches and ops: every step's loss is the same float (the updates of
    the parameters and of the moving statistics agree bit for bit), and so is the accuracy."""
    assert runs["eager"].losses == runs["graph"].losses
    assert runs["eager"].test_accuracy == runs["graph"].test_accuracy


def test_first_step_gradients_are_bit_for_bit_equal():
    x, y = first_batch()
    params, stats = resnet.init_params(0), resnet.init_stats()
    eager, graph = train_resnet.Eager(params, stats), train_resnet.Graph(params, stats)
    eager_loss, eager_grads = eager.grads(x, y)
    graph_loss, graph_grads = graph.grads(x, y)
    assert eager_loss == graph_loss
    assert list(eager_grads) == list(graph_grads) == list(resnet.PARAMS)
    for k in resnet.PARAMS:
        e, g = eager_grads[k], graph_grads[k]
        assert e.dtype == g.dtype == np.float32 and e.shape == g.shape == params[k].shape, k
        assert np.array_equal(e, g), f"d{k}: max |eager - graph| = {np.abs(e - g).max()}"
        assert np.any(e != 0), k
    for k in resnet.STATS:  # both updated the moving statistics the same way
        assert np.array_equal(eager.stats[k], graph.stats[k]), k


def test_training_updates_the_moving_statistics():
    """One training-mode forward moves each statistic by OneFlow's rule; the stem's can be
    checked against its convolution: mean 0 -> 0.1 * batch mean, variance 1 -> 0.9 + 0.1 *
    unbiased batch variance (momentum 0.9 as float32)."""
    x, y = first_batch()
    params, stats = resnet.init_params(0), resnet.init_stats()
    for mode in ("eager", "graph"):
        stepper = train_resnet.MODES[mode](params, stats)
        stepper.step(x, y)
        new = stepper.stats
        for k in resnet.STATS:
            assert not np.array_equal(new[k], stats[k]), (mode, k)
        h = resnet.conv(F, tdflow.tensor(x.reshape(-1, 1, 8, 8)), tdflow.tensor(
            params["stem_conv"]), params["stem_conv"].shape, 1).numpy().astype(np.float64)
        m = float(np.float32(resnet.MOMENTUM))
        np.testing.assert_allclose(new["stem_bn_mean"], (1 - m) * h.mean(axis=(0, 2, 3)),
                                   rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(new["stem_bn_var"],
                                   m + (1 - m) * h.var(axis=(0, 2, 3), ddof=1), rtol=1e-5)
    assert np.array_equal(stats["stem_bn_mean"], np.zeros(16, np.float32))  # inputs kept


def test_inference_uses_the_moving_statistics():
    """Inference normalizes by the moving statistics, not the batch's: an image's logits do
    not depend on the rest of its batch, change with the statistics, and agree between the
    two modes; the statistics are left as they were."""
    d = digits.load()
    x, y = first_batch()
    params, stats = resnet.init_params(0), resnet.init_stats()
    for mode in ("eager", "graph"):
        stepper = train_resnet.MODES[mode](params, stats)
        before = stepper.logits(d.x_test[:8])
        for _ in range(3):  # moves the statistics (and the weights)
            stepper.step(x, y)
        kept = {k: v.copy() for k, v in stepper.stats.items()}
        alone = stepper.logits(d.x_test[:8])
        within = stepper.logits(d.x_test)[:8]
        np.testing.assert_allclose(alone, within, rtol=1e-5, atol=1e-6)
        assert not np.allclose(alone, before)
        for k, v in stepper.stats.items():
            assert np.array_equal(v, kept[k]), (mode, k)
    # the same statistics and weights give the same logits in both modes
    eager = train_resnet.Eager(params, stats)
    graph = train_resnet.Graph(params, stats)
    for stepper in (eager, graph):
        stepper.step(x, y)
    np.testing.assert_array_equal(eager.logits(d.x_test[:8]), graph.logits(d.x_test[:8]))
    # and differ from what the batch's own statistics would give
    with tdflow.no_grad():
        batch_stats = resnet.forward(F, eager.p, {k: tdflow.tensor(v.copy()) for k, v in
                                                  eager.stats.items()},
                                     tdflow.tensor(d.x_test[:8].reshape(-1, 1, 8, 8)), 8,
                                     training=True).numpy()
    assert not np.allclose(batch_stats, eager.logits(d.x_test[:8]), atol=1e-3)


def test_resnet_mlir_is_current_and_verifies():
    from tdflow.dialect import standard_dialect
    from tdflow.dialect.ir import parse_module, verify_module

    text = (EXAMPLES / "resnet.mlir").read_text()
    assert text == resnet.header() + resnet.program(resnet.BATCH), (
        "examples/resnet.mlir is stale: run python examples/resnet.py --write-mlir")
    assert verify_module(parse_module(text, "resnet.mlir"), standard_dialect()) == []
    assert resnet.BATCH == digits.BATCH


def test_script_exits_1_when_the_target_is_missed():
    assert train_resnet.main(["--mode", "graph", "--steps", "3", "--quiet"]) == 1


def test_resnet_docstring_examples():
    import doctest

    result = doctest.testmod(resnet)
    assert result.attempted and not result.failed


# ---- one residual block against PyTorch ------------------------------------------------------

def _torch_block(torch, p, s, x, name, stride):
    """The block with torch.nn.functional (momentum 0.1 is OneFlow's 0.9)."""
    tf = torch.nn.functional

    def bn(h, n):
        return tf.batch_norm(h, s[f"{n}_mean"], s[f"{n}_var"], p[f"{n}_gamma"], p[f"{n}_beta"],
                             training=True, momentum=1 - resnet.MOMENTUM, eps=resnet.EPSILON)

    h = tf.relu(bn(tf.conv2d(x, p[f"{name}_conv1"], stride=stride, padding=1), f"{name}_bn1"))
    h = bn(tf.conv2d(h, p[f"{name}_conv2"], padding=1), f"{name}_bn2")
    if f"{name}_proj" in p:
        x = bn(tf.conv2d(x, p[f"{name}_proj"], stride=stride), f"{name}_proj_bn")
    return tf.relu(h + x)


@pytest.mark.parametrize("name, c_in, c_out, stride",
                         [b for b in resnet.BLOCKS if b[0] in ("block1", "block2")],
                         ids=["identity", "stride2-projection"])
def test_residual_block_matches_pytorch(name, c_in, c_out, stride):
    """Forward, moving statistics and every gradient of one block in training mode, fp32, the
    same weights (gamma and beta drawn away from 1 and 0) and input as PyTorch CPU.

    Tolerance: rtol 1e-5 plus an atol of 2e-6 times the tensor's largest magnitude. Each value
    is a sum of hundreds of float32 terms (a 3x3xC window, a channel's 8x8x8 batch statistics,
    the gradient's reductions) taken in another order than PyTorch's; the rounding error of
    such a sum scales with its terms, not its result, so a value that cancels to near zero
    may differ by more than 1e-5 of itself. Measured: max |tdflow - torch| <= 5.2e-7 of the
    tensor's max (a few ulps).
    """
    torch = pytest.importorskip("torch", reason="PyTorch is an optional test dependency "
                                "(the block comparison of issue 13)")
    rng = np.random.default_rng(13)
    p = {k: v for k, v in resnet.init_params(1).items() if k.startswith(f"{name}_")}
    for k in p:
        if k.endswith("_gamma"):
            p[k] = rng.uniform(0.5, 1.5, p[k].shape).astype(np.float32)
        elif k.endswith("_beta"):
            p[k] = rng.normal(0, 0.3, p[k].shape).astype(np.float32)
    s = {k: (rng.normal(0, 0.1, v.shape) if k.endswith("_mean") else rng.uniform(
        0.5, 2, v.shape)).astype(np.float32)
        for k, v in resnet.init_stats().items() if k.startswith(f"{name}_")}
    x = rng.normal(size=(8, c_in, 8, 8)).astype(np.float32)
    r = rng.normal(size=(8, c_out, 8 // stride, 8 // stride)).astype(np.float32)

    tp = {k: tdflow.tensor(v.copy(), requires_grad=True) for k, v in p.items()}
    ts = {k: tdflow.tensor(v.copy()) for k, v in s.items()}
    tx = tdflow.tensor(x.copy(), requires_grad=True)
    y = resnet.block(F, tx, tp, ts, name, c_in, c_out, stride, training=True)
    F.reduce_sum(F.mul(y, tdflow.tensor(r)), axis=[]).backward()  # dy = r

    qp = {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}
    qs = {k: torch.tensor(v.copy()) for k, v in s.items()}
    qx = torch.tensor(x, requires_grad=True)
    qy = _torch_block(torch, qp, qs, qx, name, stride)
    (qy * torch.tensor(r)).sum().backward()

    def check(what, got, want):
        want = want.detach().numpy()
        assert got.dtype == want.dtype == np.float32, what
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6 * np.abs(want).max(),
                                   err_msg=what)

    check("y", y.numpy(), qy)
    check("dx", tx.grad.numpy(), qx.grad)
    for k in p:
        check(f"d{k}", tp[k].grad.numpy(), qp[k].grad)
    for k in s:
        check(k, ts[k].numpy(), qs[k])
