// operandSegmentSizes on an op without optional or variadic operands (an error with --strict-attrs; a warning without)
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.relu"(%x) {operandSegmentSizes = array<i32: 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
