//===- tdflow/ops/optim.td - standard ops: optim ----------*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions. The optim family:
// optimizer updates.
// This family's hooks live in tdflow/dialect/hooks/optim.py (where it needs any).
//
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Optimizer
//===----------------------------------------------------------------------===//

def TDF_SgdUpdateOp : TDF_HookedOp<"sgd_update", [NoGrad, AttrSizedOperandSegments]> {
  let summary = "stochastic gradient descent step (in place)";
  let description = [{
    Updates `model` in place: `model -= lr * (scale * model_diff * s + l1 * sign(model) + l2
    * model) + lr * weight_decay * model`, with `lr = learning_rate` (a 1-element tensor,
    when given) or `learning_rate_val`, times `learning_rate_scale`, and `s =
    scale_by_tensor` when given. The step is skipped when `skip_if` is non-zero. It has no
    results and must never be removed as dead code (`model` is marked mutable).

    Example:

    ```mlir
    "tdflow.sgd_update"(%w, %dw) {learning_rate_val = 1.000000e-01 : f32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>} : (tensor<16x4xf32>, tensor<16x4xf32>) -> ()
    ```
  }];
  let input = (ins
    TDF_Tensor:$model,
    TDF_Tensor:$model_diff,
    Optional<TDF_Tensor>:$model_copy,
    Optional<TDF_Tensor>:$learning_rate,
    Optional<TDF_Tensor>:$scale_by_tensor,
    Optional<TDF_Tensor>:$skip_if
  );
  let output = (outs);
  let attrs = (ins
    DefaultValuedAttr<F32Attr, "0.">:$learning_rate_val,
    DefaultValuedAttr<F32Attr, "1.">:$learning_rate_scale,
    DefaultValuedAttr<F64Attr, "1.">:$scale,
    DefaultValuedAttr<F32Attr, "0.">:$l1,
    DefaultValuedAttr<F32Attr, "0.">:$l2,
    DefaultValuedAttr<F32Attr, "0.">:$weight_decay
  );
  let has_input_arg_modify_fn = 1;
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

def TDF_AdamUpdateOp : TDF_HookedOp<"adam_update", [NoGrad, AttrSizedOperandSegments]> {
  let summary = "Adam step (in place), as OneFlow's adam_update";
  let description = [{
    Updates `model`, `m` and `v` (and `max_v` with `amsgrad`) in place, as OneFlow's
    AdamUpdateFunctor: `g = scale * model_diff * s + l1 * sign(model) + l2 * model`;
    `m = beta1 * m + (1 - beta1) * g`; `v = beta2 * v + (1 - beta2) * g * g`;
    `max_v = max(max_v, v)` and `v' = max_v` with `amsgrad`, else `v' = v`;
    `model -= lr / bc1 * m / (sqrt(v') / sqrt(bc2) + epsilon) + lr * weight_decay * model`
    (decoupled weight decay, AdamW's). `lr = learning_rate` (a 1-element tensor, when given)
    or `learning_rate_val`, times `learning_rate_scale`; `s = scale_by_tensor` when given;
    `bc1`/`bc2` are the `bias_correction1`/`bias_correction2` tensors when given, else the
    `*_val` attributes, and 1 when `do_bias_correction` is false. The step is skipped when
    `skip_if` is non-zero; `model_copy` receives the new model. It has no results and must
    never be removed as dead code (`model`, `m`, `v`, `max_v` are marked mutable).

    Example:

    ```mlir
    "tdflow.adam_update"(%w, %dw, %m, %v) {learning_rate_val = 1.000000e-03 : f32, bias_correction1_val = 1.000000e-01 : f32, bias_correction2_val = 1.000000e-03 : f32, epsilon = 9.99999993E-9 : f32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0>} : (tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>) -> ()
    ```
  }];
  let input = (ins
    TDF_Tensor:$model,
    TDF_Tensor:$model_diff,
    Optional<TDF_Tensor>:$model_copy,
    Optional<TDF_Tensor>:$learning_rate,
    Optional<TDF_Tensor>:$scale_by_tensor,
    Optional<TDF_Tensor>:$skip_if,
    Optional<TDF_Tensor>:$bias_correction1,
    Optional<TDF_Tensor>:$bias_correction2,
    TDF_Tensor:$m,
    TDF_Tensor:$v,
    Optional<TDF_Tensor>:$max_v
  );
  // The tensors in operand order (the required m and v come after optional operands, so
  // everything after model_diff is keyword-only): adam_update(w, dw, m=m, v=v, ...).
  let signature = [{
    Void (Tensor model, Tensor model_diff, *, Tensor? model_copy=None, Tensor? learning_rate=None, Tensor? scale_by_tensor=None, Tensor? skip_if=None, Tensor? bias_correction1=None, Tensor? bias_correction2=None, Tensor m, Tensor v, Tensor? max_v=None, Float learning_rate_val=0.0, Float learning_rate_scale=1.0, Float bias_correction1_val=1.0, Float bias_correction2_val=1.0, Double scale=1.0, Float l1=0.0, Float l2=0.0, Float beta1=0.9, Float beta2=0.999, Float epsilon=0.0, Float weight_decay=0.0, Bool amsgrad=False, Bool do_bias_correction=True) => AdamUpdate
  }];
  let output = (outs);
  let attrs = (ins
    DefaultValuedAttr<F32Attr, "0.">:$learning_rate_val,
    DefaultValuedAttr<F32Attr, "1.">:$learning_rate_scale,
    DefaultValuedAttr<F32Attr, "1.">:$bias_correction1_val,
    DefaultValuedAttr<F32Attr, "1.">:$bias_correction2_val,
    DefaultValuedAttr<F64Attr, "1.">:$scale,
    DefaultValuedAttr<F32Attr, "0.">:$l1,
    DefaultValuedAttr<F32Attr, "0.">:$l2,
    DefaultValuedAttr<F32Attr, "0.9">:$beta1,
    DefaultValuedAttr<F32Attr, "0.999">:$beta2,
    DefaultValuedAttr<F32Attr, "0.">:$epsilon,
    DefaultValuedAttr<F32Attr, "0.">:$weight_decay,
    DefaultValuedAttr<BoolAttr, "false">:$amsgrad,
    DefaultValuedAttr<BoolAttr, "true">:$do_bias_correction
  );
  let has_input_arg_modify_fn = 1;
}
