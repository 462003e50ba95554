// matmul of f32 gives f32, not f16
func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x4xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf16>
  return %x : tensor<4x8xf32>
}
