// A required template argument left out.
class C<int a, int b> { int v = !add(a, b); }
def X : C<1>;
