module {
  func.func @CastTwiceThenAdd(%ids: tensor<8x6xi64>, %scale: tensor<1xf32>) -> tensor<8x6xf32> {
    %0 = "oneflow.cast"(%ids) {device_name = ["0:0"], device_tag = "cpu", dtype = 2 : i32, hierarchy = [1], op_name = "cast_a", op_type_name = "cast", scope_symbol_id = 7 : i64} : (tensor<8x6xi64>) -> tensor<8x6xf32>
    %1 = "oneflow.cast"(%ids) {device_name = ["0:0"], device_tag = "cpu", dtype = 2 : i32, hierarchy = [1], op_name = "cast_b", op_type_name = "cast", scope_symbol_id = 7 : i64} : (tensor<8x6xi64>) -> tensor<8x6xf32>
    %2 = "oneflow.add_n"(%0, %1) {device_name = ["0:0"], device_tag = "cpu", hierarchy = [1], op_name = "sum_ab", op_type_name = "add_n", scope_symbol_id = 7 : i64} : (tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<8x6xf32>
    %3 = "oneflow.scalar_mul_by_tensor"(%2, %scale) {device_name = ["0:0"], device_tag = "cpu", hierarchy = [1], op_name = "scaled", op_type_name = "scalar_mul_by_tensor", scope_symbol_id = 7 : i64} : (tensor<8x6xf32>, tensor<1xf32>) -> tensor<8x6xf32>
    return %3 : tensor<8x6xf32>
  }
  func.func @SignedWeightToFloat() -> tensor<16x8x1x1xf32> {
    %w = "oneflow.variable"() {data_type = 6 : i32, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "layer.weight", output_lbns = ["layer.weight/out"], parallel = #sbp.parallel<[] -> [[#sbp.B]]>, scope_symbol_id = 21 : i64, shape = [16 : si64, 8 : si64, 1 : si64, 1 : si64]} : () -> tensor<16x8x1x1xsi64>
    %0 = "oneflow.cast"(%w) {device_name = ["0:0"], device_tag = "cpu", dtype = 2 : i32, hierarchy = [1], op_name = "cast_w", op_type_name = "cast", scope_symbol_id = 21 : i64} : (tensor<16x8x1x1xsi64>) -> tensor<16x8x1x1xf32>
    func.return %0 : tensor<16x8x1x1xf32>
  }
  func.func @ReluChain(%x: tensor<f32>) -> tensor<f32> {
    %0 = "oneflow.relu"(%x) {device_tag = "cuda", op_name = "r1", op_type_name = "relu", device_name = ["0:0-0"], scope_symbol_id = 3 : i64} : (tensor<f32>) -> tensor<f32>
    %1 = "oneflow.relu"(%0) {device_tag = "cuda", op_name = "r2", op_type_name = "relu", device_name = ["0:0-0"], scope_symbol_id = 3 : i64} : (tensor<f32>) -> tensor<f32>
    %2 = "oneflow.negative"(%1) {device_tag = "cuda", op_name = "n1", op_type_name = "negative", device_name = ["1:0-0"], scope_symbol_id = 3 : i64} : (tensor<f32>) -> tensor<f32>
    %3 = "oneflow.negative"(%2) {device_tag = "cpu", op_name = "n2", op_type_name = "negative", device_name = ["0:0-0"], scope_symbol_id = 3 : i64} : (tensor<f32>) -> tensor<f32>
    return %3 : tensor<f32>
  }
  func.func @TransposeThenConvNHWC(%x: tensor<1x10x10x16xf16>, %w: tensor<16x16x3x3xf16>, %b: tensor<16xf16>) -> tensor<1x10x10x16xf16> {
    %wt = "oneflow.transpose"(%w) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "w_nhwc", perm = [0 : si32, 2 : si32, 3 : si32, 1 : si32], scope_symbol_id = 5 : i64} : (tensor<16x16x3x3xf16>) -> tensor<16x3x3x16xf16>
    %y = "oneflow.conv2d"(%x, %wt, %b) {data_format = "channels_last", device_name = ["@0:0"], device_tag = "cuda", dilation_rate = [1 : si32, 1 : si32], filters = 16 : si32, groups = 1 : si32, hierarchy = [1], kernel_size = [3 : si32, 3 : si32], op_name = "conv", operand_segment_sizes = array<i32: 1, 1, 1, 0>, padding_before = [1 : si32, 1 : si32], scope_symbol_id = 5 : i64, strides = [1 : si32, 1 : si32]} : (tensor<1x10x10x16xf16>, tensor<16x3x3x16xf16>, tensor<16xf16>) -> tensor<1x10x10x16xf16>
    return %y : tensor<1x10x10x16xf16>
  }
}
