func.func @f(%x: tensor<5x7xf32>, %s: tensor<5xf32>) -> tensor<5x7xf32> {
  %0 = "culib.row_scale"(%x, %s) {shift = 0.5 : f32} : (tensor<5x7xf32>, tensor<5xf32>) -> tensor<5x7xf32>
  %1 = "tdflow.relu"(%0) : (tensor<5x7xf32>) -> tensor<5x7xf32>
  return %1 : tensor<5x7xf32>
}
