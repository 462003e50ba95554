// dropout's rate must be in [0, 1)
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0, %1 = "tdflow.dropout"(%x) {rate = 1.5 : f32} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>)
  return %x : tensor<4x8xf32>
}
