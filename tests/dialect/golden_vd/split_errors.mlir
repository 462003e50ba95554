// ARGS: verify --split-input-file
// MLIR-OPT: same outcome
// Each chunk is its own module (%x of the first is unknown in the second); errors are located
// in the whole file, and a broken chunk does not stop the next.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----
func.func @h(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relu"(%b) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
