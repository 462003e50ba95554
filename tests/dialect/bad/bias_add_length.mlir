// the bias has 5 entries but a has 8 along axis 1
func.func @f(%x: tensor<4x8xf32>, %b: tensor<5xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.bias_add"(%x, %b) {axis = 1 : si32} : (tensor<4x8xf32>, tensor<5xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
