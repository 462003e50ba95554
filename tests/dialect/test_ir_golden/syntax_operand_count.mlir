// ERROR: 3:31: 'tdflow.add' has 2 operand(s) but its type lists 1 operand type(s)
func.func @f(%x: tensor<4xf32>) {
  %0 = "tdflow.add"(%x, %x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
