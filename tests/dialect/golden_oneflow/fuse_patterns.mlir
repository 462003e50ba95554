module {
  func.func @GroupNormSilu(%x: tensor<1x8x8x64xf16>, %gamma: tensor<64xf16>, %beta: tensor<64xf16>) -> tensor<1x8x8x64xf16> {
    %y, %mean, %inv_variance = "oneflow.group_norm"(%x, %gamma, %beta) {activation = "none", affine = true, data_format = "channels_last", device_name = ["@0:0"], device_tag = "cuda", epsilon = 1.000000e-05 : f64, hierarchy = [1], num_groups = 16 : si32, op_name = "gn", operand_segment_sizes = array<i32: 1, 1, 1>, scope_symbol_id = 31 : i64} : (tensor<1x8x8x64xf16>, tensor<64xf16>, tensor<64xf16>) -> (tensor<1x8x8x64xf16>, tensor<1x16xf32>, tensor<1x16xf32>)
    %s = "oneflow.silu"(%y) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "silu", scope_symbol_id = 31 : i64} : (tensor<1x8x8x64xf16>) -> tensor<1x8x8x64xf16>
    return %s : tensor<1x8x8x64xf16>
  }
  func.func @BiasAddDropout(%x: tensor<3x7xf32>, %b: tensor<7xf32>) -> (tensor<3x7xf32>, tensor<3x7xi8>) {
    %0 = "oneflow.bias_add"(%x, %b) {axis = 1 : si32, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "bias", scope_symbol_id = 12 : i64} : (tensor<3x7xf32>, tensor<7xf32>) -> tensor<3x7xf32>
    %out, %mask = "oneflow.dropout"(%0) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "drop", rate = 2.500000e-01 : f32, scope_symbol_id = 12 : i64} : (tensor<3x7xf32>) -> (tensor<3x7xf32>, tensor<3x7xi8>)
    return %out, %mask : tensor<3x7xf32>, tensor<3x7xi8>
  }
  func.func @BiasAddGelu(%x: tensor<3x7xf32>, %b: tensor<7xf32>) -> tensor<3x7xf32> {
    %0 = "oneflow.bias_add"(%x, %b) {axis = 1 : si32, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "bias", scope_symbol_id = 12 : i64} : (tensor<3x7xf32>, tensor<7xf32>) -> tensor<3x7xf32>
    %1 = "oneflow.gelu"(%0) {axis = 1 : si32, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "gelu", scope_symbol_id = 12 : i64} : (tensor<3x7xf32>) -> tensor<3x7xf32>
    return %1 : tensor<3x7xf32>
  }
  func.func @PadConv(%arg0: tensor<1x2x5x5xf32>) -> tensor<1x4x6x6xf32> {
    %w = "oneflow.variable"() {data_type = 2 : i32, device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], op_name = "w", output_lbns = ["w/out"], parallel = #sbp.parallel<[] -> [[#sbp.B]]>, scope_symbol_id = 8 : i64, shape = [4 : si64, 2 : si64, 2 : si64, 2 : si64]} : () -> tensor<4x2x2x2xf32>
    %x = "oneflow.input"(%arg0) {data_type = 2 : i32, device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], is_dynamic = false, nd_sbp = ["B"], op_name = "in", output_lbns = ["in/out"], scope_symbol_id = 8 : i64, shape = [1 : si64, 2 : si64, 5 : si64, 5 : si64]} : (tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
    %0 = "oneflow.pad"(%x) {device_name = ["@0:0"], device_tag = "cpu", floating_constant_value = 0.000000e+00 : f64, hierarchy = [1], integral_constant_value = 0 : si64, op_name = "pad", padding = [1 : si64, 1 : si64, 1 : si64, 1 : si64], padding_after = [0 : si64, 0 : si64, 1 : si64, 1 : si64], padding_before = [0 : si64, 0 : si64, 1 : si64, 1 : si64], scope_symbol_id = 8 : i64} : (tensor<1x2x5x5xf32>) -> tensor<1x2x7x7xf32>
    %1 = "oneflow.conv2d"(%0, %w) {data_format = "channels_first", device_name = ["@0:0"], device_tag = "cpu", dilation_rate = [1 : si32, 1 : si32], filters = 4 : si32, groups = 1 : si32, hierarchy = [1], kernel_size = [2 : si32, 2 : si32], op_name = "conv", operand_segment_sizes = array<i32: 1, 1, 0, 0>, padding_before = [0 : si32, 0 : si32], scope_symbol_id = 8 : i64, strides = [1 : si32, 1 : si32]} : (tensor<1x2x7x7xf32>, tensor<4x2x2x2xf32>) -> tensor<1x4x6x6xf32>
    return %1 : tensor<1x4x6x6xf32>
  }
  func.func @CastSameAndOther(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) {
    %0 = "oneflow.cast"(%x) {device_name = ["@0:0"], device_tag = "cpu", dtype = 2 : i32, hierarchy = [1], op_name = "same", op_type_name = "cast", scope_symbol_id = 6 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
    %1 = "oneflow.cast"(%x) {device_name = ["@0:0"], device_tag = "cpu", dtype = 5 : i32, hierarchy = [1], op_name = "to_int", op_type_name = "cast", scope_symbol_id = 6 : i64} : (tensor<4x3xf32>) -> tensor<4x3xi32>
    return %0, %1 : tensor<4x3xf32>, tensor<4x3xi32>
  }
  func.func @ScaleTril(%x: tensor<6x6xf32>) -> tensor<6x6xf32> {
    %0 = "oneflow.scalar_mul"(%x) {device_name = ["@0:0"], device_tag = "cuda", float_operand = 1.500000e+00 : f64, has_float_operand = true, has_int_operand = false, hierarchy = [1], int_operand = 0 : si64, op_name = "scale", scope_symbol_id = 4 : i64} : (tensor<6x6xf32>) -> tensor<6x6xf32>
    %1 = "oneflow.tril"(%0) {device_name = ["@0:0"], device_tag = "cuda", diagonal = 0 : si64, floating_fill_value = 0.000000e+00 : f64, hierarchy = [1], integer_fill_value = 0 : si64, is_floating_fill_value = false, op_name = "tril", scope_symbol_id = 4 : i64} : (tensor<6x6xf32>) -> tensor<6x6xf32>
    return %1 : tensor<6x6xf32>
  }
  func.func @BatchNormAddRelu(%x: tensor<2x4x5x5xf32>, %mm: tensor<4xf32>, %mv: tensor<4xf32>, %gamma: tensor<4xf32>, %beta: tensor<4xf32>, %addend: tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32> {
    %y, %mean, %inv_variance = "oneflow.normalization"(%x, %mm, %mv, %gamma, %beta) {axis = 1 : si32, device_name = ["@0:0"], device_tag = "cpu", epsilon = 9.99999974E-6 : f32, hierarchy = [1], momentum = 0.899999976 : f32, op_name = "bn", operand_segment_sizes = array<i32: 1, 1, 1, 1, 1, 0>, result_segment_sizes = array<i32: 1, 1, 1>, scope_symbol_id = 17 : i64, training = true} : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>)
    %0 = "oneflow.add_n2"(%y, %addend) {device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], op_name = "add", op_type_name = "add_n", scope_symbol_id = 17 : i64} : (tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
    %1 = "oneflow.relu"(%0) {device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], op_name = "relu", scope_symbol_id = 17 : i64} : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
    return %1 : tensor<2x4x5x5xf32>
  }
  func.func @ConvThenInferenceNorm(%x: tensor<1x3x16x16xf32>, %mm: tensor<8xf32>, %mv: tensor<8xf32>, %beta: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
    %w = "oneflow.variable_ir"() {value = dense<5.000000e-01> : tensor<8x3x3x3xf32>, data_type = 2 : i32, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], nd_sbp = ["B"], op_name = "conv.w", output_lbns = ["conv.w/out"], parallel = #sbp.parallel<[] -> [[#sbp.B]]>, scope_symbol_id = 19 : i64, shape = [8 : si64, 3 : si64, 3 : si64, 3 : si64]} : () -> tensor<8x3x3x3xf32>
    %gamma = "oneflow.variable_ir"() {value = dense<1.000000e+00> : tensor<8xf32>, data_type = 2 : i32, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], nd_sbp = ["B"], op_name = "bn.gamma", output_lbns = ["bn.gamma/out"], parallel = #sbp.parallel<[] -> [[#sbp.B]]>, scope_symbol_id = 19 : i64, shape = [8 : si64]} : () -> tensor<8xf32>
    %c = "oneflow.conv2d"(%x, %w) {data_format = "channels_first", device_name = ["@0:0"], device_tag = "cuda", dilation_rate = [1 : si32, 1 : si32], filters = 8 : si32, groups = 1 : si32, hierarchy = [1], kernel_size = [3 : si32, 3 : si32], op_name = "conv", operand_segment_sizes = array<i32: 1, 1, 0, 0>, padding_before = [1 : si32, 1 : si32], scope_symbol_id = 19 : i64, strides = [2 : si32, 2 : si32]} : (tensor<1x3x16x16xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x8x8xf32>
    %y = "oneflow.normalization_infer"(%c, %mm, %mv, %gamma, %beta) {axis = 1 : si32, device_name = ["@0:0"], device_tag = "cuda", epsilon = 9.99999974E-6 : f32, hierarchy = [1], momentum = 0.899999976 : f32, op_name = "bn", operand_segment_sizes = array<i32: 1, 1, 1, 1, 1, 0>, result_segment_sizes = array<i32: 1, 0, 0>, scope_symbol_id = 19 : i64, training = false} : (tensor<1x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
    return %y : tensor<1x8x8x8xf32>
  }
}
