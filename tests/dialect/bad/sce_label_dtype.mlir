// labels are integer class indices
func.func @f(%x: tensor<4x8xf32>, %y: tensor<4xf32>) -> tensor<4x8xf32> {
  %p, %l = "tdflow.sparse_softmax_cross_entropy"(%x, %y) : (tensor<4x8xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  return %x : tensor<4x8xf32>
}
