func.func @f(%x: tensor<5x7xf32>, %lim: tensor<7xf32>) -> (tensor<5xf32>, tensor<5x7xf32>, tensor<5x7xf32>) {
  %0 = "hq.soft_clip"(%x, %lim) {alpha = 2.0 : f32, beta = 0.25 : f32} : (tensor<5x7xf32>, tensor<7xf32>) -> tensor<5x7xf32>
  %1:2 = "hq.split_pos"(%0) {scale = 3.0 : f32} : (tensor<5x7xf32>) -> (tensor<5x7xf32>, tensor<5x7xf32>)
  %2 = "tdflow.relu"(%0) : (tensor<5x7xf32>) -> tensor<5x7xf32>
  %3 = "hq.row_sum_plus"(%1#0) {shift = 0.5 : f32} : (tensor<5x7xf32>) -> tensor<5xf32>
  return %3, %1#1, %2 : tensor<5xf32>, tensor<5x7xf32>, tensor<5x7xf32>
}
