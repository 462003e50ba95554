// Unknown bang operator.
def X { int v = !frobnicate(1); }
