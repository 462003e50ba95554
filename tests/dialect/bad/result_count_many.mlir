// relu has one result
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0:2 = "tdflow.relu"(%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %x : tensor<4x8xf32>
}
