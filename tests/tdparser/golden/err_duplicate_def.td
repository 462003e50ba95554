// The same def twice.
def X;
def X;
