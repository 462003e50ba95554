// Too many template arguments.
class C<int a> { int v = a; }
def X : C<1, 2>;
