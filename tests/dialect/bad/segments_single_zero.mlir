// a single operand (weight) must have size 1
func.func @f(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x8x8xf32> {
  %0 = "tdflow.conv2d"(%x, %w) {data_format = "channels_first", dilation_rate = [1 : si32, 1 : si32], kernel_size = [3 : si32, 3 : si32], padding_before = [1 : si32, 1 : si32], strides = [1 : si32, 1 : si32], operandSegmentSizes = array<i32: 2, 0, 0, 0>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}
