// pooling padding may be at most half the window
func.func @f(%x: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %y, %i = "tdflow.max_pool_2d"(%x) {data_format = "channels_first", dilation = [1 : si32, 1 : si32], kernel_size = [2 : si32, 2 : si32], padding = [2 : si32, 2 : si32], stride = [2 : si32, 2 : si32]} : (tensor<1x1x4x8xf32>) -> (tensor<1x1x4x6xf32>, tensor<1x1x4x6xi64>)
  return %x : tensor<1x1x4x8xf32>
}
