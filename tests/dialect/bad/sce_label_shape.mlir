// labels must have the prediction's shape without the class dim
func.func @f(%x: tensor<4x8xf32>, %y: tensor<5xi64>) -> tensor<4x8xf32> {
  %p, %l = "tdflow.sparse_softmax_cross_entropy"(%x, %y) {depth = 8 : si64} : (tensor<4x8xf32>, tensor<5xi64>) -> (tensor<4x8xf32>, tensor<4xf32>)
  return %x : tensor<4x8xf32>
}
