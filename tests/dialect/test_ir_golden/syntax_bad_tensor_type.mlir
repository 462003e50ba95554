// ERROR: 2:18: bad dimension 'q' in 'tensor<4xqxf32>'; expected an integer or '?'
func.func @f(%x: tensor<4xqxf32>) {
  return
}
