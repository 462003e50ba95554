// A parent class that does not exist.
def X : Missing;
