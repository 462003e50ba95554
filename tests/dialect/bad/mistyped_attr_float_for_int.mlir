// bias_add's axis is an si32, not a float
func.func @f(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.bias_add"(%x, %b) {axis = 1.5 : f32} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
