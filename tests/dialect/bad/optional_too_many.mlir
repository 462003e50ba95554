// matmul takes a, b and an optional _add_to_output: at most three
func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.matmul"(%x, %w, %x, %x) : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
