// ARGS: verify --split-input-file --verify-diagnostics
// MLIR-OPT: same outcome
// Every expected-* designator form, each matched: exit 0 from tdflow and mlir-opt-19 alike.
// "use of unde" is in both tools' wording ("undefined value", "undeclared SSA value name").
func.func @ok(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @plus_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{use of unde}}
  %0 = "tdflow.relu"(%y) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @minus_one_no_space(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relu"(%y) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error@-1 {{use of unde}}
  return %0 : tensor<4xf32>
}

// -----

func.func @same_line(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relu"(%y) : (tensor<4xf32>) -> tensor<4xf32> // expected-error {{use of unde}}
  return %0 : tensor<4xf32>
}

// -----

func.func @below(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error-re@below {{use of unde{{[a-z]+}}}}
  %0 = "tdflow.relu"(%y) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @above(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relu"(%y) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @above {{use of unde}}
  return %0 : tensor<4xf32>
}
