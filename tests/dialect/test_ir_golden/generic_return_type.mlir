// ERROR: 6:3: type of return operand #0 (tensor<4xf32>) does not match the function result type (tensor<*xf32>) of @g
// NOTE: 3:1: @g is declared here
"func.func"() <{function_type = (tensor<4xf32>) -> tensor<*xf32>, sym_name = "g"}> ({
^bb0(%arg0: tensor<4xf32>):
  %0 = "tdflow.relu"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  "func.return"(%0) : (tensor<4xf32>) -> ()
}) : () -> ()
