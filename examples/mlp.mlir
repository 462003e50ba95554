// Forward pass of a two-layer perceptron with a softmax head:
//   64 images of 28x28 = 784 pixels -> 256 hidden units (ReLU) -> 10 class probabilities.
// Run it with random weights:  tdflow run examples/mlp.mlir
// See the lowered plan:         tdflow lower examples/mlp.mlir
module {
  func.func @mlp(%x: tensor<64x784xf32>, %w1: tensor<784x256xf32>, %b1: tensor<256xf32>,
                 %w2: tensor<256x10xf32>, %b2: tensor<10xf32>) -> tensor<64x10xf32> {
    %0 = "tdflow.matmul"(%x, %w1) : (tensor<64x784xf32>, tensor<784x256xf32>) -> tensor<64x256xf32>
    %1 = "tdflow.bias_add"(%0, %b1) {axis = 1 : si32} : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
    %2 = "tdflow.relu"(%1) : (tensor<64x256xf32>) -> tensor<64x256xf32>
    %3 = "tdflow.matmul"(%2, %w2) : (tensor<64x256xf32>, tensor<256x10xf32>) -> tensor<64x10xf32>
    %4 = "tdflow.bias_add"(%3, %b2) {axis = 1 : si32} : (tensor<64x10xf32>, tensor<10xf32>) -> tensor<64x10xf32>
    %5 = "tdflow.softmax"(%4) : (tensor<64x10xf32>) -> tensor<64x10xf32>
    return %5 : tensor<64x10xf32>
  }
}
