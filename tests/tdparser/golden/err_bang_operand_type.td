// bang operand type
def X { int a = !add(1, "s"); }
