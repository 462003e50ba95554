// matmul takes matrices; batches need batch_matmul
func.func @f(%x: tensor<2x4x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x4x8xf32> {
  %0 = "tdflow.matmul"(%x, %w) : (tensor<2x4x8xf32>, tensor<8x4xf32>) -> tensor<2x4x4xf32>
  return %x : tensor<2x4x8xf32>
}
