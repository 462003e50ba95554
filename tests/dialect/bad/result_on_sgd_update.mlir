// sgd_update has no results
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.sgd_update"(%x, %x) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
