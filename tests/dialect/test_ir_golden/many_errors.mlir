// All errors are reported, in source order, not just the first.
// ERROR: 11:21: use of undefined value '%nope'
// ERROR: 12:3: redefinition of SSA value '%a'
// NOTE: 10:3: previously defined here
// ERROR: 13:25: type mismatch: '%a' is used as tensor<2x8xf32> but defined as tensor<8x2xf32>
// NOTE: 12:3: '%a' defined here
// ERROR: 14:3: type of return operand #0 (tensor<8x2xf32>) does not match the function result type (tensor<2x8xf32>) of @mlp
// NOTE: 9:1: @mlp is declared here
func.func @mlp(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %a = "tdflow.relu"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %b = "tdflow.exp"(%nope) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %a = "tdflow.transpose"(%b) {perm = [1 : si32, 0 : si32]} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  %c = "tdflow.sigmoid"(%a) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %a : tensor<8x2xf32>
}
