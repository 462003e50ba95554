// ARGS: verify --split-input-file --verify-diagnostics
// MLIR-OPT: same outcome
// Mismatches: an unexpected error, an expectation never produced, a plain {{...}} whose text
// holds regex syntax (matched literally without -re), an expectation of the wrong kind.
func.func @unexpected(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relu"(%y) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @never(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{use of unde}}
  %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @literal(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relu"(%y) : (tensor<4xf32>) -> tensor<4xf32> // expected-error {{use of {{.*}}}}
  return %0 : tensor<4xf32>
}

// -----

func.func @wrong_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-warning @+1 {{use of unde}}
  %0 = "tdflow.relu"(%y) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
