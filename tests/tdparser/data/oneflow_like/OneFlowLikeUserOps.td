// User ops in the style of OneFlow's OneFlowUserOps.td, written for tdflow's tests: one big file
// split into groups, each between `#ifdef GET_ONEFLOW_<GROUP>_OP_DEFINITIONS` and `#endif`, so a
// build selects the groups it wants with -D. Ops derive from OneFlow_BaseOp and fill in its
// input/output/attrs dags, which the base concatenates into `arguments` and `results`.
//
// Group: ACTIVATION   elu, gelu, hardtanh, leaky_relu, relu, silu, softsign (+ grads)
// Group: MATH         abs..tanh families (multiclass), add_n, scalar ops, clip_by_scalar
// Group: NN           conv2d, max_pool_2d, batch_norm, bias_add, dropout, layer_norm
// Group: REDUCE       reduce_sum, reduce_max, reduce_mean, argmax
// Group: LOSS         sparse_softmax_cross_entropy, smooth_l1_loss, nll
// Group: DATA         ofrecord_reader, tensor_buffer_to_tensor, identity_buffer

include "OneFlowLikeBase.td"

#ifndef ONEFLOW_LIKE_USER_OPS
#define ONEFLOW_LIKE_USER_OPS

defvar DefaultFloat = "0.";

//===----------------------------------------------------------------------===//
// ACTIVATION
//===----------------------------------------------------------------------===//

#ifdef GET_ONEFLOW_ACTIVATION_OP_DEFINITIONS

def OneFlow_EluOp : OneFlow_UnaryBaseOp<"elu", [NoMemoryEffect]> {
  let attrs = (ins DefaultValuedAttr<F64Attr, "1.">:$alpha);
  let description = [{
    Exponential linear unit: `y = x > 0 ? x : alpha * (exp(x) - 1)`.
  }];
}

def OneFlow_EluGradOp : OneFlow_GradOp<"elu", [NoMemoryEffect]> {
  let attrs = (ins DefaultValuedAttr<F64Attr, "1.">:$alpha);
}

def OneFlow_GeluOp : OneFlow_UnaryBaseOp<"gelu", [NoMemoryEffect]> {
  let input = (ins OneFlow_Tensor:$in);
  let output = (outs OneFlow_Tensor:$out);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"none\"">:$approximate);
}

def OneFlow_HardtanhOp : OneFlow_UnaryBaseOp<"hardtanh", [NoMemoryEffect]> {
  let attrs = (ins
    DefaultValuedAttr<F64Attr, "-1.">:$min_val,
    DefaultValuedAttr<F64Attr, "1.">:$max_val
  );
  let has_check_fn = 1;
}

def OneFlow_LeakyReluOp : OneFlow_UnaryBaseOp<"leaky_relu", [NoMemoryEffect]> {
  let attrs = (ins DefaultValuedAttr<F32Attr, DefaultFloat>:$alpha);
  let summary = "leaky relu: max(x, alpha * x)";
}

def OneFlow_LeakyReluGradOp : OneFlow_GradOp<"leaky_relu", [NoMemoryEffect]> {
  let attrs = (ins DefaultValuedAttr<F32Attr, DefaultFloat>:$alpha);
}

// Activations without attributes, and their gradients, in one go.
foreach act = ["relu", "silu", "softsign", "mish"] in {
  def "OneFlow_" # !toupper(!substr(act, 0, 1)) # !substr(act, 1) # "Op"
      : OneFlow_UnaryBaseOp<act, [NoMemoryEffect]>;
  def "OneFlow_" # !toupper(!substr(act, 0, 1)) # !substr(act, 1) # "GradOp"
      : OneFlow_GradOp<act, [NoMemoryEffect]> {
    let same_output_regst_num = 1;
  }
}

#endif // GET_ONEFLOW_ACTIVATION_OP_DEFINITIONS

//===----------------------------------------------------------------------===//
// MATH
//===----------------------------------------------------------------------===//

#ifdef GET_ONEFLOW_MATH_OP_DEFINITIONS

// One forward op and one gradient op per math function.
multiclass OneFlow_UnaryMath<string name, bit hasGrad = 1> {
  def Op : OneFlow_UnaryBaseOp<name, [NoMemoryEffect]> {
    let description = "Computes `" # name # "(x)` elementwise.";
  }
  if hasGrad then {
    def GradOp : OneFlow_GradOp<name, [NoMemoryEffect]>;
  }
}

defm OneFlow_Abs : OneFlow_UnaryMath<"abs">;
defm OneFlow_Ceil : OneFlow_UnaryMath<"ceil", 0>;
defm OneFlow_Exp : OneFlow_UnaryMath<"exp">;
defm OneFlow_Floor : OneFlow_UnaryMath<"floor", 0>;
defm OneFlow_Log : OneFlow_UnaryMath<"log">;
defm OneFlow_Rsqrt : OneFlow_UnaryMath<"rsqrt">;
defm OneFlow_Sign : OneFlow_UnaryMath<"sign", false>;
defm OneFlow_Tanh : OneFlow_UnaryMath<"tanh">;

def OneFlow_AddNOp : OneFlow_InferredOp<"add_n", [NoMemoryEffect]> {
  let input = (ins Variadic<OneFlow_Tensor>:$in);
  let output = (outs OneFlow_Tensor:$out);
  let has_check_fn = 1;
  let same_output_regst_num = 1;
}

// Scalar ops take either an integer or a float operand, flagged by has_*_operand.
class OneFlow_ScalarMathOp<string name>
    : OneFlow_UnaryBaseOp<"scalar_" # name, [NoMemoryEffect]> {
  let input = (ins OneFlow_Tensor:$in);
  let output = (outs OneFlow_Tensor:$out);
  let attrs = (ins
    DefaultValuedAttr<BoolAttr, "false">:$has_int_operand,
    DefaultValuedAttr<BoolAttr, "false">:$has_float_operand,
    DefaultValuedAttr<SI64Attr, "0">:$int_operand,
    DefaultValuedAttr<F64Attr, "0.">:$float_operand
  );
}

defvar ScalarOps = ["add", "sub", "mul", "div", "pow", "fmod"];
foreach i = !range(ScalarOps) in {
  def OneFlow_Scalar # !toupper(!substr(ScalarOps[i], 0, 1)) # !substr(ScalarOps[i], 1) # Op
      : OneFlow_ScalarMathOp<ScalarOps[i]> {
    int index_in_group = i;
    let same_output_regst_num = !if(!lt(i, 4), 1, -1);
  }
}

def OneFlow_ClipByScalarOp : OneFlow_UnaryBaseOp<"clip_by_scalar", [NoMemoryEffect]> {
  let attrs = (ins
    DefaultValuedAttr<F64Attr, "0.">:$floating_min,
    DefaultValuedAttr<SI64Attr, "0">:$integral_min,
    DefaultValuedAttr<F64Attr, "0.">:$floating_max,
    DefaultValuedAttr<SI64Attr, "0">:$integral_max
  );
}

#endif // GET_ONEFLOW_MATH_OP_DEFINITIONS

//===----------------------------------------------------------------------===//
// NN
//===----------------------------------------------------------------------===//

#ifdef GET_ONEFLOW_NN_OP_DEFINITIONS

class OneFlow_ConvOp<int ndims>
    : OneFlow_InferredOp<"conv" # ndims # "d",
                         [NoMemoryEffect, AttrSizedOperandSegments,
                          DeclareOpInterfaceMethods<NCHWCompatibleInterface>]> {
  let input = (ins
    OneFlow_Tensor:$in,
    OneFlow_Tensor:$weight,
    Optional<OneFlow_Tensor>:$bias,
    Optional<OneFlow_Tensor>:$bias_multiplier
  );
  let output = (outs OneFlow_Tensor:$out);
  let attrs = (ins
    DefaultValuedAttr<SI32Attr, "0">:$filters,
    SI32ArrayAttr:$padding_before,
    StrAttr:$data_format,
    SI32ArrayAttr:$kernel_size,
    SI32ArrayAttr:$strides,
    SI32ArrayAttr:$dilation_rate,
    DefaultValuedAttr<SI32Attr, "1">:$groups
  );
  let has_check_fn = 1;
  let has_compute_complexity_fn = 1;
  int spatial_dims = ndims;
  list<int> default_strides = !listsplat(1, ndims);
}

def OneFlow_Conv1DOp : OneFlow_ConvOp<1>;
def OneFlow_Conv2DOp : OneFlow_ConvOp<2> {
  let summary = "2-D convolution over an NCHW or NHWC input";
}
def OneFlow_Conv3DOp : OneFlow_ConvOp<3>;

def OneFlow_MaxPool2DOp : OneFlow_InferredOp<"max_pool_2d",
                                             [NoMemoryEffect,
                                              DeclareOpInterfaceMethods<NCHWCompatibleInterface>]> {
  let input = (ins OneFlow_Tensor:$x);
  let output = (outs OneFlow_Tensor:$y, OneFlow_Tensor:$indice);
  let attrs = (ins
    SI32ArrayAttr:$padding,
    StrAttr:$data_format,
    SI32ArrayAttr:$kernel_size,
    SI32ArrayAttr:$stride,
    SI32ArrayAttr:$dilation,
    DefaultValuedAttr<BoolAttr, "false">:$return_indices,
    DefaultValuedAttr<BoolAttr, "false">:$ceil_mode
  );
}

def OneFlow_NormalizationOp : OneFlow_InferredOp<"normalization",
                                                 [NoMemoryEffect, AttrSizedOperandSegments,
                                                  AttrSizedResultSegments]> {
  let input = (ins
    OneFlow_Tensor:$x,
    Optional<OneFlow_Tensor>:$moving_mean,
    Optional<OneFlow_Tensor>:$moving_variance,
    OneFlow_Tensor:$gamma,
    OneFlow_Tensor:$beta,
    Optional<OneFlow_Tensor>:$_add_to_output
  );
  let output = (outs
    OneFlow_Tensor:$y,
    Optional<OneFlow_Tensor>:$mean,
    Optional<OneFlow_Tensor>:$inv_variance
  );
  let attrs = (ins
    DefaultValuedAttr<SI32Attr, "0">:$axis,
    DefaultValuedAttr<F32Attr, "0.">:$epsilon,
    DefaultValuedAttr<BoolAttr, "false">:$training,
    DefaultValuedAttr<F32Attr, "0.">:$momentum
  );
  let has_input_arg_modify_fn = 1;
  let summary = "batch normalization; `" # opName # "` in the op registry";
}

def OneFlow_BiasAddOp : OneFlow_InferredOp<"bias_add", [NoMemoryEffect]> {
  let input = (ins OneFlow_Tensor:$a, OneFlow_Tensor:$b);
  let output = (outs OneFlow_Tensor:$out);
  let attrs = (ins DefaultValuedAttr<SI32Attr, "0">:$axis);
}

def OneFlow_DropoutOp : OneFlow_InferredOp<"dropout", [NoMemoryEffect]> {
  let input = (ins OneFlow_Tensor:$in, Optional<OneFlow_Tensor>:$_add_to_output);
  let output = (outs OneFlow_Tensor:$out, OneFlow_Tensor:$mask);
  let attrs = (ins DefaultValuedAttr<F32Attr, "0.">:$rate);
  let has_check_fn = 1;
}

def OneFlow_LayerNormOp : OneFlow_InferredOp<"layer_norm", [NoMemoryEffect,
                                                            AttrSizedOperandSegments]> {
  let input = (ins OneFlow_Tensor:$x, Optional<OneFlow_Tensor>:$beta,
                   Optional<OneFlow_Tensor>:$gamma);
  let output = (outs OneFlow_Tensor:$y, OneFlow_Tensor:$mean, OneFlow_Tensor:$inv_variance);
  let attrs = (ins
    DefaultValuedAttr<BoolAttr, "false">:$center,
    DefaultValuedAttr<BoolAttr, "false">:$scale,
    DefaultValuedAttr<SI64Attr, "0">:$begin_norm_axis,
    DefaultValuedAttr<SI64Attr, "0">:$begin_params_axis,
    DefaultValuedAttr<F64Attr, "0.">:$epsilon
  );
}

#endif // GET_ONEFLOW_NN_OP_DEFINITIONS

//===----------------------------------------------------------------------===//
// REDUCE
//===----------------------------------------------------------------------===//

#ifdef GET_ONEFLOW_REDUCE_OP_DEFINITIONS

class OneFlow_ReduceOp<string kind>
    : OneFlow_InferredOp<"reduce_" # kind, [NoMemoryEffect]> {
  let input = (ins OneFlow_Tensor:$input_tensor);
  let output = (outs OneFlow_Tensor:$output_tensor);
  let attrs = (ins SI32ArrayAttr:$axis, DefaultValuedAttr<BoolAttr, "false">:$keepdims);
  // The dag's argument names, for documentation generators.
  list<string> attr_names = !foreach(i, !range(!size(attrs)), !getdagname(attrs, i));
  string signature = "(" # !interleave(attr_names, ", ") # ")";
}

let has_check_fn = 1 in {
  def OneFlow_ReduceSumOp : OneFlow_ReduceOp<"sum">;
  def OneFlow_ReduceMaxOp : OneFlow_ReduceOp<"max">;
}
def OneFlow_ReduceMeanOp : OneFlow_ReduceOp<"mean">;

def OneFlow_ArgmaxOp : OneFlow_InferredOp<"argmax", [NoMemoryEffect]> {
  let input = (ins OneFlow_Tensor:$in);
  let output = (outs OneFlow_Tensor:$out);
  let has_data_type_infer_fn = 1;
  bits<4> out_dtype = 0b0110;
}

#endif // GET_ONEFLOW_REDUCE_OP_DEFINITIONS

//===----------------------------------------------------------------------===//
// LOSS
//===----------------------------------------------------------------------===//

#ifdef GET_ONEFLOW_LOSS_OP_DEFINITIONS

def OneFlow_SparseSoftmaxCrossEntropyOp
    : OneFlow_InferredOp<"sparse_softmax_cross_entropy", [NoMemoryEffect]> {
  let input = (ins OneFlow_Tensor:$prediction, OneFlow_Tensor:$label);
  let output = (outs OneFlow_Tensor:$prob, OneFlow_Tensor:$out);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$depth);
  let has_input_arg_modify_fn = 1;
}

def OneFlow_SmoothL1LossOp : OneFlow_InferredOp<"smooth_l1_loss", [NoMemoryEffect]> {
  let input = (ins OneFlow_Tensor:$input, OneFlow_Tensor:$target);
  let output = (outs OneFlow_Tensor:$out);
  let attrs = (ins DefaultValuedAttr<F32Attr, "0.">:$beta);
  let has_input_arg_modify_fn = 1;
}

def OneFlow_NllOp : OneFlow_InferredOp<"nll", [NoMemoryEffect]> {
  let input = (ins OneFlow_Tensor:$input, OneFlow_Tensor:$target,
                   Optional<OneFlow_Tensor>:$weight);
  let output = (outs OneFlow_Tensor:$output, OneFlow_Tensor:$out_weight);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$ignore_index);
  let has_input_arg_modify_fn = 1;
  // Total number of operands and results, computed from the dags.
  int arity = !add(!size(input), !size(output));
}

#endif // GET_ONEFLOW_LOSS_OP_DEFINITIONS

//===----------------------------------------------------------------------===//
// DATA
//===----------------------------------------------------------------------===//

#ifdef GET_ONEFLOW_DATA_OP_DEFINITIONS

def OneFlow_OFRecordReaderOp : OneFlow_BaseOp<"OFRecordReader", [NoMemoryEffect,
    DeclareOpInterfaceMethods<UserOpCompatibleInterface>,
    DeclareOpInterfaceMethods<AlternativeOpTypeNameInterface, ["getOriginalOpTypeName"]>]> {
  let output = (outs OneFlow_Tensor:$out);
  let attrs = (ins
    StrAttr:$data_dir,
    DefaultValuedAttr<SI32Attr, "0">:$data_part_num,
    DefaultValuedAttr<SI32Attr, "0">:$batch_size,
    DefaultValuedAttr<StrAttr, "\"part-\"">:$part_name_prefix,
    DefaultValuedAttr<SI32Attr, "-1">:$part_name_suffix_length,
    DefaultValuedAttr<BoolAttr, "false">:$random_shuffle,
    DefaultValuedAttr<SI64Attr, "-1">:$seed,
    DefaultValuedAttr<SI32Attr, "1024">:$shuffle_buffer_size,
    DefaultValuedAttr<BoolAttr, "false">:$shuffle_after_epoch,
    StrArrayAttr:$nd_sbp
  );
  let has_output_arg_modify_fn = 1;
  let has_nd_sbp_infer_fn = 1;
}

def OneFlow_TensorBufferToTensorOp
    : OneFlow_InferredOp<"tensor_buffer_to_tensor", [NoMemoryEffect]> {
  let input = (ins OneFlow_TensorBuffer:$in);
  let output = (outs OneFlow_Tensor:$out);
  let attrs = (ins SI64ArrayAttr:$instance_shape, I64Attr:$dtype);
}

#ifdef ONEFLOW_LIKE_WITH_BUFFER_IDENTITY
def OneFlow_IdentityBufferOp : OneFlow_InferredOp<"identity_buffer", [NoMemoryEffect]> {
  let input = (ins OneFlow_TensorBuffer:$in);
  let output = (outs OneFlow_TensorBuffer:$out);
}
#else
def OneFlow_IdentityBufferOp : OneFlow_InferredOp<"identity_buffer", [NoMemoryEffect]> {
  let summary = "identity on tensor buffers (unavailable in this build)";
}
#endif

#endif // GET_ONEFLOW_DATA_OP_DEFINITIONS

// A group list (as OneFlow's generator scripts keep) derived from what was defined.
defvar AllOps = !foldl([]<string>, [OneFlow_Dialect], acc, d, !listconcat(acc, [d.name]));
def OneFlow_Summary {
  list<string> dialects = AllOps;
  string selected = ""
#ifdef GET_ONEFLOW_ACTIVATION_OP_DEFINITIONS
      # "ACTIVATION "
#endif
#ifdef GET_ONEFLOW_NN_OP_DEFINITIONS
      # "NN "
#endif
      # "";
}

#endif // ONEFLOW_LIKE_USER_OPS
