// max_pool_2d has two results (y, indice)
func.func @f(%x: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %0 = "tdflow.max_pool_2d"(%x) {data_format = "channels_first", dilation = [1 : si32, 1 : si32], kernel_size = [2 : si32, 2 : si32], padding = [0 : si32, 0 : si32], stride = [2 : si32, 2 : si32]} : (tensor<1x1x4x8xf32>) -> tensor<1x1x2x4xf32>
  return %x : tensor<1x1x4x8xf32>
}
