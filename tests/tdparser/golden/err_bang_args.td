// A bang operator with the wrong number of arguments.
def X { int v = !add(1); }
