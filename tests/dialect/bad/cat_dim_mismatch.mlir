// cat's inputs must agree in every dim but axis
func.func @f(%x: tensor<4x8xf32>, %y: tensor<2x7xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.cat"(%x, %y) {axis = 0 : si64} : (tensor<4x8xf32>, tensor<2x7xf32>) -> tensor<6x8xf32>
  return %x : tensor<4x8xf32>
}
