// Reference to an undefined value.
def X { int v = nowhere; }
