// batch dims of a and b differ
func.func @f(%x: tensor<2x4x8xf32>, %w: tensor<3x8x4xf32>) -> tensor<2x4x8xf32> {
  %0 = "tdflow.batch_matmul"(%x, %w) : (tensor<2x4x8xf32>, tensor<3x8x4xf32>) -> tensor<2x4x4xf32>
  return %x : tensor<2x4x8xf32>
}
