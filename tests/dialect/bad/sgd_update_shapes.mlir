// the gradient must have the model's shape
func.func @f(%x: tensor<4x8xf32>, %g: tensor<8x4xf32>) -> tensor<4x8xf32> {
  "tdflow.sgd_update"(%x, %g) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>} : (tensor<4x8xf32>, tensor<8x4xf32>) -> ()
  return %x : tensor<4x8xf32>
}
