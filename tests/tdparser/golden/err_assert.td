// A failing assert.
class C<int n> { assert !gt(n, 0), "n must be positive"; }
def X : C<0>;
