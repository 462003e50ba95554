// ERROR: 5:3: expected ':' and the function type of 'tdflow.relu', like ': (tensor<4xf32>) -> tensor<4xf32>', found 'return'
// Syntax errors stop the parse: only the first is reported.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relu"(%x) {alpha = 1.0}
  return %0 : tensor<4xf32>
}
