// unterminated string
def X { int v = "unterminated; }
