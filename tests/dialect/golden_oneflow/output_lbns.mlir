module {
  oneflow.job @Pipeline(%img: tensor<1x3x32x32xf32>, %skip: tensor<1x8x16x16xf32>) -> (tensor<1x8x16x16xf32>, tensor<1x8x1x1xf32>) {
    %x = "oneflow.input"(%img) {data_type = 2 : i32, device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], is_dynamic = false, nd_sbp = ["B"], op_name = "in0", output_lbns = ["in0/out"], scope_symbol_id = 9 : i64, shape = [1 : si64, 3 : si64, 32 : si64, 32 : si64]} : (tensor<1x3x32x32xf32>) -> tensor<1x3x32x32xf32>
    %w = "oneflow.variable"() {data_type = 2 : i32, device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], op_name = "conv.w", output_lbns = ["conv.w/out"], parallel = #sbp.parallel<[] -> [[#sbp.B]]>, scope_symbol_id = 9 : i64, shape = [8 : si64, 3 : si64, 3 : si64, 3 : si64]} : () -> tensor<8x3x3x3xf32>
    %c = "oneflow.conv2d"(%x, %w) {data_format = "channels_first", device_name = ["@0:0"], device_tag = "cpu", dilation_rate = [1 : si32, 1 : si32], filters = 8 : si32, groups = 1 : si32, hierarchy = [1], kernel_size = [3 : si32, 3 : si32], op_name = "conv", operand_segment_sizes = array<i32: 1, 1, 0, 0>, output_lbns = ["conv/out_0"], padding_before = [1 : si32, 1 : si32], scope_symbol_id = 9 : i64, strides = [1 : si32, 1 : si32]} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x32x32xf32>
    %r = "oneflow.relu"(%c) {device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], op_name = "act", output_lbns = ["act/y_0"], scope_symbol_id = 9 : i64} : (tensor<1x8x32x32xf32>) -> tensor<1x8x32x32xf32>
    %p, %idx = "oneflow.max_pool_2d"(%r) {ceil_mode = false, data_format = "channels_first", device_name = ["@0:0"], device_tag = "cpu", dilation = [1 : si32, 1 : si32], hierarchy = [1], kernel_size = [2 : si32, 2 : si32], op_name = "pool", output_lbns = ["pool/y_0", "pool/indice_0"], padding = [0 : si32, 0 : si32], return_indices = false, scope_symbol_id = 9 : i64, stride = [2 : si32, 2 : si32]} : (tensor<1x8x32x32xf32>) -> (tensor<1x8x16x16xf32>, tensor<1x8x16x16xi64>)
    %s = "oneflow.add_n2"(%p, %skip) {device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], op_name = "res", op_type_name = "add_n", output_lbns = ["res/out_0"], scope_symbol_id = 9 : i64} : (tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
    %bias = "oneflow.variable"() {data_type = 2 : i32, device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], op_name = "bias", output_lbns = ["bias/out"], parallel = #sbp.parallel<[] -> [[#sbp.B]]>, scope_symbol_id = 9 : i64, shape = [1 : si64, 8 : si64, 16 : si64, 16 : si64]} : () -> tensor<1x8x16x16xf32>
    %t = "oneflow.broadcast_add"(%s, %bias) {device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], op_name = "add_bias", output_lbns = ["add_bias/z_0"], scope_symbol_id = 9 : i64} : (tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
    %a = "oneflow.avg_pool_2d"(%t) {ceil_mode = false, count_include_pad = true, data_format = "channels_first", device_name = ["@0:0"], device_tag = "cpu", divisor_override = 0 : si32, hierarchy = [1], kernel_size = [16 : si32, 16 : si32], op_name = "gap", output_lbns = ["gap/y_0"], padding = [0 : si32, 0 : si32], scope_symbol_id = 9 : i64, stride = [16 : si32, 16 : si32]} : (tensor<1x8x16x16xf32>) -> tensor<1x8x1x1xf32>
    %o = "oneflow.output"(%t) {data_type = 2 : i32, device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], is_dynamic = false, nd_sbp = ["B"], op_name = "out0", output_lbns = ["out0/out"], scope_symbol_id = 9 : i64, shape = [1 : si64, 8 : si64, 16 : si64, 16 : si64]} : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
    oneflow.return %o, %a : tensor<1x8x16x16xf32>, tensor<1x8x1x1xf32>
  }
  oneflow.job @Linear(%x: tensor<4x6xf32>, %w: tensor<5x6xf32>) -> tensor<4x5xf32> {
    %y = "oneflow.matmul"(%x, %w) {alpha = 1.000000e+00 : f64, device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], op_name = "fc", output_lbns = ["fc/out_0"], scope_symbol_id = 4 : i64, transpose_a = false, transpose_b = true} : (tensor<4x6xf32>, tensor<5x6xf32>) -> tensor<4x5xf32>
    oneflow.return %y : tensor<4x5xf32>
  }
  func.func @CastThenScaleOnGpu(%ids: tensor<5x2xi64>, %s: tensor<1xf32>) -> tensor<5x2xf32> {
    %0 = "oneflow.cast"(%ids) {device_name = ["@0:0"], device_tag = "cuda", dtype = 2 : i32, hierarchy = [1], op_name = "to_f32", output_lbns = ["to_f32/out_0"], scope_symbol_id = 77 : i64} : (tensor<5x2xi64>) -> tensor<5x2xf32>
    %1 = "oneflow.scalar_mul_by_tensor"(%0, %s) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "scale", output_lbns = ["scale/y_0"], scope_symbol_id = 77 : i64} : (tensor<5x2xf32>, tensor<1xf32>) -> tensor<5x2xf32>
    return %1 : tensor<5x2xf32>
  }
}
