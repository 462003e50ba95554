//===- tdflow/ops/softmax.td - standard ops: softmax ------*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions. The softmax family:
// softmax, log-softmax and the cross-entropy losses, with their gradients.
// This family's hooks live in tdflow/dialect/hooks/softmax.py (where it needs any).
//
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Reductions and normalisation
//===----------------------------------------------------------------------===//

def TDF_SoftmaxOp : TDF_HookedOp<"softmax", [NoMemoryEffect]> {
  let summary = "softmax over the last axis";
  let grad = [{ in: softmax_grad(out, dout) }];
  let description = [{
    Computes `out = exp(in - max(in)) / sum(exp(in - max(in)))` along the last dim.

    Example:

    ```mlir
    %p = "tdflow.softmax"(%logits) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$out
  );
  let has_compute_complexity_fn = 1;
}

def TDF_LogSoftmaxOp : TDF_HookedOp<"log_softmax", [NoMemoryEffect]> {
  let summary = "log-softmax over the last axis";
  let grad = [{ in: dprob - exp(prob) * reduce_sum(dprob, axis=[-1], keepdims=true) }];
  let description = [{
    Computes `prob = in - max(in) - log(sum(exp(in - max(in))))` along the last dim (the
    output is named `prob`, as in OneFlow).

    Example:

    ```mlir
    %lp = "tdflow.log_softmax"(%logits) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$in
  );
  let output = (outs
    TDF_Tensor:$prob
  );
}

def TDF_SparseSoftmaxCrossEntropyOp : TDF_HookedOp<"sparse_softmax_cross_entropy", [NoMemoryEffect]> {
  let summary = "softmax cross-entropy with integer labels";
  let grad = [{
    prediction: sparse_softmax_cross_entropy_grad(label, dout, prob, depth=depth)
                + softmax_grad(prob, dprob)
  }];
  let description = [{
    For logits `prediction` of shape `[N, depth]` and integer class indices `label` of shape
    `[N]`, returns `prob = softmax(prediction)` (same shape as `prediction`) and the per-row
    loss `out[i] = -log(prob[i, label[i]])` (shape `[N]`, the prediction's element type).
    `depth` must equal the last dim of `prediction`. `label` is marked as not needing a
    gradient. A label outside `[0, depth)` contributes a loss of 0 and no gradient, on every
    backend: this is OneFlow's rule (its kernels skip such rows), which lets a prediction split
    by class (SBP `S(1)`) compute each shard's part with labels offset by the shard's first
    class. Check labels before the call if one out of range is a bug in your data.

    Example:

    ```mlir
    %prob, %loss = "tdflow.sparse_softmax_cross_entropy"(%logits, %labels) {depth = 10 : si64} : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<8x10xf32>, tensor<8xf32>)
    ```
  }];
  let input = (ins
    TDF_Tensor:$prediction,
    TDF_Tensor:$label
  );
  let output = (outs
    TDF_Tensor:$prob,
    TDF_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<SI64Attr, "0">:$depth
  );
  let has_input_arg_modify_fn = 1;
}

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

def TDF_SoftmaxGradOp : TDF_HookedOp<"softmax_grad", [NoMemoryEffect]> {
  let summary = "gradient of softmax";
  let grad = [{
    y: ddx * (dy - reduce_sum(dy * y, axis=[-1], keepdims=true))
       - dy * reduce_sum(ddx * y, axis=[-1], keepdims=true);
    dy: softmax_grad(y, ddx)
  }];
  let description = [{
    Computes `dx = y * (dy - sum(dy * y, last axis))` from softmax's output `y`.

    Example:

    ```mlir
    %dx = "tdflow.softmax_grad"(%y, %dy) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$y,
    TDF_Tensor:$dy
  );
  let output = (outs
    TDF_Tensor:$dx
  );
}

def TDF_SparseSoftmaxCrossEntropyGradOp : TDF_HookedOp<"sparse_softmax_cross_entropy_grad", [NoMemoryEffect, NoGrad]> {
  let summary = "gradient of sparse_softmax_cross_entropy";
  let description = [{
    Computes `prediction_diff = (prob - one_hot(label, depth)) * dy[:, None]`; the result
    has `prob`'s shape.

    Example:

    ```mlir
    %dp = "tdflow.sparse_softmax_cross_entropy_grad"(%labels, %dloss, %prob) {depth = 10 : si64} : (tensor<8xi64>, tensor<8xf32>, tensor<8x10xf32>) -> tensor<8x10xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$label,
    TDF_Tensor:$dy,
    TDF_Tensor:$prob
  );
  let output = (outs
    TDF_Tensor:$prediction_diff
  );
  let attrs = (ins
    DefaultValuedAttr<SI64Attr, "0">:$depth
  );
}

def TDF_SparseSoftmaxCrossEntropyWithGradOp : TDF_HookedOp<"sparse_softmax_cross_entropy_with_grad", [NoMemoryEffect, LoweringOnly]> {
  let summary = "sparse softmax cross-entropy and its gradient, fused by fuse-elementwise";
  let description = [{
    Computes the per-row loss `out` of `sparse_softmax_cross_entropy(prediction, label)`
    and `prediction_diff = sparse_softmax_cross_entropy_grad(label, dy, prob)` from that
    loss's softmax `prob`, in one launch: the softmax is computed in `prediction_diff`, the
    one-hot subtracted and the row scaled by `dy` there, so the bits are those of the two
    ops (labels outside `[0, depth)` give a loss of 0 and no one-hot term, as theirs). Made
    on the CPU by `fuse-elementwise` when `prob` has that gradient as its only user and
    `dy` is ready before the loss (a constant seed, as `sgd_step` and `value_and_grad`
    give it); not part of the functional API (`LoweringOnly`).

    Example:

    ```mlir
    %loss, %dp = "tdflow.sparse_softmax_cross_entropy_with_grad"(%logits, %labels, %dy) {depth = 10 : si64} : (tensor<8x10xf32>, tensor<8xi64>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8x10xf32>)
    ```
  }];
  let input = (ins
    TDF_Tensor:$prediction,
    TDF_Tensor:$label,
    TDF_Tensor:$dy
  );
  let output = (outs
    TDF_Tensor:$out,
    TDF_Tensor:$prediction_diff
  );
  let attrs = (ins
    DefaultValuedAttr<SI64Attr, "0">:$depth
  );
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def TDF_SoftmaxCrossEntropyOp : TDF_HookedOp<"softmax_cross_entropy", [NoMemoryEffect]> {
  let summary = "softmax cross-entropy with soft (probability) targets";
  let grad = [{
    prediction: softmax_cross_entropy_grad(dout, label, prob) + softmax_grad(prob, dprob)
  }];
  let description = [{
    For logits `prediction` of shape `[..., C]` and float targets `label` of the same shape
    and type, returns `prob = softmax(prediction)` along the last dim and the per-row loss
    `out = -sum(label * log(prob), -1)` (shape `prediction.shape[:-1]`). `label` is marked as
    not needing a gradient, as in OneFlow.

    Example:

    ```mlir
    %prob, %loss = "tdflow.softmax_cross_entropy"(%logits, %targets) : (tensor<8x10xf32>, tensor<8x10xf32>) -> (tensor<8x10xf32>, tensor<8xf32>)
    ```
  }];
  let input = (ins
    TDF_Tensor:$prediction,
    TDF_Tensor:$label
  );
  let output = (outs
    TDF_Tensor:$prob,
    TDF_Tensor:$out
  );
  let has_input_arg_modify_fn = 1;
}

def TDF_SoftmaxCrossEntropyGradOp : TDF_HookedOp<"softmax_cross_entropy_grad", [NoMemoryEffect]> {
  let summary = "gradient of softmax_cross_entropy";
  let description = [{
    Computes `prediction_diff = (prob - label) * dy[..., None]`; the result has `prob`'s
    shape.

    Example:

    ```mlir
    %dp = "tdflow.softmax_cross_entropy_grad"(%dloss, %targets, %prob) : (tensor<8xf32>, tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xf32>
    ```
  }];
  let input = (ins
    TDF_Tensor:$dy,
    TDF_Tensor:$label,
    TDF_Tensor:$prob
  );
  let output = (outs
    TDF_Tensor:$prediction_diff
  );
}
