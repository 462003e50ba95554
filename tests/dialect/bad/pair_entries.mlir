// max_pool_2d's stride is a pair (TDF_PairAttr, >= 1): three entries are an error
func.func @f(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32> {
  %0, %1 = "tdflow.max_pool_2d"(%x) {data_format = "channels_first", dilation = [1 : si32, 1 : si32], kernel_size = [2 : si32, 2 : si32], padding = [0 : si32, 0 : si32], stride = [2 : si32, 2 : si32, 2 : si32]} : (tensor<1x2x8x8xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xi64>)
  return %0 : tensor<1x2x4x4xf32>
}
