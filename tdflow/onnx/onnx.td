// INTERIM: a quick generation for developing the importer; replaced by `python -m tdflow.onnx.gen_td` output.
include "tdflow/Base.td"
def ONNX_Dialect : Dialect { let name = "onnx"; }
class ONNX_Op<string mnemonic, list<Trait> traits = []> : TDF_Op<mnemonic, traits> { let opDialect = ONNX_Dialect; }
def ONNX_AbsOp : ONNX_Op<"Abs", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_AcosOp : ONNX_Op<"Acos", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_AcoshOp : ONNX_Op<"Acosh", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_AddV13Op : ONNX_Op<"AddV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_AddOp : ONNX_Op<"Add", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_AffineGridOp : ONNX_Op<"AffineGrid", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$theta, TDF_Tensor:$size);
  let output = (outs TDF_Tensor:$grid);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$align_corners);
}
def ONNX_AndOp : ONNX_Op<"And", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_ArgMaxOp : ONNX_Op<"ArgMax", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$axis, DefaultValuedAttr<SI64Attr, "1">:$keepdims, DefaultValuedAttr<SI64Attr, "0">:$select_last_index);
}
def ONNX_ArgMinOp : ONNX_Op<"ArgMin", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$axis, DefaultValuedAttr<SI64Attr, "1">:$keepdims, DefaultValuedAttr<SI64Attr, "0">:$select_last_index);
}
def ONNX_AsinOp : ONNX_Op<"Asin", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_AsinhOp : ONNX_Op<"Asinh", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_AtanOp : ONNX_Op<"Atan", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_AtanhOp : ONNX_Op<"Atanh", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_AttentionV23Op : ONNX_Op<"AttentionV23", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$Q, TDF_Tensor:$K, TDF_Tensor:$V, Optional<TDF_Tensor>:$attn_mask, Optional<TDF_Tensor>:$past_key, Optional<TDF_Tensor>:$past_value);
  let output = (outs TDF_Tensor:$Y, Optional<TDF_Tensor>:$present_key, Optional<TDF_Tensor>:$present_value, Optional<TDF_Tensor>:$qk_matmul_output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$is_causal, OptionalAttr<SI64Attr>:$kv_num_heads, OptionalAttr<SI64Attr>:$q_num_heads, DefaultValuedAttr<SI64Attr, "0">:$qk_matmul_output_mode, OptionalAttr<F32Attr>:$scale, DefaultValuedAttr<F32Attr, "0.0">:$softcap, OptionalAttr<SI64Attr>:$softmax_precision);
}
def ONNX_AttentionV24Op : ONNX_Op<"AttentionV24", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$Q, TDF_Tensor:$K, TDF_Tensor:$V, Optional<TDF_Tensor>:$attn_mask, Optional<TDF_Tensor>:$past_key, Optional<TDF_Tensor>:$past_value, Optional<TDF_Tensor>:$nonpad_kv_seqlen);
  let output = (outs TDF_Tensor:$Y, Optional<TDF_Tensor>:$present_key, Optional<TDF_Tensor>:$present_value, Optional<TDF_Tensor>:$qk_matmul_output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$is_causal, OptionalAttr<SI64Attr>:$kv_num_heads, OptionalAttr<SI64Attr>:$q_num_heads, DefaultValuedAttr<SI64Attr, "0">:$qk_matmul_output_mode, OptionalAttr<F32Attr>:$scale, DefaultValuedAttr<F32Attr, "0.0">:$softcap, OptionalAttr<SI64Attr>:$softmax_precision);
}
def ONNX_AttentionOp : ONNX_Op<"Attention", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$Q, TDF_Tensor:$K, TDF_Tensor:$V, Optional<TDF_Tensor>:$attn_mask, Optional<TDF_Tensor>:$past_key, Optional<TDF_Tensor>:$past_value, Optional<TDF_Tensor>:$nonpad_kv_seqlen);
  let output = (outs TDF_Tensor:$Y, Optional<TDF_Tensor>:$present_key, Optional<TDF_Tensor>:$present_value, Optional<TDF_Tensor>:$qk_matmul_output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$is_causal, OptionalAttr<SI64Attr>:$kv_num_heads, DefaultValuedAttr<SI64Attr, "-1">:$left_window_size, OptionalAttr<SI64Attr>:$q_num_heads, DefaultValuedAttr<SI64Attr, "0">:$qk_matmul_output_mode, DefaultValuedAttr<SI64Attr, "-1">:$right_window_size, OptionalAttr<F32Attr>:$scale, DefaultValuedAttr<F32Attr, "0.0">:$softcap, OptionalAttr<SI64Attr>:$softmax_precision);
}
def ONNX_AveragePoolOp : ONNX_Op<"AveragePool", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad, DefaultValuedAttr<SI64Attr, "0">:$ceil_mode, DefaultValuedAttr<SI64Attr, "0">:$count_include_pad, OptionalAttr<SI64ArrayAttr>:$dilations, SI64ArrayAttr:$kernel_shape, OptionalAttr<SI64ArrayAttr>:$pads, OptionalAttr<SI64ArrayAttr>:$strides);
}
def ONNX_BatchNormalizationOp : ONNX_Op<"BatchNormalization", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$scale, TDF_Tensor:$B, TDF_Tensor:$input_mean, TDF_Tensor:$input_var);
  let output = (outs TDF_Tensor:$Y, Optional<TDF_Tensor>:$running_mean, Optional<TDF_Tensor>:$running_var);
  let attrs = (ins DefaultValuedAttr<F32Attr, "9.999999747378752e-06">:$epsilon, DefaultValuedAttr<F32Attr, "0.8999999761581421">:$momentum, DefaultValuedAttr<SI64Attr, "0">:$training_mode);
}
def ONNX_BernoulliOp : ONNX_Op<"Bernoulli", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<SI64Attr>:$dtype, OptionalAttr<F32Attr>:$seed);
}
def ONNX_BitCastOp : ONNX_Op<"BitCast", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins SI64Attr:$to);
}
def ONNX_BitShiftOp : ONNX_Op<"BitShift", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$Y);
  let output = (outs TDF_Tensor:$Z);
  let attrs = (ins StrAttr:$direction);
}
def ONNX_BitwiseAndOp : ONNX_Op<"BitwiseAnd", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_BitwiseNotOp : ONNX_Op<"BitwiseNot", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_BitwiseOrOp : ONNX_Op<"BitwiseOr", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_BitwiseXorOp : ONNX_Op<"BitwiseXor", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_BlackmanWindowOp : ONNX_Op<"BlackmanWindow", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$size);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$output_datatype, DefaultValuedAttr<SI64Attr, "1">:$periodic);
}
def ONNX_CastV9Op : ONNX_Op<"CastV9", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins SI64Attr:$to);
}
def ONNX_CastV13Op : ONNX_Op<"CastV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins SI64Attr:$to);
}
def ONNX_CastV21Op : ONNX_Op<"CastV21", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$saturate, SI64Attr:$to);
}
def ONNX_CastV23Op : ONNX_Op<"CastV23", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$saturate, SI64Attr:$to);
}
def ONNX_CastV24Op : ONNX_Op<"CastV24", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"up\"">:$round_mode, DefaultValuedAttr<SI64Attr, "1">:$saturate, SI64Attr:$to);
}
def ONNX_CastV25Op : ONNX_Op<"CastV25", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"up\"">:$round_mode, DefaultValuedAttr<SI64Attr, "1">:$saturate, SI64Attr:$to);
}
def ONNX_CastOp : ONNX_Op<"Cast", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"up\"">:$round_mode, DefaultValuedAttr<SI64Attr, "1">:$saturate, SI64Attr:$to);
}
def ONNX_CastLikeV15Op : ONNX_Op<"CastLikeV15", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, TDF_Tensor:$target_type);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_CastLikeV19Op : ONNX_Op<"CastLikeV19", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, TDF_Tensor:$target_type);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$saturate);
}
def ONNX_CastLikeV23Op : ONNX_Op<"CastLikeV23", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, TDF_Tensor:$target_type);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$saturate);
}
def ONNX_CastLikeV24Op : ONNX_Op<"CastLikeV24", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, TDF_Tensor:$target_type);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"up\"">:$round_mode, DefaultValuedAttr<SI64Attr, "1">:$saturate);
}
def ONNX_CastLikeOp : ONNX_Op<"CastLike", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, TDF_Tensor:$target_type);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"up\"">:$round_mode, DefaultValuedAttr<SI64Attr, "1">:$saturate);
}
def ONNX_CausalConvWithStateOp : ONNX_Op<"CausalConvWithState", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$input, TDF_Tensor:$weight, Optional<TDF_Tensor>:$bias, Optional<TDF_Tensor>:$past_state);
  let output = (outs TDF_Tensor:$output, TDF_Tensor:$present_state);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"none\"">:$activation);
}
def ONNX_CeilOp : ONNX_Op<"Ceil", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_CeluOp : ONNX_Op<"Celu", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha);
}
def ONNX_CenterCropPadOp : ONNX_Op<"CenterCropPad", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input_data, TDF_Tensor:$shape);
  let output = (outs TDF_Tensor:$output_data);
  let attrs = (ins OptionalAttr<SI64ArrayAttr>:$axes);
}
def ONNX_ClipV11Op : ONNX_Op<"ClipV11", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$input, Optional<TDF_Tensor>:$min, Optional<TDF_Tensor>:$max);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_ClipOp : ONNX_Op<"Clip", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$input, Optional<TDF_Tensor>:$min, Optional<TDF_Tensor>:$max);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_Col2ImOp : ONNX_Op<"Col2Im", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, TDF_Tensor:$image_shape, TDF_Tensor:$block_shape);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<SI64ArrayAttr>:$dilations, OptionalAttr<SI64ArrayAttr>:$pads, OptionalAttr<SI64ArrayAttr>:$strides);
}
def ONNX_CompressOp : ONNX_Op<"Compress", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, TDF_Tensor:$condition);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<SI64Attr>:$axis);
}
def ONNX_ConcatOp : ONNX_Op<"Concat", [NoMemoryEffect]> {
  let input = (ins Variadic<TDF_Tensor>:$inputs);
  let output = (outs TDF_Tensor:$concat_result);
  let attrs = (ins SI64Attr:$axis);
}
def ONNX_ConcatFromSequenceOp : ONNX_Op<"ConcatFromSequence", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input_sequence);
  let output = (outs TDF_Tensor:$concat_result);
  let attrs = (ins SI64Attr:$axis, DefaultValuedAttr<SI64Attr, "0">:$new_axis);
}
def ONNX_ConstantV11Op : ONNX_Op<"ConstantV11", [NoMemoryEffect]> {
  let input = (ins );
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<ElementsAttr>:$sparse_value, OptionalAttr<ElementsAttr>:$value);
}
def ONNX_ConstantV13Op : ONNX_Op<"ConstantV13", [NoMemoryEffect]> {
  let input = (ins );
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<ElementsAttr>:$sparse_value, OptionalAttr<ElementsAttr>:$value, OptionalAttr<F32Attr>:$value_float, OptionalAttr<F32ArrayAttr>:$value_floats, OptionalAttr<SI64Attr>:$value_int, OptionalAttr<SI64ArrayAttr>:$value_ints, OptionalAttr<StrAttr>:$value_string, OptionalAttr<StrArrayAttr>:$value_strings);
}
def ONNX_ConstantV19Op : ONNX_Op<"ConstantV19", [NoMemoryEffect]> {
  let input = (ins );
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<ElementsAttr>:$sparse_value, OptionalAttr<ElementsAttr>:$value, OptionalAttr<F32Attr>:$value_float, OptionalAttr<F32ArrayAttr>:$value_floats, OptionalAttr<SI64Attr>:$value_int, OptionalAttr<SI64ArrayAttr>:$value_ints, OptionalAttr<StrAttr>:$value_string, OptionalAttr<StrArrayAttr>:$value_strings);
}
def ONNX_ConstantV21Op : ONNX_Op<"ConstantV21", [NoMemoryEffect]> {
  let input = (ins );
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<ElementsAttr>:$sparse_value, OptionalAttr<ElementsAttr>:$value, OptionalAttr<F32Attr>:$value_float, OptionalAttr<F32ArrayAttr>:$value_floats, OptionalAttr<SI64Attr>:$value_int, OptionalAttr<SI64ArrayAttr>:$value_ints, OptionalAttr<StrAttr>:$value_string, OptionalAttr<StrArrayAttr>:$value_strings);
}
def ONNX_ConstantV23Op : ONNX_Op<"ConstantV23", [NoMemoryEffect]> {
  let input = (ins );
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<ElementsAttr>:$sparse_value, OptionalAttr<ElementsAttr>:$value, OptionalAttr<F32Attr>:$value_float, OptionalAttr<F32ArrayAttr>:$value_floats, OptionalAttr<SI64Attr>:$value_int, OptionalAttr<SI64ArrayAttr>:$value_ints, OptionalAttr<StrAttr>:$value_string, OptionalAttr<StrArrayAttr>:$value_strings);
}
def ONNX_ConstantV24Op : ONNX_Op<"ConstantV24", [NoMemoryEffect]> {
  let input = (ins );
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<ElementsAttr>:$sparse_value, OptionalAttr<ElementsAttr>:$value, OptionalAttr<F32Attr>:$value_float, OptionalAttr<F32ArrayAttr>:$value_floats, OptionalAttr<SI64Attr>:$value_int, OptionalAttr<SI64ArrayAttr>:$value_ints, OptionalAttr<StrAttr>:$value_string, OptionalAttr<StrArrayAttr>:$value_strings);
}
def ONNX_ConstantOp : ONNX_Op<"Constant", [NoMemoryEffect]> {
  let input = (ins );
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<ElementsAttr>:$sparse_value, OptionalAttr<ElementsAttr>:$value, OptionalAttr<F32Attr>:$value_float, OptionalAttr<F32ArrayAttr>:$value_floats, OptionalAttr<SI64Attr>:$value_int, OptionalAttr<SI64ArrayAttr>:$value_ints, OptionalAttr<StrAttr>:$value_string, OptionalAttr<StrArrayAttr>:$value_strings);
}
def ONNX_ConstantOfShapeV9Op : ONNX_Op<"ConstantOfShapeV9", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<ElementsAttr>:$value);
}
def ONNX_ConstantOfShapeV20Op : ONNX_Op<"ConstantOfShapeV20", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<ElementsAttr>:$value);
}
def ONNX_ConstantOfShapeV23Op : ONNX_Op<"ConstantOfShapeV23", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<ElementsAttr>:$value);
}
def ONNX_ConstantOfShapeV24Op : ONNX_Op<"ConstantOfShapeV24", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<ElementsAttr>:$value);
}
def ONNX_ConstantOfShapeOp : ONNX_Op<"ConstantOfShape", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<ElementsAttr>:$value);
}
def ONNX_ConvOp : ONNX_Op<"Conv", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$W, Optional<TDF_Tensor>:$B);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad, OptionalAttr<SI64ArrayAttr>:$dilations, DefaultValuedAttr<SI64Attr, "1">:$group, OptionalAttr<SI64ArrayAttr>:$kernel_shape, OptionalAttr<SI64ArrayAttr>:$pads, OptionalAttr<SI64ArrayAttr>:$strides);
}
def ONNX_ConvIntegerOp : ONNX_Op<"ConvInteger", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$x, TDF_Tensor:$w, Optional<TDF_Tensor>:$x_zero_point, Optional<TDF_Tensor>:$w_zero_point);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad, OptionalAttr<SI64ArrayAttr>:$dilations, DefaultValuedAttr<SI64Attr, "1">:$group, OptionalAttr<SI64ArrayAttr>:$kernel_shape, OptionalAttr<SI64ArrayAttr>:$pads, OptionalAttr<SI64ArrayAttr>:$strides);
}
def ONNX_ConvTransposeOp : ONNX_Op<"ConvTranspose", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$W, Optional<TDF_Tensor>:$B);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad, OptionalAttr<SI64ArrayAttr>:$dilations, DefaultValuedAttr<SI64Attr, "1">:$group, OptionalAttr<SI64ArrayAttr>:$kernel_shape, OptionalAttr<SI64ArrayAttr>:$output_padding, OptionalAttr<SI64ArrayAttr>:$output_shape, OptionalAttr<SI64ArrayAttr>:$pads, OptionalAttr<SI64ArrayAttr>:$strides);
}
def ONNX_CosV7Op : ONNX_Op<"CosV7", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_CosOp : ONNX_Op<"Cos", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_CoshOp : ONNX_Op<"Cosh", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_CumProdOp : ONNX_Op<"CumProd", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$x, TDF_Tensor:$axis);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$exclusive, DefaultValuedAttr<SI64Attr, "0">:$reverse);
}
def ONNX_CumSumOp : ONNX_Op<"CumSum", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$x, TDF_Tensor:$axis);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$exclusive, DefaultValuedAttr<SI64Attr, "0">:$reverse);
}
def ONNX_DFTV17Op : ONNX_Op<"DFTV17", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, Optional<TDF_Tensor>:$dft_length);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$axis, DefaultValuedAttr<SI64Attr, "0">:$inverse, DefaultValuedAttr<SI64Attr, "0">:$onesided);
}
def ONNX_DFTOp : ONNX_Op<"DFT", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$input, Optional<TDF_Tensor>:$dft_length, Optional<TDF_Tensor>:$axis);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$inverse, DefaultValuedAttr<SI64Attr, "0">:$onesided);
}
def ONNX_DeformConvOp : ONNX_Op<"DeformConv", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$W, TDF_Tensor:$offset, Optional<TDF_Tensor>:$B, Optional<TDF_Tensor>:$mask);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins OptionalAttr<SI64ArrayAttr>:$dilations, DefaultValuedAttr<SI64Attr, "1">:$group, OptionalAttr<SI64ArrayAttr>:$kernel_shape, DefaultValuedAttr<SI64Attr, "1">:$offset_group, OptionalAttr<SI64ArrayAttr>:$pads, OptionalAttr<SI64ArrayAttr>:$strides);
}
def ONNX_DepthToSpaceOp : ONNX_Op<"DepthToSpace", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins SI64Attr:$blocksize, DefaultValuedAttr<StrAttr, "\"DCR\"">:$mode);
}
def ONNX_DequantizeLinearOp : ONNX_Op<"DequantizeLinear", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$x, TDF_Tensor:$x_scale, Optional<TDF_Tensor>:$x_zero_point);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$axis, DefaultValuedAttr<SI64Attr, "0">:$block_size, DefaultValuedAttr<SI64Attr, "0">:$output_dtype);
}
def ONNX_DetOp : ONNX_Op<"Det", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_DivV7Op : ONNX_Op<"DivV7", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_DivV13Op : ONNX_Op<"DivV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_DivOp : ONNX_Op<"Div", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_DropoutV10Op : ONNX_Op<"DropoutV10", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$output, Optional<TDF_Tensor>:$mask);
  let attrs = (ins DefaultValuedAttr<F32Attr, "0.5">:$ratio);
}
def ONNX_DropoutOp : ONNX_Op<"Dropout", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$ratio, Optional<TDF_Tensor>:$training_mode);
  let output = (outs TDF_Tensor:$output, Optional<TDF_Tensor>:$mask);
  let attrs = (ins OptionalAttr<SI64Attr>:$seed);
}
def ONNX_DynamicQuantizeLinearOp : ONNX_Op<"DynamicQuantizeLinear", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y, TDF_Tensor:$y_scale, TDF_Tensor:$y_zero_point);
  let attrs = (ins );
}
def ONNX_EinsumOp : ONNX_Op<"Einsum", [NoMemoryEffect]> {
  let input = (ins Variadic<TDF_Tensor>:$Inputs);
  let output = (outs TDF_Tensor:$Output);
  let attrs = (ins StrAttr:$equation);
}
def ONNX_EluOp : ONNX_Op<"Elu", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha);
}
def ONNX_EqualV13Op : ONNX_Op<"EqualV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_EqualOp : ONNX_Op<"Equal", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_ErfOp : ONNX_Op<"Erf", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_ExpOp : ONNX_Op<"Exp", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_ExpandOp : ONNX_Op<"Expand", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, TDF_Tensor:$shape);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_EyeLikeOp : ONNX_Op<"EyeLike", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<SI64Attr>:$dtype, DefaultValuedAttr<SI64Attr, "0">:$k);
}
def ONNX_FlattenV13Op : ONNX_Op<"FlattenV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$axis);
}
def ONNX_FlattenOp : ONNX_Op<"Flatten", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$axis);
}
def ONNX_FloorOp : ONNX_Op<"Floor", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_GRUOp : ONNX_Op<"GRU", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$W, TDF_Tensor:$R, Optional<TDF_Tensor>:$B, Optional<TDF_Tensor>:$sequence_lens, Optional<TDF_Tensor>:$initial_h);
  let output = (outs Optional<TDF_Tensor>:$Y, Optional<TDF_Tensor>:$Y_h);
  let attrs = (ins OptionalAttr<F32ArrayAttr>:$activation_alpha, OptionalAttr<F32ArrayAttr>:$activation_beta, OptionalAttr<StrArrayAttr>:$activations, OptionalAttr<F32Attr>:$clip, DefaultValuedAttr<StrAttr, "\"forward\"">:$direction, OptionalAttr<SI64Attr>:$hidden_size, DefaultValuedAttr<SI64Attr, "0">:$layout, DefaultValuedAttr<SI64Attr, "0">:$linear_before_reset);
}
def ONNX_GatherOp : ONNX_Op<"Gather", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$indices);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$axis);
}
def ONNX_GatherElementsOp : ONNX_Op<"GatherElements", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$indices);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$axis);
}
def ONNX_GatherNDOp : ONNX_Op<"GatherND", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$indices);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$batch_dims);
}
def ONNX_GeluOp : ONNX_Op<"Gelu", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"none\"">:$approximate);
}
def ONNX_GemmOp : ONNX_Op<"Gemm", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B, Optional<TDF_Tensor>:$C);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha, DefaultValuedAttr<F32Attr, "1.0">:$beta, DefaultValuedAttr<SI64Attr, "0">:$transA, DefaultValuedAttr<SI64Attr, "0">:$transB);
}
def ONNX_GlobalAveragePoolOp : ONNX_Op<"GlobalAveragePool", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_GlobalLpPoolOp : ONNX_Op<"GlobalLpPool", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "2">:$p);
}
def ONNX_GlobalMaxPoolOp : ONNX_Op<"GlobalMaxPool", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_GreaterOp : ONNX_Op<"Greater", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_GreaterOrEqualOp : ONNX_Op<"GreaterOrEqual", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_GridSampleOp : ONNX_Op<"GridSample", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$grid);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$align_corners, DefaultValuedAttr<StrAttr, "\"linear\"">:$mode, DefaultValuedAttr<StrAttr, "\"zeros\"">:$padding_mode);
}
def ONNX_GroupNormalizationOp : ONNX_Op<"GroupNormalization", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$scale, TDF_Tensor:$bias);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "9.999999747378752e-06">:$epsilon, SI64Attr:$num_groups, DefaultValuedAttr<SI64Attr, "1">:$stash_type);
}
def ONNX_HammingWindowOp : ONNX_Op<"HammingWindow", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$size);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$output_datatype, DefaultValuedAttr<SI64Attr, "1">:$periodic);
}
def ONNX_HannWindowOp : ONNX_Op<"HannWindow", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$size);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$output_datatype, DefaultValuedAttr<SI64Attr, "1">:$periodic);
}
def ONNX_HardSigmoidOp : ONNX_Op<"HardSigmoid", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "0.20000000298023224">:$alpha, DefaultValuedAttr<F32Attr, "0.5">:$beta);
}
def ONNX_HardSwishOp : ONNX_Op<"HardSwish", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_HardmaxOp : ONNX_Op<"Hardmax", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "-1">:$axis);
}
def ONNX_IdentityV1Op : ONNX_Op<"IdentityV1", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_IdentityV13Op : ONNX_Op<"IdentityV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_IdentityV16Op : ONNX_Op<"IdentityV16", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_IdentityV23Op : ONNX_Op<"IdentityV23", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_IdentityV24Op : ONNX_Op<"IdentityV24", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_IdentityOp : ONNX_Op<"Identity", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_IfV11Op : ONNX_Op<"IfV11", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$cond);
  let output = (outs Variadic<TDF_Tensor>:$outputs);
  let attrs = (ins ElementsAttr:$else_branch, ElementsAttr:$then_branch);
}
def ONNX_IfV13Op : ONNX_Op<"IfV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$cond);
  let output = (outs Variadic<TDF_Tensor>:$outputs);
  let attrs = (ins ElementsAttr:$else_branch, ElementsAttr:$then_branch);
}
def ONNX_IfV16Op : ONNX_Op<"IfV16", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$cond);
  let output = (outs Variadic<TDF_Tensor>:$outputs);
  let attrs = (ins ElementsAttr:$else_branch, ElementsAttr:$then_branch);
}
def ONNX_IfV19Op : ONNX_Op<"IfV19", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$cond);
  let output = (outs Variadic<TDF_Tensor>:$outputs);
  let attrs = (ins ElementsAttr:$else_branch, ElementsAttr:$then_branch);
}
def ONNX_IfOp : ONNX_Op<"If", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$cond);
  let output = (outs Variadic<TDF_Tensor>:$outputs);
  let attrs = (ins ElementsAttr:$else_branch, ElementsAttr:$then_branch);
}
def ONNX_ImageDecoderOp : ONNX_Op<"ImageDecoder", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$encoded_stream);
  let output = (outs TDF_Tensor:$image);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"RGB\"">:$pixel_format);
}
def ONNX_InstanceNormalizationOp : ONNX_Op<"InstanceNormalization", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, TDF_Tensor:$scale, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<F32Attr, "9.999999747378752e-06">:$epsilon);
}
def ONNX_IsInfOp : ONNX_Op<"IsInf", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$detect_negative, DefaultValuedAttr<SI64Attr, "1">:$detect_positive);
}
def ONNX_IsNaNOp : ONNX_Op<"IsNaN", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_LRNOp : ONNX_Op<"LRN", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "9.999999747378752e-05">:$alpha, DefaultValuedAttr<F32Attr, "0.75">:$beta, DefaultValuedAttr<F32Attr, "1.0">:$bias, SI64Attr:$size);
}
def ONNX_LSTMOp : ONNX_Op<"LSTM", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$W, TDF_Tensor:$R, Optional<TDF_Tensor>:$B, Optional<TDF_Tensor>:$sequence_lens, Optional<TDF_Tensor>:$initial_h, Optional<TDF_Tensor>:$initial_c, Optional<TDF_Tensor>:$P);
  let output = (outs Optional<TDF_Tensor>:$Y, Optional<TDF_Tensor>:$Y_h, Optional<TDF_Tensor>:$Y_c);
  let attrs = (ins OptionalAttr<F32ArrayAttr>:$activation_alpha, OptionalAttr<F32ArrayAttr>:$activation_beta, OptionalAttr<StrArrayAttr>:$activations, OptionalAttr<F32Attr>:$clip, DefaultValuedAttr<StrAttr, "\"forward\"">:$direction, OptionalAttr<SI64Attr>:$hidden_size, DefaultValuedAttr<SI64Attr, "0">:$input_forget, DefaultValuedAttr<SI64Attr, "0">:$layout);
}
def ONNX_LayerNormalizationOp : ONNX_Op<"LayerNormalization", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$Scale, Optional<TDF_Tensor>:$B);
  let output = (outs TDF_Tensor:$Y, Optional<TDF_Tensor>:$Mean, Optional<TDF_Tensor>:$InvStdDev);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "-1">:$axis, DefaultValuedAttr<F32Attr, "9.999999747378752e-06">:$epsilon, DefaultValuedAttr<SI64Attr, "1">:$stash_type);
}
def ONNX_LeakyReluOp : ONNX_Op<"LeakyRelu", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "0.009999999776482582">:$alpha);
}
def ONNX_LessOp : ONNX_Op<"Less", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_LessOrEqualOp : ONNX_Op<"LessOrEqual", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_LinearAttentionOp : ONNX_Op<"LinearAttention", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$query, TDF_Tensor:$key, TDF_Tensor:$value, Optional<TDF_Tensor>:$past_state, Optional<TDF_Tensor>:$decay, Optional<TDF_Tensor>:$beta);
  let output = (outs TDF_Tensor:$output, TDF_Tensor:$present_state);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "64">:$chunk_size, SI64Attr:$kv_num_heads, SI64Attr:$q_num_heads, DefaultValuedAttr<F32Attr, "0.0">:$scale, DefaultValuedAttr<StrAttr, "\"gated_delta\"">:$update_rule);
}
def ONNX_LogOp : ONNX_Op<"Log", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_LogSoftmaxOp : ONNX_Op<"LogSoftmax", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "-1">:$axis);
}
def ONNX_LoopV11Op : ONNX_Op<"LoopV11", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins Optional<TDF_Tensor>:$M, Optional<TDF_Tensor>:$cond, Variadic<TDF_Tensor>:$v_initial);
  let output = (outs Variadic<TDF_Tensor>:$v_final_and_scan_outputs);
  let attrs = (ins ElementsAttr:$body);
}
def ONNX_LoopV13Op : ONNX_Op<"LoopV13", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins Optional<TDF_Tensor>:$M, Optional<TDF_Tensor>:$cond, Variadic<TDF_Tensor>:$v_initial);
  let output = (outs Variadic<TDF_Tensor>:$v_final_and_scan_outputs);
  let attrs = (ins ElementsAttr:$body);
}
def ONNX_LoopV16Op : ONNX_Op<"LoopV16", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins Optional<TDF_Tensor>:$M, Optional<TDF_Tensor>:$cond, Variadic<TDF_Tensor>:$v_initial);
  let output = (outs Variadic<TDF_Tensor>:$v_final_and_scan_outputs);
  let attrs = (ins ElementsAttr:$body);
}
def ONNX_LoopOp : ONNX_Op<"Loop", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins Optional<TDF_Tensor>:$M, Optional<TDF_Tensor>:$cond, Variadic<TDF_Tensor>:$v_initial);
  let output = (outs Variadic<TDF_Tensor>:$v_final_and_scan_outputs);
  let attrs = (ins ElementsAttr:$body);
}
def ONNX_LpNormalizationOp : ONNX_Op<"LpNormalization", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "-1">:$axis, DefaultValuedAttr<SI64Attr, "2">:$p);
}
def ONNX_LpPoolOp : ONNX_Op<"LpPool", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad, DefaultValuedAttr<SI64Attr, "0">:$ceil_mode, OptionalAttr<SI64ArrayAttr>:$dilations, SI64ArrayAttr:$kernel_shape, DefaultValuedAttr<SI64Attr, "2">:$p, OptionalAttr<SI64ArrayAttr>:$pads, OptionalAttr<SI64ArrayAttr>:$strides);
}
def ONNX_MatMulOp : ONNX_Op<"MatMul", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_MatMulIntegerOp : ONNX_Op<"MatMulInteger", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B, Optional<TDF_Tensor>:$a_zero_point, Optional<TDF_Tensor>:$b_zero_point);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_MaxV8Op : ONNX_Op<"MaxV8", [NoMemoryEffect]> {
  let input = (ins Variadic<TDF_Tensor>:$data_0);
  let output = (outs TDF_Tensor:$max);
  let attrs = (ins );
}
def ONNX_MaxOp : ONNX_Op<"Max", [NoMemoryEffect]> {
  let input = (ins Variadic<TDF_Tensor>:$data_0);
  let output = (outs TDF_Tensor:$max);
  let attrs = (ins );
}
def ONNX_MaxPoolOp : ONNX_Op<"MaxPool", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y, Optional<TDF_Tensor>:$Indices);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad, DefaultValuedAttr<SI64Attr, "0">:$ceil_mode, OptionalAttr<SI64ArrayAttr>:$dilations, SI64ArrayAttr:$kernel_shape, OptionalAttr<SI64ArrayAttr>:$pads, DefaultValuedAttr<SI64Attr, "0">:$storage_order, OptionalAttr<SI64ArrayAttr>:$strides);
}
def ONNX_MaxRoiPoolOp : ONNX_Op<"MaxRoiPool", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$rois);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins SI64ArrayAttr:$pooled_shape, DefaultValuedAttr<F32Attr, "1.0">:$spatial_scale);
}
def ONNX_MaxUnpoolOp : ONNX_Op<"MaxUnpool", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$I, Optional<TDF_Tensor>:$output_shape);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins SI64ArrayAttr:$kernel_shape, OptionalAttr<SI64ArrayAttr>:$pads, OptionalAttr<SI64ArrayAttr>:$strides);
}
def ONNX_MeanOp : ONNX_Op<"Mean", [NoMemoryEffect]> {
  let input = (ins Variadic<TDF_Tensor>:$data_0);
  let output = (outs TDF_Tensor:$mean);
  let attrs = (ins );
}
def ONNX_MeanVarianceNormalizationOp : ONNX_Op<"MeanVarianceNormalization", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<SI64ArrayAttr, "{0, 2, 3}">:$axes);
}
def ONNX_MelWeightMatrixOp : ONNX_Op<"MelWeightMatrix", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$num_mel_bins, TDF_Tensor:$dft_length, TDF_Tensor:$sample_rate, TDF_Tensor:$lower_edge_hertz, TDF_Tensor:$upper_edge_hertz);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$output_datatype);
}
def ONNX_MinV8Op : ONNX_Op<"MinV8", [NoMemoryEffect]> {
  let input = (ins Variadic<TDF_Tensor>:$data_0);
  let output = (outs TDF_Tensor:$min);
  let attrs = (ins );
}
def ONNX_MinOp : ONNX_Op<"Min", [NoMemoryEffect]> {
  let input = (ins Variadic<TDF_Tensor>:$data_0);
  let output = (outs TDF_Tensor:$min);
  let attrs = (ins );
}
def ONNX_MishOp : ONNX_Op<"Mish", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_ModV13Op : ONNX_Op<"ModV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$fmod);
}
def ONNX_ModOp : ONNX_Op<"Mod", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$fmod);
}
def ONNX_MulOp : ONNX_Op<"Mul", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_MultinomialOp : ONNX_Op<"Multinomial", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "6">:$dtype, DefaultValuedAttr<SI64Attr, "1">:$sample_size, OptionalAttr<F32Attr>:$seed);
}
def ONNX_NegOp : ONNX_Op<"Neg", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_NegativeLogLikelihoodLossV13Op : ONNX_Op<"NegativeLogLikelihoodLossV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, TDF_Tensor:$target, Optional<TDF_Tensor>:$weight);
  let output = (outs TDF_Tensor:$loss);
  let attrs = (ins OptionalAttr<SI64Attr>:$ignore_index, DefaultValuedAttr<StrAttr, "\"mean\"">:$reduction);
}
def ONNX_NegativeLogLikelihoodLossOp : ONNX_Op<"NegativeLogLikelihoodLoss", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, TDF_Tensor:$target, Optional<TDF_Tensor>:$weight);
  let output = (outs TDF_Tensor:$loss);
  let attrs = (ins OptionalAttr<SI64Attr>:$ignore_index, DefaultValuedAttr<StrAttr, "\"mean\"">:$reduction);
}
def ONNX_NonMaxSuppressionOp : ONNX_Op<"NonMaxSuppression", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$boxes, TDF_Tensor:$scores, Optional<TDF_Tensor>:$max_output_boxes_per_class, Optional<TDF_Tensor>:$iou_threshold, Optional<TDF_Tensor>:$score_threshold);
  let output = (outs TDF_Tensor:$selected_indices);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$center_point_box);
}
def ONNX_NonZeroOp : ONNX_Op<"NonZero", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_NotOp : ONNX_Op<"Not", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_OneHotOp : ONNX_Op<"OneHot", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$indices, TDF_Tensor:$depth, TDF_Tensor:$values);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "-1">:$axis);
}
def ONNX_OptionalOp : ONNX_Op<"Optional", [NoMemoryEffect]> {
  let input = (ins Optional<TDF_Tensor>:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<ElementsAttr>:$type);
}
def ONNX_OptionalGetElementOp : ONNX_Op<"OptionalGetElement", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_OptionalHasElementOp : ONNX_Op<"OptionalHasElement", [NoMemoryEffect]> {
  let input = (ins Optional<TDF_Tensor>:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_OrOp : ONNX_Op<"Or", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_PReluOp : ONNX_Op<"PRelu", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$slope);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_PadV18Op : ONNX_Op<"PadV18", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$pads, Optional<TDF_Tensor>:$constant_value, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"constant\"">:$mode);
}
def ONNX_PadV24Op : ONNX_Op<"PadV24", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$pads, Optional<TDF_Tensor>:$constant_value, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"constant\"">:$mode);
}
def ONNX_PadOp : ONNX_Op<"Pad", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$pads, Optional<TDF_Tensor>:$constant_value, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"constant\"">:$mode);
}
def ONNX_PowV13Op : ONNX_Op<"PowV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$Y);
  let output = (outs TDF_Tensor:$Z);
  let attrs = (ins );
}
def ONNX_PowOp : ONNX_Op<"Pow", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$Y);
  let output = (outs TDF_Tensor:$Z);
  let attrs = (ins );
}
def ONNX_QLinearConvOp : ONNX_Op<"QLinearConv", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$x, TDF_Tensor:$x_scale, TDF_Tensor:$x_zero_point, TDF_Tensor:$w, TDF_Tensor:$w_scale, TDF_Tensor:$w_zero_point, TDF_Tensor:$y_scale, TDF_Tensor:$y_zero_point, Optional<TDF_Tensor>:$B);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad, OptionalAttr<SI64ArrayAttr>:$dilations, DefaultValuedAttr<SI64Attr, "1">:$group, OptionalAttr<SI64ArrayAttr>:$kernel_shape, OptionalAttr<SI64ArrayAttr>:$pads, OptionalAttr<SI64ArrayAttr>:$strides);
}
def ONNX_QLinearMatMulOp : ONNX_Op<"QLinearMatMul", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$a, TDF_Tensor:$a_scale, TDF_Tensor:$a_zero_point, TDF_Tensor:$b, TDF_Tensor:$b_scale, TDF_Tensor:$b_zero_point, TDF_Tensor:$y_scale, TDF_Tensor:$y_zero_point);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins );
}
def ONNX_QuantizeLinearV10Op : ONNX_Op<"QuantizeLinearV10", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$x, TDF_Tensor:$y_scale, Optional<TDF_Tensor>:$y_zero_point);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins );
}
def ONNX_QuantizeLinearOp : ONNX_Op<"QuantizeLinear", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$x, TDF_Tensor:$y_scale, Optional<TDF_Tensor>:$y_zero_point);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$axis, DefaultValuedAttr<SI64Attr, "0">:$block_size, DefaultValuedAttr<SI64Attr, "0">:$output_dtype, DefaultValuedAttr<SI64Attr, "0">:$precision, DefaultValuedAttr<SI64Attr, "1">:$saturate);
}
def ONNX_RMSNormalizationOp : ONNX_Op<"RMSNormalization", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$scale);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "-1">:$axis, DefaultValuedAttr<F32Attr, "9.999999747378752e-06">:$epsilon, DefaultValuedAttr<SI64Attr, "1">:$stash_type);
}
def ONNX_RNNOp : ONNX_Op<"RNN", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$W, TDF_Tensor:$R, Optional<TDF_Tensor>:$B, Optional<TDF_Tensor>:$sequence_lens, Optional<TDF_Tensor>:$initial_h);
  let output = (outs Optional<TDF_Tensor>:$Y, Optional<TDF_Tensor>:$Y_h);
  let attrs = (ins OptionalAttr<F32ArrayAttr>:$activation_alpha, OptionalAttr<F32ArrayAttr>:$activation_beta, OptionalAttr<StrArrayAttr>:$activations, OptionalAttr<F32Attr>:$clip, DefaultValuedAttr<StrAttr, "\"forward\"">:$direction, OptionalAttr<SI64Attr>:$hidden_size, DefaultValuedAttr<SI64Attr, "0">:$layout);
}
def ONNX_RandomNormalOp : ONNX_Op<"RandomNormal", [NoMemoryEffect]> {
  let input = (ins );
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$dtype, DefaultValuedAttr<F32Attr, "0.0">:$mean, DefaultValuedAttr<F32Attr, "1.0">:$scale, OptionalAttr<F32Attr>:$seed, SI64ArrayAttr:$shape);
}
def ONNX_RandomNormalLikeOp : ONNX_Op<"RandomNormalLike", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<SI64Attr>:$dtype, DefaultValuedAttr<F32Attr, "0.0">:$mean, DefaultValuedAttr<F32Attr, "1.0">:$scale, OptionalAttr<F32Attr>:$seed);
}
def ONNX_RandomUniformOp : ONNX_Op<"RandomUniform", [NoMemoryEffect]> {
  let input = (ins );
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$dtype, DefaultValuedAttr<F32Attr, "1.0">:$high, DefaultValuedAttr<F32Attr, "0.0">:$low, OptionalAttr<F32Attr>:$seed, SI64ArrayAttr:$shape);
}
def ONNX_RandomUniformLikeOp : ONNX_Op<"RandomUniformLike", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<SI64Attr>:$dtype, DefaultValuedAttr<F32Attr, "1.0">:$high, DefaultValuedAttr<F32Attr, "0.0">:$low, OptionalAttr<F32Attr>:$seed);
}
def ONNX_RangeV11Op : ONNX_Op<"RangeV11", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$start, TDF_Tensor:$limit, TDF_Tensor:$delta);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_RangeOp : ONNX_Op<"Range", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$start, TDF_Tensor:$limit, TDF_Tensor:$delta);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$stash_type);
}
def ONNX_ReciprocalOp : ONNX_Op<"Reciprocal", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_ReduceL1Op : ONNX_Op<"ReduceL1", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$keepdims, DefaultValuedAttr<SI64Attr, "0">:$noop_with_empty_axes);
}
def ONNX_ReduceL2Op : ONNX_Op<"ReduceL2", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$keepdims, DefaultValuedAttr<SI64Attr, "0">:$noop_with_empty_axes);
}
def ONNX_ReduceLogSumOp : ONNX_Op<"ReduceLogSum", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$keepdims, DefaultValuedAttr<SI64Attr, "0">:$noop_with_empty_axes);
}
def ONNX_ReduceLogSumExpOp : ONNX_Op<"ReduceLogSumExp", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$keepdims, DefaultValuedAttr<SI64Attr, "0">:$noop_with_empty_axes);
}
def ONNX_ReduceMaxV11Op : ONNX_Op<"ReduceMaxV11", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins OptionalAttr<SI64ArrayAttr>:$axes, DefaultValuedAttr<SI64Attr, "1">:$keepdims);
}
def ONNX_ReduceMaxV13Op : ONNX_Op<"ReduceMaxV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins OptionalAttr<SI64ArrayAttr>:$axes, DefaultValuedAttr<SI64Attr, "1">:$keepdims);
}
def ONNX_ReduceMaxV18Op : ONNX_Op<"ReduceMaxV18", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$keepdims, DefaultValuedAttr<SI64Attr, "0">:$noop_with_empty_axes);
}
def ONNX_ReduceMaxOp : ONNX_Op<"ReduceMax", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$keepdims, DefaultValuedAttr<SI64Attr, "0">:$noop_with_empty_axes);
}
def ONNX_ReduceMeanV13Op : ONNX_Op<"ReduceMeanV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins OptionalAttr<SI64ArrayAttr>:$axes, DefaultValuedAttr<SI64Attr, "1">:$keepdims);
}
def ONNX_ReduceMeanOp : ONNX_Op<"ReduceMean", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$keepdims, DefaultValuedAttr<SI64Attr, "0">:$noop_with_empty_axes);
}
def ONNX_ReduceMinV11Op : ONNX_Op<"ReduceMinV11", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins OptionalAttr<SI64ArrayAttr>:$axes, DefaultValuedAttr<SI64Attr, "1">:$keepdims);
}
def ONNX_ReduceMinV18Op : ONNX_Op<"ReduceMinV18", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$keepdims, DefaultValuedAttr<SI64Attr, "0">:$noop_with_empty_axes);
}
def ONNX_ReduceMinOp : ONNX_Op<"ReduceMin", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$keepdims, DefaultValuedAttr<SI64Attr, "0">:$noop_with_empty_axes);
}
def ONNX_ReduceProdOp : ONNX_Op<"ReduceProd", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$keepdims, DefaultValuedAttr<SI64Attr, "0">:$noop_with_empty_axes);
}
def ONNX_ReduceSumOp : ONNX_Op<"ReduceSum", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$keepdims, DefaultValuedAttr<SI64Attr, "0">:$noop_with_empty_axes);
}
def ONNX_ReduceSumSquareOp : ONNX_Op<"ReduceSumSquare", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$reduced);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$keepdims, DefaultValuedAttr<SI64Attr, "0">:$noop_with_empty_axes);
}
def ONNX_RegexFullMatchOp : ONNX_Op<"RegexFullMatch", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins OptionalAttr<StrAttr>:$pattern);
}
def ONNX_ReluOp : ONNX_Op<"Relu", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_ReshapeV13Op : ONNX_Op<"ReshapeV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$shape);
  let output = (outs TDF_Tensor:$reshaped);
  let attrs = (ins );
}
def ONNX_ReshapeV14Op : ONNX_Op<"ReshapeV14", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$shape);
  let output = (outs TDF_Tensor:$reshaped);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$allowzero);
}
def ONNX_ReshapeV19Op : ONNX_Op<"ReshapeV19", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$shape);
  let output = (outs TDF_Tensor:$reshaped);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$allowzero);
}
def ONNX_ReshapeV21Op : ONNX_Op<"ReshapeV21", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$shape);
  let output = (outs TDF_Tensor:$reshaped);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$allowzero);
}
def ONNX_ReshapeV23Op : ONNX_Op<"ReshapeV23", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$shape);
  let output = (outs TDF_Tensor:$reshaped);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$allowzero);
}
def ONNX_ReshapeV24Op : ONNX_Op<"ReshapeV24", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$shape);
  let output = (outs TDF_Tensor:$reshaped);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$allowzero);
}
def ONNX_ReshapeOp : ONNX_Op<"Reshape", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$shape);
  let output = (outs TDF_Tensor:$reshaped);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$allowzero);
}
def ONNX_ResizeOp : ONNX_Op<"Resize", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$X, Optional<TDF_Tensor>:$roi, Optional<TDF_Tensor>:$scales, Optional<TDF_Tensor>:$sizes);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$antialias, OptionalAttr<SI64ArrayAttr>:$axes, DefaultValuedAttr<StrAttr, "\"half_pixel\"">:$coordinate_transformation_mode, DefaultValuedAttr<F32Attr, "-0.75">:$cubic_coeff_a, DefaultValuedAttr<SI64Attr, "0">:$exclude_outside, DefaultValuedAttr<F32Attr, "0.0">:$extrapolation_value, DefaultValuedAttr<StrAttr, "\"stretch\"">:$keep_aspect_ratio_policy, DefaultValuedAttr<StrAttr, "\"nearest\"">:$mode, DefaultValuedAttr<StrAttr, "\"round_prefer_floor\"">:$nearest_mode);
}
def ONNX_ReverseSequenceOp : ONNX_Op<"ReverseSequence", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, TDF_Tensor:$sequence_lens);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$batch_axis, DefaultValuedAttr<SI64Attr, "0">:$time_axis);
}
def ONNX_RoiAlignOp : ONNX_Op<"RoiAlign", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$rois, TDF_Tensor:$batch_indices);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"half_pixel\"">:$coordinate_transformation_mode, DefaultValuedAttr<StrAttr, "\"avg\"">:$mode, DefaultValuedAttr<SI64Attr, "1">:$output_height, DefaultValuedAttr<SI64Attr, "1">:$output_width, DefaultValuedAttr<SI64Attr, "0">:$sampling_ratio, DefaultValuedAttr<F32Attr, "1.0">:$spatial_scale);
}
def ONNX_RotaryEmbeddingOp : ONNX_Op<"RotaryEmbedding", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$cos_cache, TDF_Tensor:$sin_cache, Optional<TDF_Tensor>:$position_ids);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$interleaved, OptionalAttr<SI64Attr>:$num_heads, DefaultValuedAttr<SI64Attr, "0">:$rotary_embedding_dim);
}
def ONNX_RoundV11Op : ONNX_Op<"RoundV11", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_RoundOp : ONNX_Op<"Round", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_STFTOp : ONNX_Op<"STFT", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$signal, TDF_Tensor:$frame_step, Optional<TDF_Tensor>:$window, Optional<TDF_Tensor>:$frame_length);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$onesided);
}
def ONNX_ScanV8Op : ONNX_Op<"ScanV8", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins Optional<TDF_Tensor>:$sequence_lens, Variadic<TDF_Tensor>:$initial_state_and_scan_inputs);
  let output = (outs Variadic<TDF_Tensor>:$final_state_and_scan_outputs);
  let attrs = (ins ElementsAttr:$body, OptionalAttr<SI64ArrayAttr>:$directions, SI64Attr:$num_scan_inputs);
}
def ONNX_ScanV9Op : ONNX_Op<"ScanV9", [NoMemoryEffect]> {
  let input = (ins Variadic<TDF_Tensor>:$initial_state_and_scan_inputs);
  let output = (outs Variadic<TDF_Tensor>:$final_state_and_scan_outputs);
  let attrs = (ins ElementsAttr:$body, SI64Attr:$num_scan_inputs, OptionalAttr<SI64ArrayAttr>:$scan_input_axes, OptionalAttr<SI64ArrayAttr>:$scan_input_directions, OptionalAttr<SI64ArrayAttr>:$scan_output_axes, OptionalAttr<SI64ArrayAttr>:$scan_output_directions);
}
def ONNX_ScanOp : ONNX_Op<"Scan", [NoMemoryEffect]> {
  let input = (ins Variadic<TDF_Tensor>:$initial_state_and_scan_inputs);
  let output = (outs Variadic<TDF_Tensor>:$final_state_and_scan_outputs);
  let attrs = (ins ElementsAttr:$body, SI64Attr:$num_scan_inputs, OptionalAttr<SI64ArrayAttr>:$scan_input_axes, OptionalAttr<SI64ArrayAttr>:$scan_input_directions, OptionalAttr<SI64ArrayAttr>:$scan_output_axes, OptionalAttr<SI64ArrayAttr>:$scan_output_directions);
}
def ONNX_ScatterOp : ONNX_Op<"Scatter", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$indices, TDF_Tensor:$updates);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$axis);
}
def ONNX_ScatterElementsOp : ONNX_Op<"ScatterElements", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$indices, TDF_Tensor:$updates);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$axis, DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
}
def ONNX_ScatterNDOp : ONNX_Op<"ScatterND", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$indices, TDF_Tensor:$updates);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
}
def ONNX_SeluOp : ONNX_Op<"Selu", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.6732631921768188">:$alpha, DefaultValuedAttr<F32Attr, "1.0507010221481323">:$gamma);
}
def ONNX_SequenceAtOp : ONNX_Op<"SequenceAt", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input_sequence, TDF_Tensor:$position);
  let output = (outs TDF_Tensor:$tensor);
  let attrs = (ins );
}
def ONNX_SequenceConstructOp : ONNX_Op<"SequenceConstruct", [NoMemoryEffect]> {
  let input = (ins Variadic<TDF_Tensor>:$inputs);
  let output = (outs TDF_Tensor:$output_sequence);
  let attrs = (ins );
}
def ONNX_SequenceEmptyOp : ONNX_Op<"SequenceEmpty", [NoMemoryEffect]> {
  let input = (ins );
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins OptionalAttr<SI64Attr>:$dtype);
}
def ONNX_SequenceEraseOp : ONNX_Op<"SequenceErase", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input_sequence, Optional<TDF_Tensor>:$position);
  let output = (outs TDF_Tensor:$output_sequence);
  let attrs = (ins );
}
def ONNX_SequenceInsertOp : ONNX_Op<"SequenceInsert", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input_sequence, TDF_Tensor:$tensor, Optional<TDF_Tensor>:$position);
  let output = (outs TDF_Tensor:$output_sequence);
  let attrs = (ins );
}
def ONNX_SequenceLengthOp : ONNX_Op<"SequenceLength", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input_sequence);
  let output = (outs TDF_Tensor:$length);
  let attrs = (ins );
}
def ONNX_SequenceMapOp : ONNX_Op<"SequenceMap", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input_sequence, Variadic<TDF_Tensor>:$additional_inputs);
  let output = (outs Variadic<TDF_Tensor>:$out_sequence);
  let attrs = (ins ElementsAttr:$body);
}
def ONNX_ShapeV13Op : ONNX_Op<"ShapeV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$shape);
  let attrs = (ins );
}
def ONNX_ShapeV15Op : ONNX_Op<"ShapeV15", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$shape);
  let attrs = (ins OptionalAttr<SI64Attr>:$end, DefaultValuedAttr<SI64Attr, "0">:$start);
}
def ONNX_ShapeV21Op : ONNX_Op<"ShapeV21", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$shape);
  let attrs = (ins OptionalAttr<SI64Attr>:$end, DefaultValuedAttr<SI64Attr, "0">:$start);
}
def ONNX_ShapeV23Op : ONNX_Op<"ShapeV23", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$shape);
  let attrs = (ins OptionalAttr<SI64Attr>:$end, DefaultValuedAttr<SI64Attr, "0">:$start);
}
def ONNX_ShapeV24Op : ONNX_Op<"ShapeV24", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$shape);
  let attrs = (ins OptionalAttr<SI64Attr>:$end, DefaultValuedAttr<SI64Attr, "0">:$start);
}
def ONNX_ShapeOp : ONNX_Op<"Shape", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$shape);
  let attrs = (ins OptionalAttr<SI64Attr>:$end, DefaultValuedAttr<SI64Attr, "0">:$start);
}
def ONNX_ShrinkOp : ONNX_Op<"Shrink", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<F32Attr, "0.0">:$bias, DefaultValuedAttr<F32Attr, "0.5">:$lambd);
}
def ONNX_SigmoidOp : ONNX_Op<"Sigmoid", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_SignOp : ONNX_Op<"Sign", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_SinOp : ONNX_Op<"Sin", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_SinhOp : ONNX_Op<"Sinh", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_SizeV13Op : ONNX_Op<"SizeV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$size);
  let attrs = (ins );
}
def ONNX_SizeV19Op : ONNX_Op<"SizeV19", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$size);
  let attrs = (ins );
}
def ONNX_SizeV23Op : ONNX_Op<"SizeV23", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$size);
  let attrs = (ins );
}
def ONNX_SizeOp : ONNX_Op<"Size", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$size);
  let attrs = (ins );
}
def ONNX_SliceOp : ONNX_Op<"Slice", [NoMemoryEffect, AttrSizedOperandSegments]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$starts, TDF_Tensor:$ends, Optional<TDF_Tensor>:$axes, Optional<TDF_Tensor>:$steps);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_SoftmaxOp : ONNX_Op<"Softmax", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "-1">:$axis);
}
def ONNX_SoftmaxCrossEntropyLossOp : ONNX_Op<"SoftmaxCrossEntropyLoss", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$scores, TDF_Tensor:$labels, Optional<TDF_Tensor>:$weights);
  let output = (outs TDF_Tensor:$output, Optional<TDF_Tensor>:$log_prob);
  let attrs = (ins OptionalAttr<SI64Attr>:$ignore_index, DefaultValuedAttr<StrAttr, "\"mean\"">:$reduction);
}
def ONNX_SoftplusOp : ONNX_Op<"Softplus", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_SoftsignOp : ONNX_Op<"Softsign", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_SpaceToDepthOp : ONNX_Op<"SpaceToDepth", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins SI64Attr:$blocksize, DefaultValuedAttr<StrAttr, "\"DCR\"">:$mode);
}
def ONNX_SplitV13Op : ONNX_Op<"SplitV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, Optional<TDF_Tensor>:$split);
  let output = (outs Variadic<TDF_Tensor>:$outputs);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$axis);
}
def ONNX_SplitOp : ONNX_Op<"Split", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, Optional<TDF_Tensor>:$split);
  let output = (outs Variadic<TDF_Tensor>:$outputs);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$axis, OptionalAttr<SI64Attr>:$num_outputs);
}
def ONNX_SplitToSequenceOp : ONNX_Op<"SplitToSequence", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, Optional<TDF_Tensor>:$split);
  let output = (outs TDF_Tensor:$output_sequence);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$axis, DefaultValuedAttr<SI64Attr, "1">:$keepdims);
}
def ONNX_SqrtOp : ONNX_Op<"Sqrt", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins );
}
def ONNX_SqueezeV21Op : ONNX_Op<"SqueezeV21", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$squeezed);
  let attrs = (ins );
}
def ONNX_SqueezeV23Op : ONNX_Op<"SqueezeV23", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$squeezed);
  let attrs = (ins );
}
def ONNX_SqueezeV24Op : ONNX_Op<"SqueezeV24", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$squeezed);
  let attrs = (ins );
}
def ONNX_SqueezeOp : ONNX_Op<"Squeeze", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, Optional<TDF_Tensor>:$axes);
  let output = (outs TDF_Tensor:$squeezed);
  let attrs = (ins );
}
def ONNX_StringConcatOp : ONNX_Op<"StringConcat", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$Y);
  let output = (outs TDF_Tensor:$Z);
  let attrs = (ins );
}
def ONNX_StringNormalizerOp : ONNX_Op<"StringNormalizer", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"NONE\"">:$case_change_action, DefaultValuedAttr<SI64Attr, "0">:$is_case_sensitive, OptionalAttr<StrAttr>:$locale, OptionalAttr<StrArrayAttr>:$stopwords);
}
def ONNX_StringSplitOp : ONNX_Op<"StringSplit", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y, TDF_Tensor:$Z);
  let attrs = (ins OptionalAttr<StrAttr>:$delimiter, OptionalAttr<SI64Attr>:$maxsplit);
}
def ONNX_SubV7Op : ONNX_Op<"SubV7", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_SubV13Op : ONNX_Op<"SubV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_SubOp : ONNX_Op<"Sub", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
def ONNX_SumOp : ONNX_Op<"Sum", [NoMemoryEffect]> {
  let input = (ins Variadic<TDF_Tensor>:$data_0);
  let output = (outs TDF_Tensor:$sum);
  let attrs = (ins );
}
def ONNX_SwiGLUOp : ONNX_Op<"SwiGLU", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha);
}
def ONNX_SwishOp : ONNX_Op<"Swish", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha);
}
def ONNX_TanOp : ONNX_Op<"Tan", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_TanhOp : ONNX_Op<"Tanh", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_TensorScatterOp : ONNX_Op<"TensorScatter", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$past_cache, TDF_Tensor:$update, Optional<TDF_Tensor>:$write_indices);
  let output = (outs TDF_Tensor:$present_cache);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "-2">:$axis, DefaultValuedAttr<StrAttr, "\"linear\"">:$mode);
}
def ONNX_TfIdfVectorizerOp : ONNX_Op<"TfIdfVectorizer", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins SI64Attr:$max_gram_length, SI64Attr:$max_skip_count, SI64Attr:$min_gram_length, StrAttr:$mode, SI64ArrayAttr:$ngram_counts, SI64ArrayAttr:$ngram_indexes, OptionalAttr<SI64ArrayAttr>:$pool_int64s, OptionalAttr<StrArrayAttr>:$pool_strings, OptionalAttr<F32ArrayAttr>:$weights);
}
def ONNX_ThresholdedReluOp : ONNX_Op<"ThresholdedRelu", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha);
}
def ONNX_TileOp : ONNX_Op<"Tile", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, TDF_Tensor:$repeats);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_TopKOp : ONNX_Op<"TopK", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$K);
  let output = (outs TDF_Tensor:$Values, TDF_Tensor:$Indices);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "-1">:$axis, DefaultValuedAttr<SI64Attr, "1">:$largest, DefaultValuedAttr<SI64Attr, "1">:$sorted);
}
def ONNX_TransposeV13Op : ONNX_Op<"TransposeV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$transposed);
  let attrs = (ins OptionalAttr<SI64ArrayAttr>:$perm);
}
def ONNX_TransposeV23Op : ONNX_Op<"TransposeV23", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$transposed);
  let attrs = (ins OptionalAttr<SI64ArrayAttr>:$perm);
}
def ONNX_TransposeV24Op : ONNX_Op<"TransposeV24", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$transposed);
  let attrs = (ins OptionalAttr<SI64ArrayAttr>:$perm);
}
def ONNX_TransposeOp : ONNX_Op<"Transpose", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data);
  let output = (outs TDF_Tensor:$transposed);
  let attrs = (ins OptionalAttr<SI64ArrayAttr>:$perm);
}
def ONNX_TriluOp : ONNX_Op<"Trilu", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$input, Optional<TDF_Tensor>:$k);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$upper);
}
def ONNX_UniqueOp : ONNX_Op<"Unique", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X);
  let output = (outs TDF_Tensor:$Y, Optional<TDF_Tensor>:$indices, Optional<TDF_Tensor>:$inverse_indices, Optional<TDF_Tensor>:$counts);
  let attrs = (ins OptionalAttr<SI64Attr>:$axis, DefaultValuedAttr<SI64Attr, "1">:$sorted);
}
def ONNX_UnsqueezeV13Op : ONNX_Op<"UnsqueezeV13", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$axes);
  let output = (outs TDF_Tensor:$expanded);
  let attrs = (ins );
}
def ONNX_UnsqueezeV21Op : ONNX_Op<"UnsqueezeV21", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$axes);
  let output = (outs TDF_Tensor:$expanded);
  let attrs = (ins );
}
def ONNX_UnsqueezeV23Op : ONNX_Op<"UnsqueezeV23", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$axes);
  let output = (outs TDF_Tensor:$expanded);
  let attrs = (ins );
}
def ONNX_UnsqueezeV24Op : ONNX_Op<"UnsqueezeV24", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$axes);
  let output = (outs TDF_Tensor:$expanded);
  let attrs = (ins );
}
def ONNX_UnsqueezeOp : ONNX_Op<"Unsqueeze", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$data, TDF_Tensor:$axes);
  let output = (outs TDF_Tensor:$expanded);
  let attrs = (ins );
}
def ONNX_UpsampleOp : ONNX_Op<"Upsample", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$X, TDF_Tensor:$scales);
  let output = (outs TDF_Tensor:$Y);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"nearest\"">:$mode);
}
def ONNX_WhereV9Op : ONNX_Op<"WhereV9", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$condition, TDF_Tensor:$X, TDF_Tensor:$Y);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_WhereOp : ONNX_Op<"Where", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$condition, TDF_Tensor:$X, TDF_Tensor:$Y);
  let output = (outs TDF_Tensor:$output);
  let attrs = (ins );
}
def ONNX_XorOp : ONNX_Op<"Xor", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$A, TDF_Tensor:$B);
  let output = (outs TDF_Tensor:$C);
  let attrs = (ins );
}
