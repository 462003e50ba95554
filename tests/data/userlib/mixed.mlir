// mylib.scale_shift (my_ops.td) between two standard ops.
func.func @f(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>) -> tensor<4x2xf32> {
  %0 = "tdflow.matmul"(%x, %w) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = "mylib.scale_shift"(%0) {scale = 2.0 : f32, shift = 1.0 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %2 = "tdflow.relu"(%1) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %2 : tensor<4x2xf32>
}
