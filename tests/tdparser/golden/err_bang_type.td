// A bang operator with a wrongly typed argument.
def X { int v = !head(3); }
