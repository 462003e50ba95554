// a has 8 columns but b has 16 rows
func.func @f(%x: tensor<4x8xf32>, %w: tensor<16x4xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
  return %x : tensor<4x8xf32>
}
