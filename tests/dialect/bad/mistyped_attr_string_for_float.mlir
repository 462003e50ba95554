// alpha is an f32, not a string
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.leaky_relu"(%x) {alpha = "0.2"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
