// A small convolutional classifier, NCHW: 8 grey 28x28 images
//   conv 3x3 (8 filters, padding 1) -> bias -> ReLU -> 2x2 max pool -> flatten -> dense 10 -> softmax.
// Result types left as `?`/`*` are refined by the infer-shapes pass.
// Run it with random weights:  tdflow run examples/cnn.mlir
module {
  func.func @cnn(%x: tensor<8x1x28x28xf32>, %k: tensor<8x1x3x3xf32>, %kb: tensor<8xf32>,
                 %w: tensor<1568x10xf32>, %b: tensor<10xf32>) -> tensor<8x10xf32> {
    %0 = "tdflow.conv2d"(%x, %k) {operandSegmentSizes = array<i32: 1, 1, 0, 0>, filters = 8 : si32,
          padding_before = [1, 1], data_format = "channels_first", kernel_size = [3, 3],
          strides = [1, 1], dilation_rate = [1, 1], groups = 1 : si32}
        : (tensor<8x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<8x8x28x28xf32>
    %1 = "tdflow.bias_add"(%0, %kb) {axis = 1 : si32} : (tensor<8x8x28x28xf32>, tensor<8xf32>) -> tensor<8x8x28x28xf32>
    %2 = "tdflow.relu"(%1) : (tensor<8x8x28x28xf32>) -> tensor<8x8x28x28xf32>
    %3, %4 = "tdflow.max_pool_2d"(%2) {padding = [0, 0], data_format = "channels_first",
          kernel_size = [2, 2], stride = [2, 2], dilation = [1, 1]}
        : (tensor<8x8x28x28xf32>) -> (tensor<8x8x14x14xf32>, tensor<8x8x14x14xi64>)
    %5 = "tdflow.reshape"(%3) {shape = [8, 1568]} : (tensor<8x8x14x14xf32>) -> tensor<8x?xf32>
    %6 = "tdflow.matmul"(%5, %w) : (tensor<8x?xf32>, tensor<1568x10xf32>) -> tensor<*xf32>
    %7 = "tdflow.bias_add"(%6, %b) {axis = 1 : si32} : (tensor<*xf32>, tensor<10xf32>) -> tensor<8x10xf32>
    %8 = "tdflow.softmax"(%7) : (tensor<8x10xf32>) -> tensor<8x10xf32>
    return %8 : tensor<8x10xf32>
  }
}
