// a misspelt attribute (suggests the close name) (an error with --strict-attrs; a warning without)
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.leaky_relu"(%x) {alhpa = 2.000000e-01 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
