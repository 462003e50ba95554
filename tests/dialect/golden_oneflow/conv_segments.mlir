module {
  oneflow.job @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
    %0 = "oneflow.conv2d"(%x, %w) {data_format = "channels_first", device_name = ["@0:0"], device_tag = "cpu", dilation_rate = [1 : si32, 1 : si32], filters = 4 : si32, groups = 1 : si32, hierarchy = [1], kernel_size = [3 : si32, 3 : si32], op_name = "conv-0", operand_segment_sizes = array<i32: 1, 1, 0, 0>, padding_before = [0 : si32, 0 : si32], scope_symbol_id = 12 : i64, strides = [1 : si32, 1 : si32]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
    oneflow.return %0 : tensor<1x4x6x6xf32>
  }
}
