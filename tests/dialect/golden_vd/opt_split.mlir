// ARGS: opt --split-input-file
// MLIR-OPT: same outcome
// The outputs are separated by marker lines; a chunk that fails prints nothing.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
// -----
func.func @bad(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %y : tensor<4xf32>
}
// -----
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
