// ERROR: 3:3: function @f must end with 'return' (found 'tdflow.relu')
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
}
