// Division by zero while folding.
def X { int v = !div(1, 0); }
