// Field type mismatch in a declaration.
def X { bits<2> b = 7; }
