// Plain syntax error: missing semicolon.
def X { int v = 1 }
