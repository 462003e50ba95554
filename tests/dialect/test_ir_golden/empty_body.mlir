// ERROR: 2:1: function @f must end with 'return' (found an empty body)
func.func @f() {
}
