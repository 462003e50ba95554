// the declared result shape disagrees with inference (transposes applied)
func.func @f(%x: tensor<4x8xf32>, %w: tensor<16x4xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.matmul"(%x, %w) {transpose_a = true, transpose_b = true} : (tensor<4x8xf32>, tensor<16x4xf32>) -> tensor<8x17xf32>
  return %x : tensor<4x8xf32>
}
