// bias_add's axis is an axis of 'a' (TDF_AxisAttr<"a">): 2 is out of range for rank 2
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.bias_add"(%a, %b) {axis = 2 : si32} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
